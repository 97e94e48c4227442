"""Issue 22, item 2 ("a file name with a lone surrogate in validate"), over the kind
"text that cannot be encoded reaches the terminal".

Found by the issue-22 audit: ``validate ancient-bench`` on a ``conv.jsonl`` whose image
name is the JSON escape ``"bad\\ud800.jpg"`` ended in a ``UnicodeEncodeError`` traceback
when it printed the finding (the run loader already made it that sample's error). Now
``validate`` words it as ``run`` does (``'image' holds a lone surrogate (U+D800)``), and
the rule for anything else printed lives in the one place every printed line passes, the
redacting stream (``core/redact.py``): a lone surrogate is printed as U+FFFD, a character
the stream's encoding lacks as a backslash escape; nothing raises.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.cli.main import main
from heritage_eval.core.redact_streams import RedactingStream

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"

#: lone surrogates: the two ends of each half and one from the middle
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\udc80"]
#: text without anything the redactor masks (no key-like words), with CJK
plain = st.text(alphabet="ab 永樂。\n:/", max_size=30)


def _by_hand(text: str) -> str:
    """Each code point U+D800..U+DFFF replaced by U+FFFD, one for one (the rule)."""
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.one_of(plain, st.sampled_from(SURROGATES)), max_size=8))
def test_any_text_is_written_with_surrogates_replaced(parts: list[str]) -> None:
    text = "".join(parts)
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="")
    assert RedactingStream(stream).write(text) == len(text)
    stream.flush()
    assert raw.getvalue().decode("utf-8") == _by_hand(text)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_narrow_encoding_gets_escapes_not_a_traceback(encoding: str) -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict", newline="")
    RedactingStream(stream).write("a永\ud800b")
    stream.flush()
    # 永 is U+6C38 and U+FFFD replaces the surrogate; neither is in ascii or latin-1
    assert raw.getvalue().decode(encoding) == "a\\u6c38\\ufffdb"


def _collection(tmp_path: Path, where: str, surrogate: str) -> Path:
    """The seals category of the demo with ``surrogate`` in ``where``: the image name or
    the transcription of line 1 (as a JSON escape), or the name of an extra folder (as
    undecodable bytes, which Python reads back as a lone surrogate)."""
    root = tmp_path / "ab"
    (root / "seals").mkdir(parents=True)
    shutil.copytree(DEMO / "seals" / "images", root / "seals" / "images")
    lines = (DEMO / "seals" / "conv.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    if where == "folder":
        os.mkdir(os.fsencode(root / "seals") + b"/x\xed\xa0\x80")
    elif where == "unlisted":  # an image no line names: its name is printed
        shutil.copy(root / "seals" / "images" / first["image"],
                    os.fsencode(root / "seals" / "images") + b"/x\xed\xa0\x80.jpg")
    else:
        first["image" if where == "image" else "human_gt"] += surrogate
    # ensure_ascii writes the surrogate as its escape, valid JSON
    lines[0] = json.dumps(first)
    (root / "seals" / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("surrogate", SURROGATES)
@pytest.mark.parametrize("where", ["image", "human_gt", "folder", "unlisted"])
def test_validate_prints_every_finding_without_a_traceback(
        where: str, surrogate: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = _collection(tmp_path, where, surrogate)
    rc = main(["validate", "ancient-bench", "--data", str(root), "--no-progress",
               "--json", str(tmp_path / "report.json")])
    said = capsys.readouterr()
    assert rc in (0, 1), said.err[-2000:]
    assert "Traceback" not in said.out + said.err
    if where == "image":  # named as run names it, by its code point
        assert (f"conv.jsonl:1: error[image-field]: 'image' holds a lone surrogate "
                f"(U+{ord(surrogate):04X}): not a usable file name") in said.out
    if where == "unlisted":  # the undecodable bytes are printed, as U+FFFD
        line = next(x for x in said.out.splitlines() if "image-unlisted" in x)
        assert "warning[image-unlisted]" in line and "x\ufffd\ufffd\ufffd.jpg" in line
