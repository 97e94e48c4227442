"""Issue 10, item 16 (MUSE question file): bad lines are rejected one by one.

Kinds guarded against: a choice answer that is none of the options, or a negative count,
accepted (and then scored); one non-UTF-8 byte stopping the whole run without naming the
line. Each bad line must become an error record naming ``file:line`` and the reason, and
every other question must still run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileError,
    QuestionFileHeader,
    QuestionTurn,
    read_questions,
    write_questions,
)
from heritage_eval.benchmarks.muse.run import load_question_set


def _choice(qid: str, answer: str) -> dict[str, Any]:
    opts = [OptionRecord(label=lab, text=t, distractor_type="correct" if lab == "B" else "x")
            for lab, t in (("A", "church"), ("B", "garden"))]
    turn = QuestionTurn(task="scene_classification", prompt="Which scene? [option] <A-B>",
                        answer_format="choice", tag="option", options=opts, answer="B")
    q = Question(id=qid, image_id=qid, turns=[turn])
    data = q.model_dump(mode="json")
    data["turns"][0]["answer"] = answer  # written by hand, as a broken file would be
    return data


def _count(qid: str, answer: Any) -> dict[str, Any]:
    turn = QuestionTurn(task="object_count", prompt="How many? [count] <n>",
                        answer_format="number", tag="count", answer=1)
    data = Question(id=qid, image_id=qid, turns=[turn]).model_dump(mode="json")
    data["turns"][0]["answer"] = answer
    return data


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "q.jsonl"
    write_questions(path, QuestionFileHeader(generator_version="t", seed=0,
                                             tasks=["scene_classification", "object_count"]),
                    [])
    lines = [json.dumps(_choice("good", "B")).encode(),                # line 2
             json.dumps(_choice("bad-label", "Z")).encode(),           # line 3
             json.dumps(_count("bad-count", -3)).encode(),             # line 4
             json.dumps(_count("ok-count", 2), ensure_ascii=False).replace(
                 '"ok-count"', '"ok-\xe9"').encode("latin-1"),         # line 5: byte 0xe9
             json.dumps(_count("good-count", 4)).encode()]             # line 6
    path.write_bytes(path.read_bytes() + b"\n".join(lines) + b"\n")
    return path


def test_bad_lines_become_error_rows_naming_the_line(tmp_path: Path) -> None:
    path = _file(tmp_path)
    qs = load_question_set(path)
    assert [q.id for q in qs.questions] == ["good", "good-count"]
    assert qs.bad_lines == [3, 4, 5]
    reasons = [row.reason for row in qs.bad]
    assert reasons == [
        f"{path}:3: question rejected: turns.0: choice answer 'Z' is not among the option "
        "labels (A, B)",
        f"{path}:4: question rejected: turns.0: count answer -3 is negative (a count is >= 0)",
        # the line starts '{"kind": "question", "id": "ok-' (31 bytes): é (0xe9) is byte 32
        f"{path}:5: line is not valid UTF-8 (byte 0xe9 at byte 32 of the line)"]
    assert [row.question_id for row in qs.bad] == ["bad-label", "bad-count", "q.jsonl:5"]


def test_strict_reader_names_the_line(tmp_path: Path) -> None:
    # kind: the strict reader (muse analyze) raised a bare UnicodeDecodeError
    with pytest.raises(QuestionFileError, match=r"q\.jsonl:3: turns\.0: choice answer 'Z'"):
        read_questions(_file(tmp_path))
    path = tmp_path / "q.jsonl"
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([lines[0], lines[4]]) + b"\n")
    with pytest.raises(QuestionFileError, match=r"q\.jsonl:2: line is not valid UTF-8"):
        read_questions(path)


@pytest.mark.parametrize(("fmt", "answer", "message"), [
    ("number", 2.5, "count answer 2.5 is not a whole number"),
    ("number", True, "count answer True is not a whole number"),
    ("position", {"lateral": "left", "depth": "back"}, "position answer"),
])
def test_other_impossible_keys(fmt: str, answer: Any, message: str) -> None:
    # kind: a key no answer can match silently scoring every model 0
    with pytest.raises(ValidationError, match=message):
        QuestionTurn(task="t", prompt="p", answer_format=fmt, answer=answer)  # type: ignore[arg-type]


def test_run_goes_on_with_error_records(tmp_path: Path) -> None:
    from heritage_eval.cli.main import main

    out = tmp_path / "run"
    assert main(["run", "muse", "--questions", str(_file(tmp_path)), "--model",
                 "baseline:random", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    errors = [r for r in rows if r["state"] == "error"]
    assert len(errors) == 3 and len(rows) == 5
    assert sorted(r["error"].split(": ", 1)[0].rsplit(":", 1)[1] for r in errors) == [
        "3", "4", "5"]


def test_a_truncated_line_names_its_column_on_that_line(tmp_path: Path) -> None:
    # '{"kind": "question", "id": "x"' (30 characters) ends before its closing brace: the
    # parser stops after column 30, on this line (not "line 2 column 1", the newline's)
    path = _file(tmp_path)
    path.write_bytes(path.read_bytes() + b'{"kind": "question", "id": "x"\n')
    qs = load_question_set(path)
    assert qs.bad[-1].reason == (
        f"{path}:7: question rejected: malformed JSON (Expecting ',' delimiter at column 31)")


def test_a_missing_question_file_is_named_with_the_command_that_writes_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from heritage_eval.cli.main import main

    absent = tmp_path / "question.jsonl"
    assert main(["run", "muse", "--questions", str(absent), "--model", "baseline:random",
                 "--out", str(tmp_path / "out")]) == 2
    assert f"--questions {absent}: no such file (write one with 'heritage-eval muse " \
        "generate')" in capsys.readouterr().err


def test_an_image_reference_holding_nul_or_a_lone_surrogate_is_rejected(tmp_path: Path
                                                                        ) -> None:
    # "@images/x\u0000.jpg" and "@images/\udcff.jpg" cannot name a file (looking the path
    # up crashed the run): each question is rejected, naming its line and the reason
    path = _file(tmp_path)
    bad = [_count("nul", 2), _count("sur", 2)]
    bad[0]["turns"][0]["images"] = ["@images/x\u0000.jpg"]
    bad[1]["turns"][0]["images"] = ["@images/\udcff.jpg"]
    path.write_bytes(path.read_bytes() + b"".join(json.dumps(q).encode() + b"\n"
                                                  for q in bad))
    reasons = [row.reason for row in load_question_set(path).bad]
    assert f"{path}:7: question rejected: turns.0: image reference '@images/x\\x00.jpg' " \
        "holds a NUL character" in reasons
    assert f"{path}:8: question rejected: turns.0: image reference '@images/\\udcff.jpg' " \
        "holds a lone surrogate (U+DCFF)" in reasons
