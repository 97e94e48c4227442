"""``score ancient-bench``: prediction files no ground-truth line names (ignored, counted
and warned about), model folders without any prediction file (left out or refused), and
one account of the official evaluator in ``--help`` and on the console
(docs/how-to/score-predictions.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.ancient_bench.console import missing_line
from heritage_eval.benchmarks.ancient_bench.score_command import add_score_args
from heritage_eval.cli.main import main

GT = {"seals": [("a", "王印"), ("b", "平舆")], "calligraphys": [("k", "永和")]}


def _release(root: Path) -> Path:
    for cat, rows in GT.items():
        (root / "gt" / cat).mkdir(parents=True)
        (root / "gt" / cat / "conv.jsonl").write_text("".join(
            json.dumps({"image": f"{s}.png", "human_gt": t}, ensure_ascii=False) + "\n"
            for s, t in rows), encoding="utf-8")
    return root / "gt"


def _model(root: Path, model: str, files: dict[str, str]) -> Path:
    """Write ``files`` (``<category>/results/<name>`` -> answer) for ``model``."""
    folder = root / "pred" / model
    folder.mkdir(parents=True, exist_ok=True)
    for rel, answer in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"answer": answer}, ensure_ascii=False), encoding="utf-8")
    return folder


ALL_GOOD = {"seals/results/a.json": "王印", "seals/results/b.json": "平舆",
            "calligraphys/results/k.json": "永和"}


def _score(root: Path, *extra: str) -> tuple[int, Path]:
    out = root / "out"
    rc = main(["score", "ancient-bench", "--data", str(root / "gt"), "--predictions",
               str(root / "pred"), "--out", str(out), *extra])
    return rc, out


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_files_without_a_ground_truth_line_are_counted_and_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: seals_999999.json (and the like) ignored without a word
    _release(tmp_path)
    _model(tmp_path, "m1", {**ALL_GOOD, "seals/results/seals_999999.json": "x",
                            "seals/results/sub/a.json": "x",  # not results/a.json
                            "calligraphys/results/z.json": "x"})
    (tmp_path / "pred" / "m1" / "seals" / "results" / "notes.txt").write_text("x")
    _model(tmp_path, "m2", ALL_GOOD)
    # a folder of a medium not scored (--categories) is not looked at
    _model(tmp_path, "m1", {"murals/results/q.json": "x"})
    rc, out = _score(tmp_path)
    assert rc == 0
    err = capsys.readouterr().err
    # by hand: 3 .json files under m1 name no line (the .txt is not a prediction file);
    # the warning shows one of them
    lines = [ln for ln in err.splitlines() if "with no ground-truth line" in ln]
    assert len(lines) == 1 and lines[0].startswith(
        "warning: model 'm1': 3 prediction file(s) with no ground-truth line ignored (as "
        "the official evaluator ignores them), e.g. ")
    assert lines[0].split("e.g. ")[1] in {
        str(tmp_path / "pred" / "m1" / p) for p in (
            "seals/results/seals_999999.json", "seals/results/sub/a.json",
            "calligraphys/results/z.json")}
    summary = _summary(out)
    assert [r["ignored_prediction_files"] for r in summary["results"]] == [3, 0]
    assert [w for w in summary["warnings"] if "no ground-truth line" in w] == [
        lines[0].removeprefix("warning: ")]
    # the scores are those of the three good files: 1 everywhere
    assert [r["overall"]["ned_score"] for r in summary["results"]] == [1.0, 1.0]


def test_a_stray_model_folder_is_left_out_when_another_has_predictions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: an empty model folder printed as a row of 0.00 everywhere
    _release(tmp_path)
    _model(tmp_path, "m1", ALL_GOOD)
    (tmp_path / "pred" / "logs").mkdir()
    rc, out = _score(tmp_path)
    assert rc == 0
    assert f"warning: model folder {tmp_path / 'pred' / 'logs'} holds no prediction file " \
           "for the 3 ground-truth line(s) scored" in capsys.readouterr().err
    assert [r["model"] for r in _summary(out)["results"]] == ["m1"]


@pytest.mark.parametrize("case", ["bare", "only-model", "all-empty", "named",
                                  "wrong-names"])
def test_a_model_folder_without_predictions_is_refused(
        tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: the same row of 0.00 when nothing else can be meant: the only
    # folder, every folder, or a folder the user named with --models
    _release(tmp_path)
    extra: list[str] = []
    empty = tmp_path / "pred" / "m2"
    (empty / "seals" / "results").mkdir(parents=True)  # the layout, but no file
    if case == "bare":  # not even <category>/results/: the layout check says so first
        (empty / "seals" / "results").rmdir()
        rc, out = _score(tmp_path)
        assert rc == 2 and not out.exists()
        assert f"{tmp_path / 'pred'} is not a predictions root" in capsys.readouterr().err
        return
    if case == "all-empty":
        (tmp_path / "pred" / "m3" / "calligraphys" / "results").mkdir(parents=True)
    if case == "named":
        _model(tmp_path, "m1", ALL_GOOD)
        extra = ["--models", "m1,m2"]
    if case == "wrong-names":  # files there, but none a ground-truth line names
        _model(tmp_path, "m2", {"seals/results/A.json": "王印"})
    rc, out = _score(tmp_path, *extra)
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert f"{empty} holds no prediction file for the 3 ground-truth line(s) scored" in err
    if case == "wrong-names":
        assert (f"its 1 .json file(s) match no ground-truth line, e.g. "
                f"{empty / 'seals' / 'results' / 'A.json'}") in err


def test_help_and_console_give_one_account_of_the_official_evaluator(
        capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: three accounts of what the official evaluator does with a missing
    # file ("stops", "skip reproduces its numbers", "scores it 0"); the one true account:
    # it stops (--missing error), its numbers on a set with gaps are over the lines with a
    # prediction (--missing skip), it scores an empty answer 0 (--missing empty)
    p = argparse.ArgumentParser(prog="score ancient-bench")
    add_score_args(p)
    text = " ".join(p.format_help().split())
    for words in ("'empty' scores it as an empty answer (0), the model's failure kept in "
                  "its denominator, as the official evaluator scores an empty answer",
                  "'skip' leaves it out of the means, which gives the official "
                  "evaluator's numbers on a set with gaps (over the lines that have a "
                  "prediction)",
                  "'error' stops before writing anything, as the official evaluator "
                  "stops at the first missing file"):
        assert words in text
    empty, skip = missing_line("m", 2, "empty"), missing_line("m", 2, "skip")
    assert "reproduces" not in empty and "official evaluator would stop at the first" in empty
    assert "the means cover the lines that have a prediction" in skip
