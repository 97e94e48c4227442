"""A ground-truth line over the line-size cap keeps its image's name (issue 22, item 10):
its error row is named after the image, and ``export predictions`` writes that image's
prediction file (empty answer), so the official evaluator finds one file per
ground-truth line. Expected names are the ``image`` fields written by the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.ancient_bench.loader import image_in_head, iter_category
from heritage_eval.core.sizecap import LONG_LINE_HEAD, MAX_LINE

#: file names the loader accepts (core/unicode_text.unusable_file_name: no NUL, no lone
#: surrogate), control characters and quotes included (json.dumps escapes them)
NAMES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                min_size=1, max_size=60).filter(lambda s: s.strip()).map(lambda s: s + ".jpg")


@settings(max_examples=150, deadline=None)
@given(name=NAMES, pad=st.integers(0, 3 * LONG_LINE_HEAD), first=st.booleans(),
       spaces=st.sampled_from(["", " ", "  "]))
def test_the_image_field_is_read_from_the_head_of_a_long_line(name: str, pad: int,
                                                              first: bool, spaces: str) -> None:
    # the line as json.dumps writes it (escapes included), cut to the kept head; the
    # image field first or after a short field, as conv.jsonl lines are written
    ascii_only = bool(pad % 2)
    image = f'"image":{spaces}{json.dumps(name, ensure_ascii=ascii_only)}'
    target = f'"human_gt": {json.dumps("字" * pad, ensure_ascii=ascii_only)}'
    line = "{" + (f"{image}, {target}" if first else f'"id": 7, {image}, {target}') + "}"
    assert image_in_head(line.encode("utf-8")[:LONG_LINE_HEAD]) == name


@pytest.mark.parametrize("head, expected", [
    (b'{"human_gt": "x", "image": "a.jpg"', "a.jpg"),  # after the target, within the head
    (b'{"image": "a\\u0000.jpg", "human_gt": "', None),  # a NUL: not a usable file name
    (b'{"image": "", "human_gt": "', None),  # empty
    (b'{"image": 5, "human_gt": "', None),  # not a string
    (b'{"human_gt": "\\"image\\": \\"x.jpg\\"', None),  # inside another string
    (b'{"image": "cut-in-the-mid', None),  # the name itself cut off
    (b'{"image": "a\\ud800.jpg"}', None),  # a lone surrogate
])
def test_no_name_when_the_head_does_not_hold_a_usable_one(head: bytes,
                                                          expected: str | None) -> None:
    assert image_in_head(head) == expected


def _release(root: Path) -> Path:
    seals = root / "seals"
    (seals / "images").mkdir(parents=True)
    lines = [{"image": "seals_000001.jpg", "human_gt": "長樂"},
             {"image": "seals_000002.jpg", "human_gt": "壽" * 400},  # over the cap below
             {"image": "seals_000003.jpg", "human_gt": "千秋"}]
    (seals / "conv.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return root


def test_long_line_sample_is_named_after_its_image(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_LINE.env, "200")
    samples = list(iter_category(_release(tmp_path) / "seals", check_images=False))
    assert [s.id for s in samples] == ["seals/seals_000001", "seals/seals_000002",
                                       "seals/seals_000003"]
    long = samples[1]
    assert long.load_error and "max_line_bytes" in long.load_error
    assert long.metadata["image_name"] == "seals_000002.jpg"


def test_export_writes_a_file_for_the_long_line(tmp_path: Path) -> None:
    root = _release(tmp_path / "gt")
    preds = tmp_path / "preds" / "m" / "seals" / "results"
    preds.mkdir(parents=True)
    for stem in ("seals_000001", "seals_000003"):
        (preds / f"{stem}.json").write_text('{"answer": "長樂"}', encoding="utf-8")
    env = {**os.environ, MAX_LINE.env: "200"}
    cli = [str(Path(sys.executable).with_name("heritage-eval"))]
    scored = subprocess.run([*cli, "score", "ancient-bench", "--data", str(root),
                             "--predictions", str(tmp_path / "preds"),
                             "--out", str(tmp_path / "run")],
                            env=env, capture_output=True, text=True, timeout=300)
    assert scored.returncode == 0, scored.stderr
    out = tmp_path / "exported"
    # the export reads the run's own samples.jsonl: with the default line cap
    done = subprocess.run([*cli, "export", "predictions", str(tmp_path / "run"),
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in out.rglob("*.json"))
    # one file per ground-truth line: the long line's own (an empty answer) included
    assert files == ["seals_000001.json", "seals_000002.json", "seals_000003.json"]
    written = next(out.rglob("seals_000002.json")).read_text(encoding="utf-8")
    assert json.loads(written) == {"answer": ""}
