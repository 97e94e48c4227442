"""Issue 22, items 2 and 4: every size cap, per kind of input, with small caps set through
the documented environment variables (docs/limits.md) so the inputs stay small.

JSONL lines here; zip members, HTTP bodies, PNG text chunks and export images in
``test_size_caps_io.py``. Expected values are worked out by hand in the comments, or
come from ``bytes.split`` as the independent reference for line splitting.
"""

from __future__ import annotations

import io
import json
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from heritage_eval.benchmarks.ancient_bench.loader import load_category
from heritage_eval.benchmarks.ancient_bench.predictions import read_prediction
from heritage_eval.benchmarks.muse.questions import (
    Question,
    QuestionFileError,
    QuestionFileHeader,
    QuestionTurn,
    read_questions,
    write_questions,
)
from heritage_eval.benchmarks.muse.run import load_question_set
from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.records_io import read_records
from heritage_eval.core.sizecap import (
    MAX_LINE,
    MIB,
    LongLine,
    copy_capped,
    iter_lines,
    parse_size,
)
from heritage_eval.core.types import Outcome
from heritage_eval.curate.validate.ancient_bench import validate_release
from tests.fake_server import chat_reply, fake_openai_server

ENV = MAX_LINE.env


# ---- the rule itself: iter_lines against bytes.split ----------------------------------

@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"x")), min_size=1,
                max_size=8),
       st.booleans(), st.integers(min_value=1, max_value=10))
def test_iter_lines_matches_split_and_caps_each_line(parts: list[bytes], final_newline: bool,
                                                     cap: int) -> None:
    data = b"\n".join(parts) + (b"\n" if final_newline else b"")
    got = list(iter_lines(io.BytesIO(data), "f.jsonl", cap))
    # reference: bytes.split; a trailing newline leaves one empty last piece (no line)
    ref = data.split(b"\n")
    if ref[-1] == b"":
        ref.pop()
    assert [n for n, _ in got] == list(range(1, len(ref) + 1))
    for (lineno, line), want in zip(got, ref, strict=True):
        if len(want) > cap:
            assert isinstance(line, LongLine) and line.size == len(want)
            assert line.error.startswith(f"f.jsonl:{lineno}: line ({len(want)} bytes)")
            assert f"max_line_bytes cap of {cap} bytes" in line.error and ENV in line.error
        else:
            assert isinstance(line, bytes) and line.rstrip(b"\n") == want


@pytest.mark.parametrize(("text", "value"), [
    ("64MiB", 64 * MIB), ("64m", 64 * MIB), ("1 GiB", 1 << 30), ("512", 512),
    ("2K", 2048), ("3kb", 3072), ("10B", 10), ("0", None), ("-1", None), ("lots", None),
    ("1.5M", None), ("", None)])
def test_parse_size_grid(text: str, value: int | None) -> None:
    assert parse_size(text) == value  # binary units, worked out by hand


def test_a_bad_setting_keeps_the_default(monkeypatch: pytest.MonkeyPatch,
                                         caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(ENV, "a lot")
    assert MAX_LINE.value() == 64 * MIB
    assert ENV in caplog.text


def test_one_huge_line_is_never_held(tmp_path: Path) -> None:
    # 16 MiB line under a 4 KiB cap: the reader holds one 256 KiB skip chunk at a time
    path = tmp_path / "big.jsonl"
    with path.open("wb") as fh:
        fh.write(b'{"a": 1}\n')
        for _ in range(16):
            fh.write(b"x" * MIB)
        fh.write(b'\n{"b": 2}\n')
    tracemalloc.start()
    with path.open("rb") as fh:
        got = list(iter_lines(fh, str(path), 4096))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 * MIB  # an eighth of the line; reading it whole would be 16 MiB
    assert [type(x).__name__ for _, x in got] == ["bytes", "LongLine", "bytes"]
    assert isinstance(got[1][1], LongLine) and got[1][1].size == 16 * MIB


def test_copy_capped_stops_an_endless_stream() -> None:
    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
            b[:] = bytes(len(b))
            return len(b)

    out = io.BytesIO()
    with pytest.raises(Exception, match=r"more than 1,000 bytes\) is over the "
                                        r"max_zip_member cap of 1,000 bytes"):
        from heritage_eval.core.sizecap import MAX_ZIP_MEMBER
        copy_capped(io.BufferedReader(Endless()), out, MAX_ZIP_MEMBER, "z", "data", 1000)
    assert len(out.getvalue()) <= 1000  # nothing past the cap was written


# ---- each JSONL reader: one error naming file:line, the other lines read --------------

LONG = '{"image": "long.png", "human_gt": "' + "長" * 400 + '"}'  # 1,237 bytes


def _release(tmp_path: Path) -> Path:
    folder = tmp_path / "release" / "stele"
    folder.mkdir(parents=True)
    for name, colour in (("a.png", "white"), ("b.png", "red"), ("long.png", "blue")):
        Image.new("RGB", (24, 24), colour).save(folder / name)  # distinct requests
    (folder / "conv.jsonl").write_text(
        '{"image": "a.png", "human_gt": "天地"}\n' + LONG + '\n'
        '{"image": "b.png", "human_gt": "玄黃"}\n', encoding="utf-8")
    return tmp_path / "release"


def test_ancient_bench_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1KiB")
    folder = _release(tmp_path) / "stele"
    samples = load_category(folder)
    # the long line's row is named after its image (read from the line's head), as the
    # same line is when the cap is raised
    assert [s.id for s in samples] == ["stele/a", "stele/long", "stele/b"]
    assert samples[0].load_error is None and samples[2].load_error is None
    # 400 x 3 bytes of 長 + 37 bytes of JSON around them = 1,237 bytes
    assert samples[1].load_error == (
        f"{folder / 'conv.jsonl'}:2: line (1,237 bytes (1.208 KiB)) is over the "
        f"max_line_bytes cap of 1,024 bytes (1 KiB); raise it with {ENV}=N "
        "(see docs/limits.md)")
    monkeypatch.setenv(ENV, "2KiB")  # raised: the line loads
    assert [s.id for s in load_category(folder)] == ["stele/a", "stele/long", "stele/b"]


def test_validate_ancient_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1KiB")
    root = _release(tmp_path)
    report = validate_release(root, progress=False)
    long = [f for f in report.findings if f.code == "line-too-long"]
    assert [(f.level, f.line) for f in long] == [("error", 2)]
    assert long[0].message.startswith("line (1,237 bytes (1.208 KiB)) is over the "
                                      "max_line_bytes cap")
    assert report.checked["lines"] == 3  # lines 1 and 3 checked as usual


def test_ancient_bench_run_scores_the_other_lines_and_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1KiB")
    data, out = _release(tmp_path), tmp_path / "run"
    cmd = ["run", "ancient-bench", "--data", str(data), "--model", "openai:vlm",
           "--retries", "0", "--out", str(out)]
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("天地")
        assert main([*cmd, "--base-url", srv.base_url]) == 0
        assert len(srv.requests) == 2
        rows = [json.loads(x) for x in (out / "samples.jsonl").open(encoding="utf-8")]
        assert [r["state"] for r in rows] == ["scored", "error", "scored"]
        assert "conv.jsonl:2: line (1,237 bytes" in rows[1]["error"]
        assert main([*cmd, "--base-url", srv.base_url]) == 0  # resume: nothing new sent
        assert len(srv.requests) == 2


def _record(rid: str) -> str:
    return SampleRecord.model_validate({"id": rid, "benchmark": "toy", "model": "m",
                                        "state": "scored"}).to_json_line()


def test_samples_jsonl_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "2KiB")
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join([_record("a"), _record("b" * 3000), _record("c")]) + "\n",
                    encoding="utf-8")
    warnings: list[str] = []
    assert [r.id for r in read_records(path, warnings)] == ["a", "c"]
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}:2: line (")
    assert "max_line_bytes cap of 2,048 bytes (2 KiB)" in warnings[0]


def _question(qid: str) -> str:
    turn = QuestionTurn(task="object_count", prompt="How many? [count] <n>",
                        answer_format="number", tag="count", answer=1)
    return json.dumps(Question(id=qid, image_id="img", turns=[turn]).model_dump(mode="json"))


def test_muse_question_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "2KiB")
    path = tmp_path / "q.jsonl"
    write_questions(path, QuestionFileHeader(generator_version="t", seed=0,
                                             tasks=["object_count"]), [])
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n".join([_question("q1"), _question("q" * 3000), _question("q3")]) + "\n")
    qs = load_question_set(path)  # tolerant: one error row, the others run
    assert [q.id for q in qs.questions] == ["q1", "q3"]
    assert qs.bad_lines == [3]
    assert qs.bad[0].state == Outcome.ERROR
    reason = str(qs.bad[0].reason)
    assert reason.startswith(f"{path}:3: line (")
    assert f"max_line_bytes cap of 2,048 bytes (2 KiB); raise it with {ENV}=N" in reason
    with pytest.raises(QuestionFileError, match=rf"q.jsonl:3: line \(.* {ENV}=N"):
        read_questions(path)  # strict reader: the same message, raised


def test_prediction_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "100")
    small, big = tmp_path / "a.json", tmp_path / "b.json"
    small.write_text('{"answer": "天"}', encoding="utf-8")
    big.write_text(json.dumps({"answer": "x" * 200}), encoding="utf-8")
    assert read_prediction(small).answer == "天"
    got = read_prediction(big)
    assert got.answer is None and got.error == (
        f"{big}: prediction file (more than 100 bytes) is over the max_line_bytes cap of "
        f"100 bytes; raise it with {ENV}=N (see docs/limits.md)")


def test_a_real_huge_line_under_the_default_cap_is_quick(tmp_path: Path) -> None:
    # 70 MiB of one line against the 64 MiB default: refused, read past in chunks
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:
        for _ in range(70):
            fh.write(b"y" * MIB)
        fh.write(b'\n{"image": "a.png", "human_gt": "x"}\n')
    start = time.perf_counter()
    with path.open("rb") as fh:
        kinds = [type(x).__name__ for _, x in iter_lines(fh, str(path))]
    assert kinds == ["LongLine", "bytes"] and time.perf_counter() - start < 10
