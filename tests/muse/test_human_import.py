"""``muse import-human`` on the bundled demo (``data/demo/muse``: questions generated here,
the shipped ``human_answers_example.csv``): the CSV's SHA-256 is part of the run
configuration (another CSV into the same ``--out`` is refused without ``--overwrite``,
with a message that names no ``--resume``), and turns are 0-based (a 1-based file is
refused; ``--help`` says so).

Expected counts are read from the CSVs written here: an import scores exactly the answered
turns, so the number of records equals the number of answer rows.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from heritage_eval.cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "muse"
DIALOGUE = "market:affective_dialogue:0"  # four turns (tasks 1-4), demo README


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("muse") / "questions.jsonl"
    assert main(["muse", "generate", "--annotations", str(DEMO / "annotations.json"),
                 "--images", str(DEMO), "--out", str(out), "--no-progress"]) == 0
    return out


def _records(run: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text("utf-8").splitlines()]


def _import(questions: Path, answers: Path, out: Path, *extra: str) -> int:
    return main(["muse", "import-human", "--questions", str(questions), "--answers",
                 str(answers), "--out", str(out), *extra])


def test_another_csv_into_the_same_out_is_refused(questions: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    one = tmp_path / "one.csv"
    one.write_text(f"question_id,turn,answer\n{DIALOGUE},0,A\n", encoding="utf-8")
    two = tmp_path / "two.csv"
    two.write_text(f"question_id,turn,answer\n{DIALOGUE},0,A\n{DIALOGUE},1,K\n",
                   encoding="utf-8")
    out = tmp_path / "human"
    assert _import(questions, one, out) == 0
    assert len(_records(out)) == 1
    before = (out / "samples.jsonl").read_bytes()
    # before the fix: exit 0 and the run silently became the other CSV's
    assert _import(questions, two, out) == 2
    err = capsys.readouterr().err
    assert "human_answers_sha256" in err and "--overwrite" in err
    assert "--resume to" not in err and "has no --resume" in err
    assert (out / "samples.jsonl").read_bytes() == before  # nothing changed
    # another --name: refused the same way (the engine's message offered --resume)
    assert _import(questions, one, out, "--name", "annotator-2") == 2
    err = capsys.readouterr().err
    assert "'human:annotator-2' now" in err and "--resume to" not in err
    # the same CSV again is the same configuration; --overwrite replaces the run
    assert _import(questions, one, out) == 0
    assert _import(questions, two, out, "--overwrite") == 0
    assert len(_records(out)) == 2  # two answer rows: turns 0 and 1
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["provenance"]["human_answers_sha256"] == \
        hashlib.sha256(two.read_bytes()).hexdigest()


def test_one_based_turns_are_refused(questions: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "one_based.csv"
    bad.write_text("question_id,turn,answer\n" + "".join(
        f"{DIALOGUE},{t},A\n" for t in (1, 2, 3, 4)), encoding="utf-8")
    out = tmp_path / "h"
    assert _import(questions, bad, out) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: question {DIALOGUE} is answered on turns 1 to 4" in err
    assert "turns are 0-based (0 to 3)" in err
    assert not out.exists()
    # turns 1..3 alone fit the 0-based range: accepted (answers of tasks 2-4)
    part = tmp_path / "part.csv"
    part.write_text("question_id,turn,answer\n" + "".join(
        f"{DIALOGUE},{t},A\n" for t in (1, 2, 3)), encoding="utf-8")
    assert _import(questions, part, out) == 0
    assert {r["id"] for r in _records(out)} == {f"{DIALOGUE}#{t}" for t in (1, 2, 3)}
    # a turn past the end names the 0-based range
    bad.write_text(f"question_id,turn,answer\n{DIALOGUE},0,A\n{DIALOGUE},4,A\n",
                   encoding="utf-8")
    assert _import(questions, bad, tmp_path / "h2") == 2
    assert f"{bad}:3: turn '4' of {DIALOGUE}: expected 0 to 3 (turns are 0-based" in \
        capsys.readouterr().err


def test_help_says_zero_based_and_is_wrapped(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["muse", "import-human", "--help"])
    text = capsys.readouterr().out
    assert "Turns are 0-based" in text and "turn, 0-based" in " ".join(text.split())
    assert max(len(line) for line in text.splitlines()) <= 100
