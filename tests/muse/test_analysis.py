"""``muse analyze`` on synthetic run folders; correlations computed by hand."""

from __future__ import annotations

import json
import math
import typing
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from heritage_eval.benchmarks.muse.analysis import analyze as analyze_module
from heritage_eval.benchmarks.muse.analysis import figures
from heritage_eval.benchmarks.muse.analysis.analyze import analyze
from heritage_eval.benchmarks.muse.analysis.correlations import (
    ExternalScoresError,
    pairwise_spearman,
    read_external,
)
from heritage_eval.benchmarks.muse.analysis.distractors import MEANINGS, UNKNOWN, meaning
from heritage_eval.benchmarks.muse.analysis.intervals import (
    invalid_rate_intervals,
    task_score_intervals,
)
from heritage_eval.benchmarks.muse.analysis.summary import summarize
from heritage_eval.benchmarks.muse.analysis.tables import (
    RunFolderError,
    load_results,
    rank,
    task_table,
)
from heritage_eval.benchmarks.muse.params import DescriptionDistractor
from heritage_eval.benchmarks.muse.scoring import TurnResult
from heritage_eval.cli.main import main
from heritage_eval.core.types import Outcome
from tests.conftest import realdata

MUSE_REAL = realdata("muse")
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


PROV = {"question_file": "q.jsonl", "question_file_sha256": "ab" * 32, "limit": None,
        "question_file_header": {"seed": 0, "generator_version": "0.1.0"}}


def _write_run(d: Path, res: dict[str, Any], prov: dict[str, Any] | None = None) -> Path:
    d.mkdir()
    (d / "summary.json").write_text(json.dumps(
        {"benchmark": "muse", "results": [res], "provenance": prov or PROV}))
    return d


def _runs(root: Path, names: list[str]) -> list[Path]:
    return [_write_run(root / name, summarize(name, _rows(MODELS[name]))) for name in names]


def _jigsaw_only(root: Path, name: str = "jig", correct: int = 10) -> Path:
    rows = [TurnResult(question_id=f"j{i}", image_id="i", task="jigsaw_puzzle", turn=0,
                       answer_format="choice", state=Outcome.SCORED, score=float(i < correct))
            for i in range(10)]
    return _write_run(root / name, summarize(name, rows))


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
    counts = pd.read_csv(out / "distractors_activity_localization_counts.csv", index_col=0)
    assert counts.loc["m1"].to_dict() == {"other_activity": 1, "sub_region": 1}
    inv = pd.read_csv(out / "invalid_rate.csv", index_col=0)
    # 1 unparsed of n = 33 turns overall; localization 1/3, mean over 4 tasks
    assert inv.loc["m1", "overall"] == pytest.approx(100 / 33, abs=1e-3)
    assert inv.loc["m1", "mean over tasks"] == pytest.approx(100 / 3 / 4, abs=1e-3)
    # every table lists the models in Table 2's order: m4 22.5, m3 17.5 (30+20+20+0)/4,
    # m2 20.0 (20+30+30+0)/4, m1 15.0 (10+40+10+0)/4 -> m4, m2, m3, m1
    t2 = pd.read_csv(out / "table2_tasks.csv", index_col=0)
    assert list(t2.index) == ["m4", "m2", "m3", "m1"]
    for name in ("invalid_rate.csv", "capability.csv", "position_remote.csv",
                 "distractors_activity_localization.csv"):
        assert list(pd.read_csv(out / name, index_col=0).index) == list(t2.index), name
    md = (out / "analysis.md").read_text()
    # distractor shares are shown with their counts: m1 chose sub_region in 1 of 2
    assert "50.0 (1)" in md
    # 4 models: exact two-sided p of a perfect rho is 2/4! = 2/24 = 0.083 -> caveat
    assert "2/4! = 0.083" in md


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


def test_partial_runs_are_daggered_and_not_ranked(tmp_path: Path) -> None:
    # a jigsaw-only run scoring 100 % used to rank first with Average 100
    runs = [*_runs(tmp_path, ["m1", "m2"]), _jigsaw_only(tmp_path)]
    res = load_results(runs)
    ranking = rank(res)
    # T = the 4 tasks of m1 and m2 (the most complete runs); jig lacks all four
    assert ranking.average_tasks == ["Object Classification", "Activity Localization",
                                     "Object Count", "Scene Classification"]
    assert ranking.ranked == ["m2", "m1"] and list(ranking.partial) == ["jig"]
    t2 = task_table(res, ranking)
    assert math.isnan(t2.loc["jig", "Average"])  # was 100, ranked first
    assert t2.loc["jig", "Jigsaw Puzzle"] == 100.0  # its own score is still shown
    # with a jigsaw score in m1 and m2 too, T has 5 tasks and jig is still partial
    full = []
    for name in ("m1", "m2"):
        rows = [*_rows(MODELS[name]), TurnResult(
            question_id="j", image_id="i", task="jigsaw_puzzle", turn=0,
            answer_format="choice", state=Outcome.SCORED, score=0.0)]
        full.append(_write_run(tmp_path / f"{name}_full", summarize(name, rows)))
    res = load_results([*full, runs[2]])
    ranking = rank(res)
    assert ranking.ranked == ["m2", "m1"] and list(ranking.partial) == ["jig"]
    t2 = task_table(res, ranking)
    # m2: (20 + 30 + 30 + 0 + 0) / 5 tasks = 16; m1: (10 + 40 + 10 + 0 + 0) / 5 = 12
    assert t2.loc["m2", "Average"] == pytest.approx(16.0)
    assert t2.loc["m1", "Average"] == pytest.approx(12.0)
    assert math.isnan(t2.loc["jig", "Average"]) and list(t2.index) == ["m2", "m1", "jig"]
    analyze([*full, runs[2]], tmp_path / "a")
    md = (tmp_path / "a" / "analysis.md").read_text()
    assert "jig †" in md and "lacks Object Classification" in md


def test_no_complete_run_averages_common_tasks(tmp_path: Path) -> None:
    # A lacks Activity Localization, B lacks Object Classification: nobody has all four
    a_rows = [r for r in _rows(MODELS["m1"]) if r.task != "activity_localization"]
    b_rows = [r for r in _rows((4, 4, 3)) if r.task != "object_classification"]
    a = _write_run(tmp_path / "a", summarize("A", a_rows))
    b = _write_run(tmp_path / "b", summarize("B", b_rows))
    ranking = rank(load_results([a, b]))
    assert "differ in their tasks" in ranking.note
    assert ranking.average_tasks == ["Object Count", "Scene Classification"]
    # averages over those two: A (10 + 40) / 2 = 25, B (40 + 40) / 2 = 40
    assert ranking.ranked == ["B", "A"] and ranking.partial == {}
    assert "every run has: Object Count, Scene Classification" in ranking.note
    # a run with fewer tasks than a complete one is partial instead
    m3 = _write_run(tmp_path / "m3", summarize("m3", a_rows))
    ranking = rank(load_results([*_runs(tmp_path, ["m2"]), m3]))
    assert ranking.ranked == ["m2"] and ranking.partial == {"m3": ["Activity Localization"]}


def test_same_folder_twice_and_different_question_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m1, m2 = _runs(tmp_path, ["m1", "m2"])
    with pytest.raises(RunFolderError, match="given twice"):
        load_results([m1, tmp_path / "." / "m1"])
    other = summarize("m3", _rows(MODELS["m3"]))
    m3 = _write_run(tmp_path / "m3", other, {**PROV, "question_file_sha256": "cd" * 32,
                                             "question_file_header": {"seed": 7}})
    out = analyze([m1, m2, m3], tmp_path / "a")
    assert any("DIFFERENT question files" in n and "seed 7" in n for n in out.warnings)
    assert "DIFFERENT question files" in (tmp_path / "a" / "analysis.md").read_text()
    assert main(["muse", "analyze", str(m1), str(m1), "--out", str(tmp_path / "b")]) == 2
    assert "given twice" in capsys.readouterr().err


def test_external_csv_is_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                   ) -> None:
    ext = tmp_path / "ext.csv"
    ext.write_text("model,MMBench,org,BLINK\nm1,60,acme,50\nm2,70,beta,\n")
    got = read_external(ext)
    # "org" holds text: ignored with a warning (it became an all-NaN benchmark before)
    assert list(got.scores.columns) == ["MMBench", "BLINK"]
    assert got.scores.loc["m2", "MMBench"] == 70.0 and math.isnan(got.scores.loc["m2",
                                                                                 "BLINK"])
    assert len(got.warnings) == 1 and "'org'" in got.warnings[0]
    dup = tmp_path / "dup.csv"
    dup.write_text("model,MMBench\nm1,60\nm2,70\nm1,65\n")
    with pytest.raises(ExternalScoresError, match="more than once: m1"):
        read_external(dup)
    # with only 2 runs (no correlations) a missing CSV used to be silently ignored
    runs = _runs(tmp_path, ["m1", "m2"])
    assert main(["muse", "analyze", *map(str, runs), "--out", str(tmp_path / "a"),
                 "--external", str(tmp_path / "nope.csv")]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_radar_title_says_what_it_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    seen: dict[str, Any] = {}

    def capture(table: pd.DataFrame, path: Path, title: str, low: pd.DataFrame | None = None,
                high: pd.DataFrame | None = None) -> Path:
        seen.update(table=table, title=title, low=low)
        return path

    monkeypatch.setattr(analyze_module.figures, "radar", capture)
    analyze(_runs(tmp_path, list(MODELS)), tmp_path / "a", top=2)
    assert seen["title"] == "Per-task score (%) of the top 2 ranked model(s) (Table 2 " \
                            "order, 4 tasks)"
    assert list(seen["table"].index) == ["m4", "m2"]


# ---- figures: read back from the matplotlib objects ----------------------------------


def _boxes_overlap(fig: Figure, a: Artist, b: Artist) -> bool:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    return bool(a.get_window_extent(renderer).overlaps(b.get_window_extent(renderer)))


def _errorbars(ax: Axes) -> list[ErrorbarContainer]:
    return [c for c in ax.containers if isinstance(c, ErrorbarContainer)]


def test_invalid_rate_axis_starts_at_0_and_says_all_0() -> None:
    zeros = pd.Series([0.0, 0.0], index=["a", "b"])
    fig = figures.bars_figure(zeros, "t", "x", zero_note="all 0 %: none")
    ax = fig.axes[0]
    # was -0.04 .. 0.04 with nothing drawn
    assert ax.get_xlim() == (0.0, 1.0)
    assert "all 0 %: none" in [t.get_text() for t in ax.texts]
    plt.close(fig)
    rates = pd.Series([2.0, 0.0], index=["a", "b"])
    ci = pd.DataFrame({"ci_low": [1.0, 0.0], "ci_high": [4.0, 0.0]}, index=["a", "b"])
    fig = figures.bars_figure(rates, "t", "x", ci)
    ax = fig.axes[0]
    assert ax.get_xlim()[0] == 0.0 and ax.get_xlim()[1] >= 4.0  # the interval fits
    assert len(_errorbars(ax)) == 1 and not any("all 0" in t.get_text() for t in ax.texts)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    plt.close(fig)


def test_radar_legend_below_title_with_error_bars() -> None:
    table = pd.DataFrame({"T1": [50.0, 20.0], "T2": [30.0, 60.0], "T3": [10.0, 90.0]},
                         index=["model-a", "model-b"])
    low, high = table - 5.0, table + 5.0
    fig = figures.radar_figure(table, "Per-task score (%) of the top 2 ranked model(s) "
                               "(Table 2 order, 3 tasks)", low, high)
    ax = fig.axes[0]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["model-a", "model-b"]
    assert not _boxes_overlap(fig, legend, ax.title)  # the legend cut the title before
    for label in ax.get_xticklabels():
        assert not _boxes_overlap(fig, label, ax.title), label.get_text()
    bars = _errorbars(ax)
    assert len(bars) == 2
    segments = bars[0].lines[2][0].get_segments()
    assert [round(float(s[0][1]), 6) for s in segments] == [45.0, 25.0, 5.0]
    assert [round(float(s[1][1]), 6) for s in segments] == [55.0, 35.0, 15.0]
    plt.close(fig)


def test_distractor_legend_explains_every_code() -> None:
    codes = ["ca_d", "none", "oa", "oidi", "oodi", "oosi", "so", "neg", "ca_s", "oisi"]
    shares = pd.DataFrame([[10.0] * len(codes)], columns=codes, index=["m"])
    fig = figures.stacked_bars_figure(shares, shares.astype(int), "Activity Description: "
                                      "distractor types chosen in wrong answers", "percent")
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == [f"{c}: {MEANINGS[c]}" for c in codes]
    assert texts[codes.index("oosi")] == "oosi: an object of the same image (short phrase)"
    assert not _boxes_overlap(fig, legend, fig.axes[0].title)
    assert not _boxes_overlap(fig, legend, fig.axes[0])  # legend off the bars
    plt.close(fig)
    # every code the generators can record is documented
    assert set(typing.get_args(DescriptionDistractor)) <= set(MEANINGS)
    assert meaning("xyz") == UNKNOWN


def test_analyze_real_runs_draws_intervals_from_the_envelope(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(MUSE_REAL / "annotations.json"),
                 "--images", str(MUSE_REAL / "images"), "--out", str(q), "--seed", "0",
                 "--tasks", "object_count", "jigsaw_puzzle", "scene_classification"]) == 0
    runs = []
    for model in ("baseline:random", "baseline:jigsaw-edges"):
        runs.append(tmp_path / model.split(":")[1])
        assert main(["run", "muse", "--questions", str(q), "--model", model,
                     "--out", str(runs[-1])]) == 0
    res = load_results(runs)
    low, high = task_score_intervals(res)
    env = json.loads((runs[0] / "summary.json").read_text())["models"]["baseline:random"]
    got = env["groups"]["task"]["object_count"]["score"]
    assert low.loc["baseline:random", "Object Count"] == pytest.approx(100 * got["ci_low"])
    assert high.loc["baseline:random", "Object Count"] == pytest.approx(100 * got["ci_high"])
    inv = invalid_rate_intervals(res)  # baselines always parse: 0 of n per task
    low_inv, high_inv = inv.loc["baseline:random"].tolist()
    assert low_inv == 0.0 and 0.0 < high_inv < 100.0  # a bound above 0, never [0, 0]
    out = tmp_path / "an"
    analyze(runs, out)
    before = {p.name: p.read_bytes() for p in out.glob("*.csv")}
    assert (out / "radar_top_models.png").stat().st_size > 0
    analyze(runs, out)  # same tables byte for byte
    assert {p.name: p.read_bytes() for p in out.glob("*.csv")} == before
