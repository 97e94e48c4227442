"""``muse analyze`` on synthetic run folders; correlations computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from heritage_eval.benchmarks.muse.analysis.analyze import analyze
from heritage_eval.benchmarks.muse.analysis.correlations import pairwise_spearman
from heritage_eval.benchmarks.muse.analysis.summary import summarize
from heritage_eval.benchmarks.muse.analysis.tables import load_results, task_table
from heritage_eval.benchmarks.muse.scoring import TurnResult
from heritage_eval.cli.main import main
from heritage_eval.core.types import Outcome

# correct answers out of 10 per model: object_count (X), scene (Y), object_class. (Z)
MODELS = {"m1": (1, 4, 1), "m2": (2, 3, 3), "m3": (3, 2, 2), "m4": (4, 1, 4)}
TASKS = ("object_count", "scene_classification", "object_classification")


def _rows(correct: tuple[int, ...]) -> list[TurnResult]:
    rows = []
    for task, k in zip(TASKS, correct, strict=True):
        for i in range(10):
            rows.append(TurnResult(
                question_id=f"q{i}", image_id="i", task=task, turn=0, answer_format="choice",
                state=Outcome.SCORED, score=float(i < k)))
    # activity localization: one wrong answer on a sub-region, one on another activity
    rows += [TurnResult(question_id="l1", image_id="i", task="activity_localization",
                        turn=0, answer_format="choice", state=Outcome.SCORED, score=0.0,
                        chosen_distractor="sub_region"),
             TurnResult(question_id="l2", image_id="i", task="activity_localization",
                        turn=0, answer_format="choice", state=Outcome.SCORED, score=0.0,
                        chosen_distractor="other_activity"),
             TurnResult(question_id="l3", image_id="i", task="activity_localization",
                        turn=0, answer_format="choice", state=Outcome.UNPARSED, score=0.0)]
    return rows


def _runs(root: Path, names: list[str]) -> list[Path]:
    dirs = []
    for name in names:
        d = root / name
        d.mkdir()
        res = summarize(name, _rows(MODELS[name]))
        (d / "summary.json").write_text(json.dumps(
            {"benchmark": "muse", "results": [res], "provenance": {}}))
        dirs.append(d)
    return dirs


def test_table2_and_spearman_by_hand(tmp_path: Path) -> None:
    res = load_results(_runs(tmp_path, list(MODELS)))
    t2 = task_table(res)
    # m4: (40 + 10 + 40 + 0) / 4 tasks = 22.5 is the best average -> first row
    assert t2.index[0] == "m4" and t2.loc["m4", "Average"] == pytest.approx(22.5)
    assert t2.loc["m2", "Scene Classification"] == pytest.approx(30.0)
    rho, n = pairwise_spearman(t2[["Object Count", "Scene Classification",
                                   "Object Classification"]])
    # X = 1,2,3,4 and Y = 4,3,2,1 are reversed ranks: rho = -1
    assert rho.loc["Object Count", "Scene Classification"] == pytest.approx(-1.0)
    # X ranks 1,2,3,4 vs Z ranks 1,3,2,4: sum d^2 = 2, rho = 1 - 6*2/(4*(16-1)) = 0.8
    assert rho.loc["Object Count", "Object Classification"] == pytest.approx(0.8)
    assert n.loc["Object Count", "Object Classification"] == 4


def test_spearman_undefined_is_nan() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0, None, 4.0], "b": [1.0, 1.0, 1.0, 1.0],
                       "c": [3.0, None, None, 1.0]})
    rho, n = pairwise_spearman(df)
    assert math.isnan(rho.loc["a", "b"])  # constant column: undefined, never 0
    assert math.isnan(rho.loc["a", "c"]) and n.loc["a", "c"] == 2  # fewer than 3 models


def test_analyze_writes_tables_figures_and_external(tmp_path: Path) -> None:
    runs = _runs(tmp_path, list(MODELS))
    ext = tmp_path / "external.csv"
    ext.write_text("model,MMBench,BLINK\nm1,60,50\nm2,70,\nm3,80,\nm4,90,40\n")
    out = tmp_path / "analysis"
    assert main(["muse", "analyze", *map(str, runs), "--out", str(out),
                 "--external", str(ext)]) == 0
    for name in ("analysis.md", "table2_tasks.csv", "capability.csv", "level.csv",
                 "granularity.csv", "invalid_rate.csv", "spearman_tasks.csv",
                 "spearman_tasks.png", "spearman_external.csv", "spearman_external.png",
                 "radar_top_models.png", "distractors_activity_localization.csv",
                 "distractors_activity_localization.png", "invalid_rate.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    ext_rho = pd.read_csv(out / "spearman_external.csv", index_col=0)
    # MMBench 60,70,80,90 ranks like object count 1,2,3,4 -> 1.0; vs Z -> 0.8 (as above)
    assert ext_rho.loc["MMBench", "Object Count"] == pytest.approx(1.0)
    assert ext_rho.loc["MMBench", "Object Classification"] == pytest.approx(0.8)
    assert math.isnan(ext_rho.loc["BLINK", "Object Count"])  # only 2 models share it
    dist = pd.read_csv(out / "distractors_activity_localization.csv", index_col=0)
    assert dist.loc["m1", "sub_region"] == pytest.approx(50.0)  # 1 of 2 wrong answers
    inv = pd.read_csv(out / "invalid_rate.csv", index_col=0)
    # 1 unparsed of 33 answered turns overall; localization 1/3, mean over 4 tasks
    assert inv.loc["m1", "overall"] == pytest.approx(100 / 33, abs=1e-3)
    assert inv.loc["m1", "mean over tasks"] == pytest.approx(100 / 3 / 4, abs=1e-3)


def test_analyze_with_two_models_explains_missing_correlations(tmp_path: Path) -> None:
    out = analyze(_runs(tmp_path, ["m1", "m2"]), tmp_path / "a")
    assert any("at least 3 models" in n for n in out.notes)
    text = (tmp_path / "a" / "analysis.md").read_text()
    assert "at least 3 models" in text and "Table 2" in text
    assert not (tmp_path / "a" / "spearman_tasks.csv").exists()
    assert (tmp_path / "a" / "radar_top_models.png").is_file()


def test_bad_run_folder_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    (tmp_path / "x").mkdir()
    assert main(["muse", "analyze", str(tmp_path / "x"), "--out", str(tmp_path / "o")]) == 2
    assert "summary.json" in capsys.readouterr().err
