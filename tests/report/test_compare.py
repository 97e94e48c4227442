"""heritage_eval.report.compare: models table, Table-3 layout, paired differences,
disagreements, run reading. Expected values are computed by hand (comments say how)."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from heritage_eval.cli.compare_cmd import COMPARE
from heritage_eval.cli.main import main
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.summary import envelope
from heritage_eval.core.tables import to_latex, to_markdown
from heritage_eval.report.compare import (
    CompareError,
    compare_runs,
    group_table,
    write_comparison,
)
from heritage_eval.report.compare_tables import paired_table
from heritage_eval.report.runs import RunReadError, RunReadWarning, load_run_records

SCORE = MetricSpec("score", "Score")
ACC = MetricSpec("acc", "Acc")
NED = MetricSpec("ned", "NED", macro_over="medium", by=("medium",))
F1 = MetricSpec("f1", "F1", macro_over="medium", by=("medium",))


def rec(i: int | str, model: str, scores: dict[str, float | None], *, state: str = "scored",
        benchmark: str = "toy", groups: dict[str, str] | None = None,
        details: dict[str, object] | None = None) -> SampleRecord:
    return SampleRecord.model_validate(dict(
        id=f"s{i}", benchmark=benchmark, model=model, groups=groups or {}, state=state,
        scores=scores, answer=None if state == "error" else f"{model}-answer-{i}",
        reference=f"ref-{i}", error="timeout" if state == "error" else None,
        details=details or {},
        turns=[TurnRecord(prompt="p", response=ResponseRecord(
            text=None if state == "error" else f"raw {model} {i}"))]))


def write_run(path: Path, records: list[SampleRecord], metrics: list[MetricSpec],
              keys: tuple[str, ...] = (), benchmark: str = "toy") -> Path:
    path.mkdir(parents=True)
    (path / "samples.jsonl").write_text("".join(r.to_json_line() + "\n" for r in records),
                                        encoding="utf-8")
    summary = envelope(benchmark, records, metrics, keys)
    (path / "summary.json").write_text(json.dumps(summary, ensure_ascii=False),
                                       encoding="utf-8")
    return path


REF = [0.9, 0.5, 0.3, 0.8, 0.6]
OTH = [0.7, 0.6, 0.1, 0.8, 0.2]


@pytest.fixture
def pooled_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Reference "a": s0..s4 as REF plus s6 (only a has it); "b": s0..s4 as OTH plus
    an error record s5 (which a lacks)."""
    a = [rec(i, "a", {"score": v}, details={"artwork": f"w{i // 2}"})
         for i, v in enumerate(REF)] + [rec(6, "a", {"score": 1.0})]
    b = [rec(i, "b", {"score": v}) for i, v in enumerate(OTH)]
    b.append(rec(5, "b", {"score": None}, state="error"))
    return (write_run(tmp_path / "run_a", a, [SCORE]),
            write_run(tmp_path / "run_b", b, [SCORE]))


def test_pooled_paired_difference_and_exact_p_value(pooled_runs: tuple[Path, Path]) -> None:
    comp = compare_runs(list(pooled_runs))
    assert [m.name for m in comp.models] == ["a", "b"] and comp.reference == "a"
    (row,) = comp.paired
    # by hand: d = OTH - REF on the common answered ids s0..s4 = [-0.2, 0.1, -0.2, 0, -0.4]
    # (common samples, the default: a's s6 is dropped, so a counts 5 too)
    assert row.n == 5 and row.n_reference == 5 and row.n_model == 5
    own = compare_runs(list(pooled_runs), samples="all").paired[0]
    assert (own.n, own.n_reference, own.n_model) == (5, 6, 5)
    assert row.difference == pytest.approx(-0.14, abs=1e-12)
    d = np.array(OTH) - np.array(REF)
    res = stats.permutation_test((d,), lambda x, axis=-1: np.mean(x, axis=axis),
                                 permutation_type="samples", vectorized=True,
                                 n_resamples=2000, alternative="two-sided")
    # by hand: 2^5 sign flips; sums <= -0.7 need positives >= 0.8 among {.2,.1,.2,.4}:
    # {.2,.2,.4} and all four, x2 for the zero -> 4/32; two-sided 2 * 4/32 = 0.25
    assert row.p_value == pytest.approx(res.pvalue, abs=1e-12)
    assert row.p_value == pytest.approx(0.25, abs=1e-12)
    assert row.ci_low is not None and row.ci_high is not None and row.difference is not None
    assert row.ci_low <= row.difference <= row.ci_high


def test_disagreements_continuous_threshold(pooled_runs: tuple[Path, Path]) -> None:
    # |d| = [0.2, 0.1, 0.2, 0, 0.4]: >= 0.1 -> s0, s1, s2, s4 (s1's 0.0999... counts:
    # 1e-9 tolerance); >= 0.15 -> s0, s2, s4. Largest difference first.
    comp = compare_runs(list(pooled_runs))
    assert {d.id for d in comp.disagreements} == {"s0", "s1", "s2", "s4"}
    assert comp.disagreements[0].id == "s4"
    assert comp.disagreements[0].max_abs_difference == pytest.approx(0.4)
    # a has s6 that b lacks, b's s5 is an error: 5 in common, a's s6 and b's s5 dropped
    assert comp.warnings[:3] == [
        "every model is scored on the 5 sample(s) all models counted (samples counted per "
        "model: a 6, b 5); the others are dropped",
        "a: 1 record(s) dropped to compare on common samples (1 × another model left this "
        "sample out, or its run has no record of it)",
        "b: 1 record(s) dropped to compare on common samples (1 × left out in this run: "
        "timeout)"]
    assert comp.models[0].block["metrics"]["score"]["n"] == 5  # recomputed on s0..s4
    # --samples all: each run's own numbers, flagged as not comparable
    own = compare_runs(list(pooled_runs), samples="all")
    assert own.warnings[0].startswith("the models are scored on DIFFERENT sample sets")
    assert own.warnings[1] == ("b vs a, Score: the paired difference is over the 5 "
                               "scored record(s) common to both (b has 5, a 6)")
    assert own.models[0].block["metrics"]["score"]["n"] == 6
    strict = compare_runs(list(pooled_runs), threshold=0.15)
    assert [d.id for d in strict.disagreements] == ["s4", "s0", "s2"]
    entry = strict.disagreements[0].models
    assert entry["a"]["answer"] == "a-answer-4" and entry["b"]["response"] == "raw b 4"
    assert entry["a"]["scores"] == {"score": 0.6} and entry["b"]["scores"] == {"score": 0.2}


def test_choice_metric_disagrees_on_any_difference(tmp_path: Path) -> None:
    # 0/1 metric: s1 and s3 differ; the threshold (here 2.0) plays no part.
    a = [rec(i, "a", {"acc": v}) for i, v in enumerate([1, 0, 1, 1])]
    b = [rec(i, "b", {"acc": v}) for i, v in enumerate([1, 1, 1, 0])]
    run = write_run(tmp_path / "r", a + b, [ACC])
    comp = compare_runs([run], threshold=2.0)
    assert [d.id for d in comp.disagreements] == ["s1", "s3"]
    assert comp.paired[0].difference == pytest.approx(0.0)  # by hand: (1 - 1) / 4


def test_clusters_from_details_key(tmp_path: Path) -> None:
    clustered = MetricSpec("score", "Score", cluster="artwork")
    a = [rec(i, "a", {"score": v}, details={"artwork": f"w{i // 2}"})
         for i, v in enumerate(REF)]
    b = [rec(i, "b", {"score": v}) for i, v in enumerate(OTH)]
    run = write_run(tmp_path / "r", a + b, [clustered])
    (row,) = compare_runs([run]).paired
    # s0,s1 -> w0; s2,s3 -> w1; s4 -> w2: 3 clusters, same mean difference -0.14
    assert row.n_clusters == 3 and row.difference == pytest.approx(-0.14, abs=1e-12)
    assert "cluster" in row.method


def _macro_runs(tmp_path: Path) -> Path:
    """Three models; Seal has 3 samples, Stele 1 (unequal sizes: macro != pooled)."""
    media = ["Seal", "Seal", "Seal", "Stele"]
    table = {"m1": [0.5, 0.6, 0.7, 0.9], "m2": [0.6, 0.8, 1.0, 0.5],
             "m3": [0.2, 0.2, 0.2, 0.2]}
    records = [rec(i, m, {"ned": v, "f1": v}, benchmark="ancient-bench",
                   groups={"medium": media[i]})
               for m, vals in table.items() for i, v in enumerate(vals)]
    return write_run(tmp_path / "ab", records, [NED, F1], ("medium",), "ancient-bench")


def test_macro_paired_difference_is_mean_of_group_means(tmp_path: Path) -> None:
    comp = compare_runs([_macro_runs(tmp_path)])
    row = next(p for p in comp.paired if p.model == "m2" and p.metric == "ned")
    # by hand: Seal d = [0.1, 0.2, 0.3] -> 0.2; Stele d = [-0.4]; macro (0.2 - 0.4) / 2
    # = -0.1 (the pooled mean would be +0.05)
    assert row.difference == pytest.approx(-0.1, abs=1e-12)
    m1, m2 = comp.models[0].block, comp.models[1].block
    headline = m2["metrics"]["ned"]["value"] - m1["metrics"]["ned"]["value"]
    assert row.difference == pytest.approx(headline, abs=1e-12)
    assert "stratified" in row.method


def test_table3_layout_best_bold_second_underlined(tmp_path: Path) -> None:
    comp = compare_runs([_macro_runs(tmp_path)])
    md = to_markdown(group_table(comp, "medium"))
    lines = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]]
             for ln in md.splitlines() if ln.startswith("| m")}
    # columns: Seal NED, Seal F1, Stele NED, Stele F1, Overall NED, Overall F1.
    # by hand (percent): Seal means m1 60, m2 80, m3 20; Stele m1 90, m2 50, m3 20;
    # Overall (mean of media) m1 75, m2 65, m3 20.
    assert lines["m1"] == ["<u>60.00</u>", "<u>60.00</u>", "**90.00**", "**90.00**",
                           "**75.00**", "**75.00**"]
    assert lines["m2"] == ["**80.00**", "**80.00**", "<u>50.00</u>", "<u>50.00</u>",
                           "<u>65.00</u>", "<u>65.00</u>"]
    assert lines["m3"] == ["20.00"] * 6
    header = next(ln for ln in md.splitlines() if ln.startswith("| Model"))
    assert [c.strip() for c in header.split("|")[1:-1]] == [
        "Model", "Seal / NED", "Seal / F1", "Stele / NED", "Stele / F1", "Overall / NED",
        "Overall / F1"]
    tex = to_latex(group_table(comp, "medium"))
    assert r"\multicolumn{2}{c}{Overall}" in tex and r"\textbf{90.00}" in tex
    assert r"\underline{65.00}" in tex


def test_write_comparison_files(tmp_path: Path) -> None:
    comp = compare_runs([_macro_runs(tmp_path)], reference="m3")
    paths = write_comparison(comp, tmp_path / "out")
    names = sorted(p.name for p in paths)
    assert names == sorted(["compare.md", "models.md", "models.csv", "models.tex",
                            "groups_medium.md", "groups_medium.csv", "groups_medium.tex",
                            "paired.csv", "disagreements.jsonl"])
    assert all(p.is_file() for p in paths)
    text = (tmp_path / "out" / "compare.md").read_text(encoding="utf-8")
    assert "Reference model: **m3**" in text and "## Per medium" in text
    # by hand: m1 - m3 and m2 - m3 differ on every sample by >= 0.3 -> s0..s3 disagree
    assert "4 record(s) where a model differs" in text
    rows = (tmp_path / "out" / "paired.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("model,reference,metric,label,difference")
    assert len(rows) == 1 + 2 * 2  # two models x two metrics
    lines = (tmp_path / "out" / "disagreements.jsonl").read_text().splitlines()
    assert len(lines) == 4 and set(json.loads(lines[0])["models"]) == {"m1", "m2", "m3"}
    models_md = (tmp_path / "out" / "models.md").read_text(encoding="utf-8")
    assert "**75.00** [" in models_md  # m1's NED headline with its interval
    only_md = write_comparison(comp, tmp_path / "out2", formats=["md"])
    assert not any(p.suffix in (".csv", ".tex") and p.name != "paired.csv"
                   for p in only_md)


def test_runs_of_two_benchmarks_are_refused(tmp_path: Path) -> None:
    r1 = write_run(tmp_path / "x", [rec(0, "a", {"score": 1.0})], [SCORE], benchmark="toy")
    r2 = write_run(tmp_path / "y", [rec(0, "b", {"score": 1.0}, benchmark="other")],
                   [SCORE], benchmark="other")
    with pytest.raises(CompareError, match="different benchmarks"):
        compare_runs([r1, r2])


def test_truncated_line_warns_not_crashes(pooled_runs: tuple[Path, Path]) -> None:
    run_b = pooled_runs[1]
    samples = run_b / "samples.jsonl"
    text = samples.read_text(encoding="utf-8")
    samples.write_text(text + text.splitlines()[0][:40], encoding="utf-8")  # line 7
    with pytest.warns(RunReadWarning, match=r"samples\.jsonl:7: skipped"):
        records, summary = load_run_records(run_b)
    assert len(records) == 6 and summary["benchmark"] == "toy"
    # compare refuses it: its summary would be set beside records it does not hold
    # (tests/report/test_compare_damaged_runs.py)
    with pytest.raises(RunReadError, match=rf"{samples}:7: unreadable line"):
        compare_runs(list(pooled_runs))


def test_not_a_run_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunReadError, match=r"empty is not a run folder: no samples\.jsonl"):
        compare_runs([tmp_path / "empty"])
    with pytest.raises(RunReadError, match="does not exist"):
        load_run_records(tmp_path / "absent")


def test_same_model_in_two_runs_and_reference_option(tmp_path: Path) -> None:
    r1 = write_run(tmp_path / "first", [rec(0, "m", {"score": 1.0})], [SCORE])
    r2 = write_run(tmp_path / "second", [rec(0, "m", {"score": 0.5})], [SCORE])
    comp = compare_runs([r1, r2], reference="m (second)")
    assert [m.name for m in comp.models] == ["m (first)", "m (second)"]
    assert comp.paired[0].model == "m (first)"
    assert comp.paired[0].difference == pytest.approx(0.5)  # by hand: 1.0 - 0.5
    with pytest.raises(CompareError, match="names several models"):
        compare_runs([r1, r2], reference="m")


def _cli(*argv: str) -> int:
    p = argparse.ArgumentParser()
    COMPARE.add_args(p)
    return COMPARE.handler(p.parse_args(list(argv)))


def test_cli(pooled_runs: tuple[Path, Path], tmp_path: Path,
             capsys: pytest.CaptureFixture[str]) -> None:
    a, b = pooled_runs
    assert _cli(str(a), str(b), "--out", str(tmp_path / "c"), "--formats", "md") == 0
    out = capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "via-main")]) == 0
    assert (tmp_path / "via-main" / "groups_medium.md").exists() is False
    assert (tmp_path / "via-main" / "models.tex").is_file()
    assert capsys.readouterr().out == out  # same report through heritage-eval compare
    assert "b - a, Score: -14.00" in out and "p = 0.2500" in out
    assert (tmp_path / "c" / "models.md").is_file()
    assert not (tmp_path / "c" / "models.tex").exists()
    assert _cli(str(a), "--out", str(tmp_path / "d"), "--reference", "zzz") == 2
    assert "reference 'zzz' is none of the models" in capsys.readouterr().err
    assert _cli(str(tmp_path / "nope"), "--out", str(tmp_path / "e")) == 2
    assert _cli(str(a), "--out", str(tmp_path / "f"), "--threshold", "0") == 2


def test_the_same_folder_twice_is_refused(pooled_runs: tuple[Path, Path]) -> None:
    # a folder given twice (once through "x/../x") would compare its models with
    # themselves; more spellings in tests/report/test_compare_damaged_runs.py
    a, _ = pooled_runs
    again = a.parent / ".." / a.parent.name / a.name
    with pytest.raises(CompareError, match="are the same run folder"):
        compare_runs([a, again])
    assert compare_runs(list(pooled_runs)).paired[0].n == 5


def test_a_macro_headline_over_different_groups_is_flagged(tmp_path: Path) -> None:
    # run a: Seal and Stele scored; run b: Seal only (its Stele sample is an error) -> the
    # NED headline of a is the mean of 2 media, of b of 1: not comparable, named
    a = write_run(tmp_path / "a", [rec(0, "a", {"ned": 0.5}, groups={"medium": "Seal"}),
                                   rec(1, "a", {"ned": 0.9}, groups={"medium": "Stele"})],
                  [NED], ("medium",))
    b = write_run(tmp_path / "b", [rec(0, "b", {"ned": 0.7}, groups={"medium": "Seal"}),
                                   rec(1, "b", {"ned": None}, state="error",
                                       groups={"medium": "Stele"})], [NED], ("medium",))
    comp = compare_runs([a, b], samples="all")
    assert ("NED: the headline is the mean over medium groups and the models cover "
            "different ones (a: 2 of 2; b: 1 of 2 (without Stele)): their headline values "
            "are not comparable") in comp.warnings
    # the same media on both sides: no such warning
    twin = write_run(tmp_path / "twin", [rec(0, "c", {"ned": 0.1}, groups={"medium": "Seal"}),
                                         rec(1, "c", {"ned": 0.2}, groups={"medium": "Stele"})],
                     [NED], ("medium",))
    assert not any("cover different" in w for w in compare_runs([a, twin]).warnings)


def test_paired_flags_reach_paired_csv_and_compare_md(tmp_path: Path) -> None:
    # The 3 clusters of test_clusters_from_details_key: d = b - a = [-.2, .1 | -.2, 0 | -.4],
    # cluster sums -.1, -.2, -.4 all negative -> exact p = 2/2^3 = .25, which is also
    # the smallest p 3 clusters allow: p_floor:0.25; 3 < 20 clusters: few_clusters.
    clustered = MetricSpec("score", "Score", cluster="artwork")
    a = [rec(i, "a", {"score": v}, details={"artwork": f"w{i // 2}"})
         for i, v in enumerate(REF)]
    b = [rec(i, "b", {"score": v}) for i, v in enumerate(OTH)]
    comp = compare_runs([write_run(tmp_path / "r", a + b, [clustered])])
    (row,) = comp.paired
    assert row.p_value == pytest.approx(0.25)
    assert "few_clusters" in row.flags and "p_floor:0.25" in row.flags
    assert row.to_dict()["flags"] == list(row.flags)
    write_comparison(comp, tmp_path / "out", formats=["md"])
    with (tmp_path / "out" / "paired.csv").open(encoding="utf-8") as fh:
        (line,) = list(csv.DictReader(fh))
    assert line["flags"].split(";") == list(row.flags)
    md = (tmp_path / "out" / "compare.md").read_text(encoding="utf-8")
    section = md.split("## Paired differences", 1)[1].split("## Disagreements", 1)[0]
    (b_line,) = [ln for ln in section.splitlines() if ln.startswith("| b ")]
    assert b_line.count("†") == 2  # the difference (few_clusters) and the p-value
    assert "p_floor:0.25: the sign-flip test cannot give a p-value below 0.25" in section
    assert "few_clusters: fewer than 20 clusters" in section
    # Unflagged rows get no mark and no flag footnote: 5 pairs unclustered have a floor
    # of 2/32 too, so use 12 pairs (2/4096).
    a12 = [rec(i, "a", {"score": 0.1 * (i % 7)}) for i in range(12)]
    b12 = [rec(i, "b", {"score": 0.1 * ((i + 3) % 7)}) for i in range(12)]
    comp12 = compare_runs([write_run(tmp_path / "r12", a12 + b12, [SCORE])])
    assert comp12.paired[0].flags == ()
    assert "†" not in to_markdown(paired_table(comp12))
