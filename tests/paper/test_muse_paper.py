"""``paper muse-*`` and ``muse import-human`` on real runs of the MUSE sample
(``realdata("muse")``: 7 artworks, 101 questions) made with the offline baselines
(``baseline:random`` with two seeds, ``baseline:jigsaw-edges``) and a human CSV.

Expected values are computed here from the runs' own ``samples.jsonl`` with plain JSON
reading (mean of the judged turns' ``scores.score`` per task, x100), not with the code
under test; the human CSV gives the key on 2 turns per task and a wrong letter on one
object-classification turn, so the human's expected scores are known by construction.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest
from PIL import Image

from heritage_eval.cli.main import main
from tests.conftest import realdata

REAL = realdata("muse")
CAPS = {  # paper Table 1 / Table 2 header
    "Visual Perception": ["object_classification", "object_count"],
    "Semantic Understanding": ["activity_localization", "activity_description",
                               "scene_classification"],
    "Affective Interpretation": ["emotion_detection", "visual_clue_identification",
                                 "emotion_cause_inference"],
    "Compositional Reasoning": ["relative_position", "remote_interaction", "jigsaw_puzzle"],
    "Cultural": ["cultural_identification"],
}
ORDER = [t for ts in CAPS.values() for t in ts]
#: names the runs get in the tables: the second run of the same model spec carries its
#: folder name (muse analyze's rule for a model seen twice)
N0, N1 = "baseline:random", "baseline:random [r1]"
LABEL = {"r0": N0, "r1": N1}
NAMES = {"object_classification": "Object Classification", "object_count": "Object Count",
         "activity_localization": "Activity Localization",
         "activity_description": "Activity Description",
         "scene_classification": "Scene Classification",
         "emotion_detection": "Emotion Detection",
         "visual_clue_identification": "Visual Clue Identification",
         "emotion_cause_inference": "Emotion Cause Inference",
         "relative_position": "Relative Position", "remote_interaction": "Remote Interaction",
         "jigsaw_puzzle": "Jigsaw Puzzle", "cultural_identification": "Cultural Identification"}


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]


def _judged(run: Path) -> dict[str, tuple[str, float]]:
    return {r["id"]: (r["groups"]["task"], r["scores"]["score"]) for r in _rows(run)
            if r["state"] in ("scored", "unparsed") and r["scores"].get("score") is not None}


def _task_means(run: Path) -> dict[str, float]:
    per: dict[str, list[float]] = defaultdict(list)
    for task, score in _judged(run).values():
        per[task].append(score)
    return {t: 100.0 * fmean(v) for t, v in per.items()}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("muse_paper")
    q = root / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL / "images"), "--out", str(q), "--no-progress"]) == 0
    out = {"questions": q}
    for name, extra in (("r0", []), ("r1", ["--model-option", "seed=1"])):
        out[name] = root / name
        assert main(["run", "muse", "--questions", str(q), "--model", "baseline:random",
                     "--out", str(out[name]), *extra]) == 0
    out["edges"] = root / "edges"
    assert main(["run", "muse", "--questions", str(q), "--model", "baseline:jigsaw-edges",
                 "--out", str(out["edges"])]) == 0
    questions = [json.loads(x) for x in q.read_text().splitlines()[1:]]
    rows: list[dict[str, str]] = []
    per: dict[str, int] = defaultdict(int)
    for qu in questions:
        for i, t in enumerate(qu["turns"]):
            if per[t["task"]] >= 2:
                continue
            per[t["task"]] += 1
            a = t["answer"]
            if t["answer_format"] == "position":
                a = ", ".join(f"{k}: {v}" for k, v in a.items())
            if t["task"] == "object_classification" and per[t["task"]] == 2:
                a = next(o["label"] for o in t["options"] if o["label"] != t["answer"])
            rows.append({"question_id": f"{qu['id']}#{i}", "answer": str(a)})
    human_csv = root / "human.csv"
    with human_csv.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, ["question_id", "answer"])
        w.writeheader()
        w.writerows(rows)
    out["human"], out["human_csv"] = root / "human", human_csv
    assert main(["muse", "import-human", "--questions", str(q), "--answers", str(human_csv),
                 "--out", str(out["human"])]) == 0
    return out


@pytest.mark.slow
def test_table2_layout_decimals_average(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "muse-table2", str(runs["r0"]), str(runs["r1"]),
                 str(runs["edges"]), "--out", str(tmp_path), "--intervals"]) == 0
    rows = {r["Model"]: r for r in _csv(tmp_path / "muse_table2.csv")}
    tex = (tmp_path / "muse_table2.tex").read_text()
    for cap, tasks in CAPS.items():  # the capability header row
        assert f"\\multicolumn{{{len(tasks)}}}{{c}}{{{cap}}}" in tex
    r0 = rows[N0]
    means = _task_means(runs["r0"])
    assert r0["Visual Perception / Object Cls."] == f"{means['object_classification']:.1f}"
    # the semantic-similarity tasks print 2 decimals, as the paper
    assert r0["Affective Interpretation / Visual Clue Ident."] == \
        f"{means['visual_clue_identification']:.2f}"
    assert r0["Average"] == f"{fmean(means[t] for t in ORDER):.1f}"
    summary = json.loads((runs["r0"] / "summary.json").read_text())
    est = next(iter(summary["models"].values()))["groups"]["task"]["jigsaw_puzzle"]["score"]
    assert r0["Compositional Reasoning / Jigsaw Puzzle ci_low"] == f"{100 * est['ci_low']:.1f}"
    edges = rows["baseline:jigsaw-edges †"]  # partial run: marked, no Average
    assert edges["Average"] == "" and edges["Compositional Reasoning / Jigsaw Puzzle"] == \
        f"{_task_means(runs['edges'])['jigsaw_puzzle']:.1f}"


@pytest.mark.slow
def test_fig5_best_available_and_models(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "muse-fig5", str(runs["r0"]), str(runs["r1"]), str(runs["edges"]),
                 "--out", str(tmp_path), "--models", N1]) == 0
    rows = {r["Model"]: r for r in _csv(tmp_path / "muse_fig5.csv")}
    assert list(rows) == [N1, "Best Available"]
    m0, m1, me = (_task_means(runs[k]) for k in ("r0", "r1", "edges"))
    for t in ORDER:  # per-task maximum over every run given, drawn or not
        best = max(m.get(t, float("-inf")) for m in (m0, m1, me))
        assert rows["Best Available"][NAMES[t]] == f"{best:.1f}"
    with Image.open(tmp_path / "muse_fig5.png") as im:
        assert im.size[0] > 600 and im.size[1] > 600
    assert main(["paper", "muse-fig5", str(runs["r0"]), "--out", str(tmp_path),
                 "--models", "nope"]) == 2


@pytest.mark.slow
def test_fig8_counts_match_records(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "muse-fig8", str(runs["r0"]), str(runs["r1"]),
                 "--out", str(tmp_path)]) == 0
    for task in ("activity_localization", "activity_description", "remote_interaction"):
        counts = {r["Model"]: r for r in _csv(tmp_path / f"muse_fig8_{task}_counts.csv")}
        for key in ("r0", "r1"):
            wrong: dict[str, int] = defaultdict(int)
            for r in _rows(runs[key]):
                d = r["details"]
                if r["groups"].get("task") == task and r["state"] == "scored" \
                        and r["scores"]["score"] == 0.0 and d.get("chosen_distractor"):
                    wrong[d["chosen_distractor"]] += 1
            row = counts[LABEL[key]]
            assert {k: int(v) for k, v in row.items() if k != "Model" and int(v)} == wrong
        assert (tmp_path / f"muse_fig8_{task}.png").is_file()
    # the code legend is spelled out in the table too
    assert "oosi: an object of the same image" in (
        tmp_path / "muse_fig8_activity_description.md").read_text()


@pytest.mark.slow
def test_fig9_ranks(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "muse-fig9", str(runs["r0"]), str(runs["r1"]),
                 "--out", str(tmp_path)]) == 0
    rows = {r["Model"]: r for r in _csv(tmp_path / "muse_fig9.csv")}
    m = {k: _task_means(runs[k]) for k in ("r0", "r1")}
    for t in [*ORDER[5:8], "object_classification"]:
        a, b = m["r0"][t], m["r1"][t]
        rank_r0 = 1 if a >= b else 2  # ties share rank 1
        assert rows[N0][f"{NAMES[t]} / Rank"] == str(rank_r0)
    assert (tmp_path / "muse_fig9.png").is_file()
    assert main(["paper", "muse-fig9", str(runs["edges"]), str(runs["r0"]),
                 "--out", str(tmp_path), "--models",
                 "baseline:jigsaw-edges,baseline:random"]) == 2  # edges lacks tasks 1-4


@pytest.mark.slow
def test_import_human_and_fig11(runs: dict[str, Path], tmp_path: Path) -> None:
    human = _judged(runs["human"])
    assert len(human) == 24  # 2 turns x 12 tasks
    means = _task_means(runs["human"])
    assert means["object_classification"] == 50.0  # one key, one wrong letter
    assert all(means[t] == pytest.approx(100.0) for t in ORDER if t != "object_classification")
    assert main(["paper", "muse-fig11", str(runs["r0"]), str(runs["r1"]), str(runs["human"]),
                 "--out", str(tmp_path)]) == 0
    rows = {r["Model"]: r for r in _csv(tmp_path / "muse_fig11.csv")}
    for key in ("r0", "r1"):
        judged = _judged(runs[key])
        for t in ORDER:
            ids = [i for i, (task, _) in human.items() if task == t]
            expect = 100.0 * fmean(judged[i][1] for i in ids)
            assert rows[LABEL[key]][NAMES[t]] == f"{expect:.1f}"
    assert rows["Human"]["Object Classification"] == "50.0"


@pytest.mark.slow
def test_import_human_bad_csv(runs: dict[str, Path], tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    qid = next(json.loads(x)["id"] for x in runs["questions"].read_text().splitlines()[1:]
               if "affective_dialogue" in x)
    for body, message in (("question_id,answer\nnope:1,A\n", "bad.csv:2: question id 'nope:1'"),
                          (f"question_id,answer\n{qid},A\n", "give the turn"),
                          ("id,answer\nx,A\n", "bad.csv:1: missing column(s) question_id")):
        bad.write_text(body, encoding="utf-8")
        assert main(["muse", "import-human", "--questions", str(runs["questions"]),
                     "--answers", str(bad), "--out", str(tmp_path / "h")]) == 2
        assert message in capsys.readouterr().err
        assert not (tmp_path / "h" / "summary.json").exists()


@pytest.mark.slow
def test_fig12_group_means(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "muse-fig12", str(runs["r0"]), str(runs["r1"]), str(runs["edges"]),
                 "--out", str(tmp_path), "--models",
                 f"{N0},baseline:jigsaw-edges"]) == 0
    rows = {r["Model"]: r for r in _csv(tmp_path / "muse_fig12.csv")}
    assert list(rows) == [N0]  # the partial run is left out, and named
    assert "baseline:jigsaw-edges" in (tmp_path / "muse_fig12.md").read_text()
    m = _task_means(runs["r0"])
    caps = dict(CAPS, **{"Cultural Understanding": CAPS["Cultural"]})
    del caps["Cultural"]
    for cap, tasks in caps.items():
        assert rows[N0][cap] == f"{fmean(m[t] for t in tasks):.1f}"
    summary = json.loads((runs["r0"] / "summary.json").read_text())["results"][0]
    assert rows[N0]["Low-level"] == \
        f"{100 * summary['per_level']['low']['score']:.1f}"
    for key in ("capability", "level", "granularity"):
        assert (tmp_path / f"muse_fig12_{key}.png").is_file()


@pytest.mark.slow
def test_fig9_plots_scores_by_default(runs: dict[str, Path], tmp_path: Path) -> None:
    import matplotlib.image

    for plot, sub in (([], "scores"), (["--plot", "ranks"], "ranks")):
        out = tmp_path / sub
        assert main(["paper", "muse-fig9", str(runs["r0"]), str(runs["r1"]),
                     "--out", str(out), *plot]) == 0
        assert matplotlib.image.imread(out / "muse_fig9.png").shape[0] > 100
    with pytest.raises(SystemExit) as exc:  # argparse refuses an unknown --plot
        main(["paper", "muse-fig9", str(runs["r0"]), str(runs["r1"]), "--out",
              str(tmp_path / "x"), "--plot", "bars"])
    assert exc.value.code == 2


def test_fig9_score_figure_values() -> None:
    """The default figure's y values are the scores themselves and each point's label is
    its within-task rank (values and ranks written by hand)."""
    import numpy as np
    import pandas as pd

    from heritage_eval.paper.muse_fig9 import bump_figure, score_figure

    tasks = ["object_classification", "emotion_detection", "visual_clue_identification",
             "emotion_cause_inference"]
    scores = pd.DataFrame([[80.0, 40.0, 55.5, 60.0], [70.0, 40.0, 60.25, 90.0]],
                          index=["a", "b"], columns=tasks)
    fig = score_figure(scores, "t")
    ax = fig.axes[0]
    assert [np.asarray(line.get_ydata(), dtype=float).tolist() for line in ax.lines] == [
        [80.0, 40.0, 55.5, 60.0], [70.0, 40.0, 60.25, 90.0]]
    # ranks by hand: a 1,1,2,2; b 2,1 (tie shares the best rank),1,1
    assert [t.get_text() for t in ax.texts] == ["#1", "#1", "#2", "#2",
                                                 "#2", "#1", "#1", "#1"]
    assert ax.get_ylim() == (0.0, 105.0)
    bump = bump_figure(scores, "t").axes[0]
    assert [np.asarray(line.get_ydata(), dtype=float).tolist() for line in bump.lines] == [
        [1, 1, 2, 2], [2, 1, 1, 1]]


def test_fig11_compare_averages_annotators() -> None:
    """Two annotators' per-task scores are averaged over the turns every series shares
    (numbers by hand)."""
    from heritage_eval.paper.muse_fig11 import compare

    t = "object_classification"
    h1 = {"q1": (t, 1.0), "q2": (t, 0.0), "q3": (t, 1.0)}
    h2 = {"q1": (t, 1.0), "q2": (t, 1.0)}  # q3 not answered: left out for everyone
    model = {"q1": (t, 0.0), "q2": (t, 1.0), "q3": (t, 1.0)}
    scores, n = compare([h1, h2], {"m": model})
    assert n == {t: 2}
    assert scores.loc["Human", t] == pytest.approx(75.0)  # (50 + 100) / 2
    assert scores.loc["m", t] == pytest.approx(50.0)
    one, _ = compare([h1], {"m": model})
    assert one.loc["Human", t] == pytest.approx(200 / 3) and one.loc["m", t] == \
        pytest.approx(200 / 3)
    with pytest.raises(ValueError):
        compare([], {"m": model})


@pytest.mark.slow
def test_fig11_two_annotators(runs: dict[str, Path], tmp_path: Path) -> None:
    # the second annotator answers the same turns, with the key on both object
    # classification turns: Human = (50 + 100) / 2 = 75 there, 100 elsewhere
    questions = {json.loads(x)["id"]: json.loads(x)
                 for x in runs["questions"].read_text().splitlines()[1:]}
    rows = _csv(runs["human_csv"])
    for r in rows:
        qid, turn = r["question_id"].rsplit("#", 1)
        t = questions[qid]["turns"][int(turn)]
        if t["task"] == "object_classification":
            r["answer"] = str(t["answer"])
    second = tmp_path / "human2.csv"
    with second.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, ["question_id", "answer"])
        w.writeheader()
        w.writerows(rows)
    assert main(["muse", "import-human", "--questions", str(runs["questions"]), "--answers",
                 str(second), "--name", "human2", "--out", str(tmp_path / "h2")]) == 0
    out = tmp_path / "fig"
    assert main(["paper", "muse-fig11", str(runs["r0"]), str(runs["human"]),
                 str(tmp_path / "h2"), "--human", "human", "--human", "human2",
                 "--out", str(out)]) == 0
    table = {r["Model"]: r for r in _csv(out / "muse_fig11.csv")}
    assert set(table) == {N0, "Human"}
    assert table["Human"]["Object Classification"] == "75.0"
    assert table["Human"]["Object Count"] == "100.0"
    assert "mean of 2 annotators (human, human2)" in (out / "muse_fig11.md").read_text()
    assert main(["paper", "muse-fig11", str(runs["r0"]), str(runs["human"]),
                 "--human", "human", "--human", "nobody", "--out", str(out)]) == 2
