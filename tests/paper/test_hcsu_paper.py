"""``paper hcsu-*`` on real runs of the HCSU sample (``realdata("hcsu")``: 109 images,
2 Bei + 2 Tie classes) made with the offline baselines.

Expected values are computed here from the runs' own ``samples.jsonl`` (plain JSON
reading, not the project's code): confusion counts from ``details.correct_class`` /
``predicted_class``, accuracies as means of ``scores.accuracy``, Table 4's pooled value
as ``(n_Bei·acc_Bei + n_Tie·acc_Tie) / (n_Bei + n_Tie)`` (HCSU Table 4 caption), Table 2's
Avg. Acc as ``(acc_Bei + acc_Tie) / 2`` (HCSU Table 2 caption).
"""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from tests.conftest import realdata

HCSU = realdata("hcsu")
SIM, RANDOM = "baseline:image-similarity", "baseline:random"


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _samples(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text("utf-8").splitlines()]


def _acc(samples: list[dict[str, Any]], **groups: str) -> float:
    vals = [s["scores"]["accuracy"] for s in samples if s["state"] in ("scored", "unparsed")
            and all(s["groups"].get(k) == v for k, v in groups.items())]
    return sum(vals) / len(vals)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hcsu")
    made = {}
    for name, args in {
        "sim": ["run", "hcsu-discrimination", "--model", SIM, "--k", "2"],
        "random": ["run", "hcsu-discrimination", "--model", RANDOM, "--k", "2"],
        "sim6": ["run", "hcsu-discrimination", "--model", SIM, "--k", "2", "--per-class", "6"],
        "ksweep": ["hcsu", "k-sweep", "--model", SIM, "--distractor-pool", "all", "--ks",
                   "2,3", "--per-class", "5"],
        "ablation": ["hcsu", "ablation", "--model", SIM, "--k", "2", "--per-class", "6"],
        "robust": ["hcsu", "robustness", "--model", SIM, "--tasks", "discrimination",
                   "--k", "2", "--canonical", str(HCSU)],
    }.items():
        made[name] = root / name
        assert main([*args, "--data", str(HCSU), "--out", str(made[name])]) == 0, name
    return made


def test_confusion_counts_from_samples(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "hcsu-confusion", str(runs["sim"]), str(runs["random"]),
                 "--out", str(tmp_path)]) == 0
    for model, run in ((SIM, runs["sim"]), (RANDOM, runs["random"])):
        slug = model.replace(":", "_")
        want = Counter((s["details"]["correct_class"], s["details"]["predicted_class"])
                       for s in _samples(run) if s["state"] == "scored")
        rows = _csv(tmp_path / f"hcsu_confusion_{slug}.csv")
        assert len(rows) == 4
        for row in rows:
            for pred in ("Bei/佚名-隶书", "Bei/李斯-篆书", "Tie/文徵明-楷书", "Tie/王羲之-行书"):
                assert row[pred] == str(want[(row["True style"], pred)])
            assert row["Invalid"] == "0"
        assert sum(int(r["n"]) for r in rows) == 109
        per = {r["Class"]: r for r in _csv(tmp_path / f"hcsu_per_class_{slug}.csv")}
        for cls, r in per.items():
            n = sum(v for (t, _), v in want.items() if t == cls)
            assert r["Acc"] == f"{100 * want[(cls, cls)] / n:.2f}"
        assert (tmp_path / f"hcsu_confusion_{slug}.png").stat().st_size > 10_000
    # image-similarity on the sample, counted from its samples.jsonl: 5 Cao Quan images
    # read as Yishan seal script
    path = tmp_path / "hcsu_confusion_baseline_image-similarity.csv"
    sim = {r["True style"]: r for r in _csv(path)}
    assert sim["Bei/佚名-隶书"]["Bei/李斯-篆书"] == "5"


def test_confusion_invalid_column(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "edited"
    shutil.copytree(runs["sim6"], run)
    lines = (run / "samples.jsonl").read_text("utf-8").splitlines()
    first = json.loads(lines[0])  # one answer turned into an invalid one (no label)
    first["state"], first["answer"] = "unparsed", None
    first["details"]["predicted_class"] = None
    lines[0] = json.dumps(first, ensure_ascii=False)
    (run / "samples.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    # the summary's state counts edited to match (a folder whose records differ from
    # its summary is refused as damaged: report.runs.check_records)
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    states = summary["models"][first["model"]]["states"]
    states["scored"] -= 1
    states["unparsed"] = states.get("unparsed", 0) + 1
    (run / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), "utf-8")
    assert main(["paper", "hcsu-confusion", str(run), "--out", str(tmp_path / "o")]) == 0
    rows = {r["True style"]: r for r in _csv(tmp_path / "o" /
                                             "hcsu_confusion_baseline_image-similarity.csv")}
    cls = first["details"]["correct_class"]
    assert rows[cls]["Invalid"] == "1" and rows[cls]["n"] == "6"
    assert sum(int(r["Invalid"]) for r in rows.values()) == 1


def test_table2_avg_acc_and_footnotes(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "hcsu-table2", str(runs["sim"]), str(runs["random"]), "--group",
                 f"{SIM}=Baselines", "--group", f"{RANDOM}=Chance", "--out",
                 str(tmp_path)]) == 0
    rows = {r["Model"]: r for r in _csv(tmp_path / "hcsu_table2.csv")}
    for model, run in ((SIM, runs["sim"]), (RANDOM, runs["random"])):
        s = _samples(run)
        bei, tie = _acc(s, domain="Bei"), _acc(s, domain="Tie")
        assert rows[model]["Bei (Stone Rubbing) / Acc"] == f"{100 * bei:.2f}"
        assert rows[model]["Avg. Acc"] == f"{100 * (bei + tie) / 2:.2f}"
    assert rows[SIM]["group"] == "Baselines" and rows[RANDOM]["group"] == "Chance"
    md = (tmp_path / "hcsu_table2.md").read_text("utf-8")
    assert "Avg. Acc = (Acc_Bei + Acc_Tie) / 2, the unweighted mean" in md
    assert "Table 4 reports (weighted by each domain's n)" in md
    # each model is alone in its block, so each is the best there: bold, never underlined
    assert "<u>" not in md and md.count("**91.77**") == 1


def test_table4_origin_is_weighted_mean(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "hcsu-table4", str(runs["robust"]), "--out", str(tmp_path)]) == 0
    rows = {r["Condition"]: r for r in _csv(tmp_path / "hcsu_table4.csv")}
    assert list(rows) == ["Wild (Raw)", "Wild-Resize", "Origin"]
    s = [x for x in _samples(runs["robust"]) if x["groups"]["condition"] == "Origin"]
    n_bei = sum(1 for x in s if x["groups"]["domain"] == "Bei")
    n_tie = sum(1 for x in s if x["groups"]["domain"] == "Tie")
    acc_bei, acc_tie = _acc(s, domain="Bei"), _acc(s, domain="Tie")
    assert (n_bei, n_tie) == (55, 54)
    pooled = (n_bei * acc_bei + n_tie * acc_tie) / (n_bei + n_tie)
    assert rows["Origin"]["Discrimination / Acc"] == f"{100 * pooled:.2f}"
    # the same predictions' Table 2 Avg. Acc (mean of domains) prints differently
    assert f"{100 * pooled:.2f}" != f"{100 * (acc_bei + acc_tie) / 2:.2f}"
    md = (tmp_path / "hcsu_table4.md").read_text("utf-8")
    assert "v = (n_Bei·v_Bei + n_Tie·v_Tie) / (n_Bei + n_Tie)" in md


def test_table5_rows_per_mode(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "hcsu-table5", str(runs["ablation"]), "--out", str(tmp_path)]) == 0
    rows = {r["Descriptions"]: r for r in _csv(tmp_path / "hcsu_table5.csv")}
    s = _samples(runs["ablation"])
    for mode in ("random", "expert"):
        bei = _acc(s, domain="Bei", descriptions=mode)
        tie = _acc(s, domain="Tie", descriptions=mode)
        assert rows[mode]["Tie (Ink Manuscript) / Acc"] == f"{100 * tie:.2f}"
        assert rows[mode]["Avg. Acc"] == f"{100 * (bei + tie) / 2:.2f}"
    assert "Avg. Acc = (Acc_Bei + Acc_Tie) / 2" in (tmp_path / "hcsu_table5.md").read_text()


def test_fig4a_and_fig4b(runs: dict[str, Path], tmp_path: Path) -> None:
    assert main(["paper", "hcsu-fig4a", str(runs["sim6"]), str(runs["sim"]),
                 "--out", str(tmp_path)]) == 0
    points = _csv(tmp_path / "hcsu_fig4a.csv")
    assert [(p["--per-class"], p["Images per class used"]) for p in points] == \
        [("6", "6–6"), ("90", "27–28")]
    s6 = _samples(runs["sim6"])
    avg6 = (_acc(s6, domain="Bei") + _acc(s6, domain="Tie")) / 2
    assert points[0]["Avg. Acc"] == f"{100 * avg6:.2f}"
    assert (tmp_path / "hcsu_fig4a.png").stat().st_size > 10_000
    assert main(["paper", "hcsu-fig4b", str(runs["ksweep"]), "--out", str(tmp_path)]) == 0
    rows = {r["K"]: r for r in _csv(tmp_path / "hcsu_fig4b.csv")}
    sk = _samples(runs["ksweep"])
    assert rows["3"]["Bei / Acc"] == f"{100 * _acc(sk, k='3', domain='Bei'):.2f}"
    assert rows["3"]["Chance (1/K)"] == "33.33"
    assert (tmp_path / "hcsu_fig4b.png").stat().st_size > 10_000


@pytest.mark.slow  # two BERTScore runs (the bundled MiniLM model is loaded twice)
def test_description_table3_and_fig4c(tmp_path: Path) -> None:
    desc, shots = tmp_path / "desc", tmp_path / "shots"
    assert main(["run", "hcsu-description", "--data", str(HCSU), "--model",
                 "baseline:nearest-description", "--per-class", "2", "--out", str(desc)]) == 0
    assert main(["hcsu", "shot-sweep", "--data", str(HCSU), "--model",
                 "baseline:nearest-description", "--per-class", "2", "--shot-list", "1,2",
                 "--out", str(shots)]) == 0
    assert main(["paper", "hcsu-table3", str(desc), "--out", str(tmp_path / "t3")]) == 0
    rows = _csv(tmp_path / "t3" / "hcsu_table3.csv")
    assert rows[0]["Model"] == "Expert reference" and rows[0]["Bei / BERTScore"] == "10.00"
    s = _samples(desc)
    bei = [x["scores"]["bertscore_x10"] for x in s if x["groups"]["domain"] == "Bei"]
    assert len(bei) == 4
    assert rows[1]["Bei / BERTScore"] == f"{sum(bei) / len(bei):.2f}"
    assert "Δ = model − the judge's score" in (tmp_path / "t3" / "hcsu_table3.md").read_text()
    assert main(["paper", "hcsu-fig4c", str(shots), "--out", str(tmp_path / "f")]) == 0
    pts = {r["Shots"]: r for r in _csv(tmp_path / "f" / "hcsu_fig4c.csv")}
    s2 = [x for x in _samples(shots) if x["groups"]["shots"] == "2"]
    allv = [x["scores"]["bertscore_x10"] for x in s2]
    assert pts["2"]["All / BERTScore"] == f"{sum(allv) / len(allv):.2f}"
    assert (tmp_path / "f" / "hcsu_fig4c.png").stat().st_size > 10_000


def test_wrong_benchmark_is_usage_error(runs: dict[str, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paper", "hcsu-table4", str(runs["sim"]), "--out", str(tmp_path)]) == 2
    assert "is a hcsu-discrimination run; this command reads hcsu-robustness runs" in \
        capsys.readouterr().err
    assert not list(tmp_path.iterdir())
