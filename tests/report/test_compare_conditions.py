"""``compare`` of HCSU study folders (several conditions in one run) is per condition:
each K / image variant is tabulated, ranked and paired on its own records, nothing is
pooled; a condition not every run has is left out with a warning; no common condition
is refused. Rule: :mod:`heritage_eval.report.compare_conditions`,
docs/how-to/view-and-compare.md ("Study folders"). Real study runs on the demo data
with offline baselines; expected values are the runs' own per-condition statistics
(``summary.json`` ``groups.<tag>``) or computed by hand from ``samples.jsonl``."""

from __future__ import annotations

import csv
import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from heritage_eval.report.compare import CompareError, compare_runs, write_comparison
from heritage_eval.report.compare_tables import models_table, paired_table

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo" / "hcsu"
SIM, RND = "baseline:image-similarity", "baseline:random"


def _sweep(out: Path, model: str, ks: str) -> Path:
    assert main(["hcsu", "k-sweep", "--data", str(DEMO), "--model", model, "--ks", ks,
                 "--per-class", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sweeps")
    return {"sim": _sweep(root / "sim", SIM, "2,3"), "rnd": _sweep(root / "rnd", RND, "2,3"),
            "rnd34": _sweep(root / "rnd34", RND, "3,4"), "rnd4": _sweep(root / "rnd4", RND, "4")}


def _summary(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / "summary.json").read_text("utf-8"))
    return data


def _scores(run: Path, k: str) -> dict[str, tuple[str, float]]:
    """id -> (domain, accuracy) of the scored records of condition ``k``."""
    out = {}
    for line in (run / "samples.jsonl").read_text("utf-8").splitlines():
        r = json.loads(line)
        if r["groups"]["k"] == k and r["scores"].get("accuracy") is not None:
            out[r["id"]] = (r["groups"]["domain"], float(r["scores"]["accuracy"]))
    return out


def test_each_k_is_compared_on_its_own(sweeps: dict[str, Path]) -> None:
    comp = compare_runs([sweeps["sim"], sweeps["rnd"]])
    assert comp.condition_key == "k" and list(comp.conditions) == ["2", "3"]
    for k, models in comp.conditions.items():
        assert [m.name for m in models] == [SIM, RND]
        for m, run in zip(models, (sweeps["sim"], sweeps["rnd"]), strict=True):
            assert {r.groups["k"] for r in m.records} == {k}
            # the reference: the run's own per-K estimate in summary.json
            want = _summary(run)["models"][m.model]["groups"]["k"][k]["accuracy"]
            got = m.block["metrics"]["accuracy"]
            assert (got["value"], got["ci_low"], got["ci_high"], got["n"]) == pytest.approx(
                (want["value"], want["ci_low"], want["ci_high"], want["n"]))
    # one paired row per K, over that K's records only
    assert [(p.condition, p.model, p.metric) for p in comp.paired] == [
        ("2", RND, "accuracy"), ("3", RND, "accuracy")]
    for p in comp.paired:
        ref, other = _scores(sweeps["sim"], str(p.condition)), _scores(sweeps["rnd"],
                                                                       str(p.condition))
        ids = sorted(ref.keys() & other.keys())
        # by hand: Acc is the mean over domains (macro_over: domain) of the per-domain
        # mean accuracy, so the paired difference is the mean over domains of the
        # per-domain mean differences on the common records
        per: dict[str, list[float]] = defaultdict(list)
        for i in ids:
            per[ref[i][0]].append(other[i][1] - ref[i][1])
        want = sum(sum(v) / len(v) for v in per.values()) / len(per)
        assert p.n == len(ids) == 20 and p.difference == pytest.approx(want)


def test_the_tables_have_a_block_per_k_ranked_within_it(sweeps: dict[str, Path],
                                                          tmp_path: Path) -> None:
    comp = compare_runs([sweeps["sim"], sweeps["rnd"]])
    table = models_table(comp)
    assert table.row_groups == [("k = 2", 2), ("k = 3", 2)] and table.rank_within_groups
    assert [r["model"] for r in table.rows] == [SIM, RND, SIM, RND]
    assert paired_table(comp).row_groups == [("k = 2", 1), ("k = 3", 1)]
    paths = write_comparison(comp, tmp_path / "cmp", ["md", "csv"])
    names = {p.name for p in paths}
    assert "groups_k.md" not in names and "groups_domain.md" in names  # k is the blocks
    with (tmp_path / "cmp" / "models.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["group"], r["Model"]) for r in rows] == [
        ("k = 2", SIM), ("k = 2", RND), ("k = 3", SIM), ("k = 3", RND)]
    sim = _summary(sweeps["sim"])["models"][SIM]["groups"]["k"]
    assert [r["Acc"] for r in rows[::2]] == [f"{100 * sim[k]['accuracy']['value']:.2f}"
                                             for k in ("2", "3")]
    with (tmp_path / "cmp" / "paired.csv").open(encoding="utf-8") as fh:
        assert [r["condition"] for r in csv.DictReader(fh)] == ["2", "3"]
    md = (tmp_path / "cmp" / "compare.md").read_text("utf-8")
    assert "Conditions: these are study folders over `k` (2, 3)" in md


def test_a_k_not_every_run_has_is_left_out(sweeps: dict[str, Path]) -> None:
    comp = compare_runs([sweeps["sim"], sweeps["rnd34"]])
    assert list(comp.conditions) == ["3"]
    assert {p.condition for p in comp.paired} == {"3"}
    assert all(r.groups["k"] == "3" for m in comp.models for r in m.records)
    notes = " | ".join(comp.warnings)
    assert f"{SIM}: k = 2 left out (20 record(s))" in notes
    assert f"{RND}: k = 4 left out (20 record(s))" in notes


def test_no_common_k_is_refused(sweeps: dict[str, Path], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(CompareError, match="no k value is common to every model"):
        compare_runs([sweeps["sim"], sweeps["rnd4"]])
    assert main(["compare", str(sweeps["sim"]), str(sweeps["rnd4"]), "--out",
                 str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"({SIM}: 2, 3; {RND}: 4)" in err and not (tmp_path / "cmp").exists()


def test_other_condition_tags_are_refused_and_an_untagged_study_is_read(
        sweeps: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(sweeps["rnd"], other)
    summary = _summary(other)
    (other / "summary.json").write_text(json.dumps({**summary, "condition_keys": ["shots"]}),
                                        "utf-8")
    with pytest.raises(CompareError, match="name different conditions"):
        compare_runs([sweeps["sim"], other])
    # a study folder from before condition_keys: compared per the other run's tag
    del summary["condition_keys"]
    (other / "summary.json").write_text(json.dumps(summary), "utf-8")
    assert list(compare_runs([sweeps["sim"], other]).conditions) == ["2", "3"]


def test_plain_runs_have_no_conditions(tmp_path: Path) -> None:
    runs = []
    for model in (SIM, RND):
        out = tmp_path / model.split(":")[1]
        assert main(["run", "hcsu-discrimination", "--data", str(DEMO), "--model", model,
                     "--k", "3", "--limit", "2", "--out", str(out)]) == 0
        runs.append(out)
    comp = compare_runs(runs)
    assert comp.condition_key is None and comp.conditions == {}
    assert [p.condition for p in comp.paired] == [None]
    assert models_table(comp).row_groups is None


def test_robustness_folders_compare_per_image_variant(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    runs = []
    for model in (SIM, RND):
        out = tmp_path / model.split(":")[1]
        assert main(["hcsu", "robustness", "--data", str(DEMO), "--model", model, "--tasks",
                     "discrimination", "--k", "3", "--limit", "2", "--out", str(out)]) == 0
        runs.append(out)
    capsys.readouterr()
    assert main(["compare", *map(str, runs), "--out", str(tmp_path / "cmp")]) == 0
    printed = capsys.readouterr().out
    variants = ["Wild (Raw)", "Wild-Resize", "Origin"]
    for v in variants:  # one paired line per variant for Acc, 4 records each (2 x 2 domains)
        assert f"condition = {v}: {RND} - {SIM}, Acc:" in printed
    with (tmp_path / "cmp" / "paired.csv").open(encoding="utf-8") as fh:
        acc = [r for r in csv.DictReader(fh) if r["metric"] == "accuracy"]
    assert [(r["condition"], r["n"]) for r in acc] == [(v, "4") for v in variants]
