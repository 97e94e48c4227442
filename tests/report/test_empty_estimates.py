"""Estimates that are all empty, and the notes around them, in the run's ``tables/``,
``summary.md``'s interval section and ``compare``'s tables:

- ``tables/`` (``core/run_tables.group_table``) keeps every model's row and file, says
  "Values with 95 % intervals" only when some cell shows a value, and names each model
  whose row has none (with its record count, the row's n);
- ``summary.md``'s preface names no mark: each table's footnotes do, in one wording;
- :data:`NOTHING_SCORED` promises no warning (a metric turned off prints none);
- ``compare``: runs with no sample in common are refused (exit 2, as study folders with
  no condition in common are); a metric no model scored is named in one warning; the
  models table marks a value without an interval " —" and footnotes it only then, and
  names each row with no metric value; the condition note never doubles a word.

Expected notes are computed from the raw estimates by the rule itself (``_expected_*``
below), independently of the code's cell marks; the real runs are the bundled demo data
with the offline baselines (the commands of the issue)."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.cli.main import main
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.engine import intervals_markdown
from heritage_eval.core.run_tables import (
    FLAG_NOTE,
    NO_INTERVAL_NOTE,
    NOTHING_SCORED,
    VALUES_NOTE,
    empty_row_note,
    group_table,
)
from heritage_eval.core.tables import to_markdown
from heritage_eval.report.compare import CompareError, Comparison, compare_runs
from heritage_eval.report.compare_tables import CONDITION_NOTE, models_table
from heritage_eval.report.runs import ModelRun
from tests.report.test_run_table_marks import SPECS, _block, _expected, estimates

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo" / "hcsu"
NEAREST = "baseline:nearest-description"



def _shown(ests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in ests if e["value"] is not None]


models_st = st.lists(st.tuples(st.lists(st.tuples(estimates, estimates), max_size=3),
                               st.tuples(estimates, estimates), st.integers(0, 300)),
                     min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(models_st)
def test_run_tables_name_each_model_without_a_value(models: list[Any]) -> None:
    blocks, every = {}, []
    for i, (rows, overall, n) in enumerate(models):
        groups = {f"c{j}": _block(pair) for j, pair in enumerate(rows)}
        top = _block(overall)
        blocks[f"m{i}"] = {"n_records": n, "metrics": top, "groups": {"condition": groups}}
        every.append([*(e for g in groups.values() for e in g.values()), *top.values()])
    summary = {"benchmark": "b", "group_keys": ["condition"],
               "statistics": {"metric_specs": SPECS}, "models": blocks}
    table = group_table(summary, "condition")
    any_value = any(_shown(ests) for ests in every)
    empty = [empty_row_note(f"m{i}", models[i][2]) for i, ests in enumerate(every)
             if not _shown(ests)]
    assert table.footnotes == ([VALUES_NOTE] if any_value else []) + _expected(
        [e for ests in every for e in ests]) + empty
    assert [r["model"] for r in table.rows] == list(blocks)  # every row is kept
    assert [r["n"] for r in table.rows] == [float(m[2]) for m in models]
    # summary.md: the preface names no mark; a table's notes name the marks it shows
    md = intervals_markdown(summary)
    preface = md.split("\n\n")[1]
    assert "—" not in preface and "†" not in preface and "(n = 1)" not in md
    for i, ests in enumerate(every):
        assert (f"**m{i}**: {NOTHING_SCORED}" in md) == (not _shown(ests))
    marks = _expected([e for ests in every for e in ests])
    assert (NO_INTERVAL_NOTE in md) == (NO_INTERVAL_NOTE in marks)
    assert (FLAG_NOTE in md) == (FLAG_NOTE in marks)


def test_nothing_scored_promises_no_warning() -> None:
    # robustness and --no-bertscore print no warning that says why: none is promised;
    # the line without a run's summary names no option (--no-bertscore is HCSU's only)
    assert "warning" not in NOTHING_SCORED and "--no-bertscore" not in NOTHING_SCORED


@pytest.mark.parametrize("key", ["k", "shots", "descriptions", "condition"])
def test_the_condition_note_doubles_no_word(key: str) -> None:
    # the case: "per condition condition" when the tag is "condition"
    note = CONDITION_NOTE.format(key=key)
    words = [w.strip('"(),:') for w in note.split()]
    assert all(a != b for a, b in itertools.pairwise(words)), words
    assert f'labelled "{key} = …"' in note  # as the blocks are labelled: "k = 3"


# --- compare's models table, generated -------------------------------------------------

RATE = st.one_of(st.none(), st.fixed_dictionaries({"value": st.floats(0, 1),
                                                   "ci": st.booleans()}))


def _rate(raw: dict[str, Any] | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    v = raw["value"]
    return {"value": v, "ci_low": v if raw["ci"] else None,
            "ci_high": v if raw["ci"] else None, "flags": [], "n": 3}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(estimates, estimates, RATE), min_size=1, max_size=4))
def test_compare_models_table_marks_by_the_run_rule(rows: list[Any]) -> None:
    specs = [MetricSpec(name=str(s["name"]), label=str(s["label"]), decimals=1)
             for s in SPECS]
    models = [ModelRun(f"m{i}", f"m{i}", Path("."), [],
                       {"metrics": _block((a, b)), "invalid_rate": _rate(r), "states": {}})
              for i, (a, b, r) in enumerate(rows)]
    comp = Comparison("b", [Path(".")], models, specs, [], "m0", 0.1)
    table = models_table(comp)
    ests = [e for m in models for e in [*m.block["metrics"].values(),
                                        *[m.block["invalid_rate"] or {"value": None}]]]
    no_ci = any(e["ci_low"] is None for e in _shown(ests))
    assert (NO_INTERVAL_NOTE in table.footnotes) == no_ci
    assert FLAG_NOTE not in table.footnotes  # "†" means a headline not ranked here
    empty = [f"m{i}" for i, m in enumerate(models) if not _shown([*m.block["metrics"].values()])]
    assert [n for n in table.footnotes if "no metric scored" in n] == [
        empty_row_note(name, 0) for name in empty]
    md = to_markdown(table)
    for m in models:  # a shown value without an interval prints "x.x —"
        for name, est in m.block["metrics"].items():
            if est["value"] is not None and est["ci_low"] is None:
                line = next(r for r in md.splitlines() if r.startswith(f"| {m.name} "))
                cell = line.split("|")[2 + 2 * ["acc", "f1"].index(name)].strip()
                plain = cell.replace("*", "").replace("<u>", "").replace("</u>", "")
                assert plain == f"{est['value'] * specs[0].scale:.1f} —"


# --- real runs on the demo data ----------------------------------------------------------

@pytest.fixture(scope="module")
def unscored(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two `run hcsu-description --no-bertscore` folders: 140 answers each, no score."""
    root = tmp_path_factory.mktemp("unscored")
    outs = [root / "a", root / "b"]
    for out in outs:
        assert main(["run", "hcsu-description", "--data", str(DEMO), "--model", NEAREST,
                     "--no-bertscore", "--out", str(out)]) == 0
    return outs


def test_a_run_that_scored_nothing_writes_its_tables_without_promises(
        unscored: list[Path]) -> None:
    tables = unscored[0] / "tables"
    for key in ("overall", "domain", "class", "script"):
        md = (tables / f"{key}.md").read_text("utf-8")
        assert VALUES_NOTE not in md and FLAG_NOTE not in md and NO_INTERVAL_NOTE not in md
        # the demo's 140 images, every one answered and none scored; the note names
        # the metrics this run turned off (core/run_tables.nothing_scored_why)
        assert empty_row_note(NEAREST, 140, "(turned off in this run: BERTScore disabled "
                              "(--no-bertscore); Term. / Rich. (no --judge); or no "
                              "answer was scored)") in md
        assert (tables / f"{key}.tex").is_file()
        with (tables / f"{key}.csv").open(encoding="utf-8") as fh:
            assert [r["Model"] for r in csv.DictReader(fh)] == [NEAREST]  # row kept
    summary_md = (unscored[0] / "summary.md").read_text("utf-8")
    # the line names the metrics this run turned off, not a generic cause
    said = ("no metric scored any sample (turned off in this run: BERTScore disabled "
            "(--no-bertscore); Term. / Rich. (no --judge); or no answer was scored): no "
            "interval to show.")
    assert f"**{NEAREST}**: {said}" in summary_md and "(n = 1)" not in summary_md


def test_compare_of_unscored_runs_says_no_metric_has_a_value(
        unscored: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    comp = compare_runs(unscored)
    assert [w for w in comp.warnings if "no model scored any record" in w] == [
        "BERTScore, Term., Rich.: no model scored any record (a metric turned off, such as "
        "--no-bertscore, or no answer scored): no value and no paired difference (no record "
        "both models scored)"]
    notes = models_table(comp).footnotes
    assert [n for n in notes if "no metric scored" in n] == [
        empty_row_note(m.name, 140) for m in comp.models]
    assert main(["compare", *map(str, unscored), "--out", str(tmp_path / "cmp")]) == 0
    assert "no model scored any record" in capsys.readouterr().err


def test_study_folders_with_no_sample_in_common_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same three image variants, but one run holds description records and the other
    # discrimination ones: the conditions are common, no sample is
    desc, disc = tmp_path / "desc", tmp_path / "disc"
    assert main(["hcsu", "robustness", "--data", str(DEMO), "--model", NEAREST, "--tasks",
                 "description", "--no-bertscore", "--limit", "2", "--out", str(desc)]) == 0
    assert main(["hcsu", "robustness", "--data", str(DEMO), "--model",
                 "baseline:image-similarity", "--tasks", "discrimination", "--k", "3",
                 "--limit", "2", "--out", str(disc)]) == 0
    with pytest.raises(CompareError, match="no sample in common"):
        compare_runs([desc, disc])
    capsys.readouterr()
    assert main(["compare", str(desc), str(disc), "--out", str(tmp_path / "cmp")]) == 2
    assert "0 in common): nothing to compare" in capsys.readouterr().err
    assert not (tmp_path / "cmp").exists()
    # --samples all still sets each run's own numbers side by side
    assert list(compare_runs([desc, disc], samples="all").conditions) == [
        "Wild (Raw)", "Wild-Resize", "Origin"]


def test_a_condition_left_with_no_common_sample_is_left_out() -> None:
    # after the common-sample alignment model b holds no k = 3 record (its k = 3 answers
    # were all errors, say): k = 3 has nothing to compare and is named in a warning
    from heritage_eval.core.record import SampleRecord
    from heritage_eval.core.types import Outcome
    from heritage_eval.report.compare_conditions import drop_empty

    def rec(model: str, k: str) -> SampleRecord:
        return SampleRecord(schema="heritage-eval/sample/1", benchmark="b", model=model,
                            id=f"s#k={k}", state=Outcome.SCORED, groups={"k": k})

    a = ModelRun("a", "a", Path("."), [rec("a", "2"), rec("a", "3")], {})
    b = ModelRun("b", "b", Path("."), [rec("b", "2")], {})
    notes: list[str] = []
    assert drop_empty([a, b], "k", ["2", "3"], notes) == ["2"]
    assert notes == ["k = 3 left out: no sample of it is common to every model, so there "
                     "is nothing to compare there"]
    assert drop_empty([a, a], "k", ["2", "3"], notes) == ["2", "3"] and len(notes) == 1


def test_ranking_notes_only_for_marks_a_shown_value_carries() -> None:
    # a model whose headline lacks groups but has no value at all is marked nowhere:
    # no "† headline not ranked" note for it (found by a reviewer on study folders)
    from types import SimpleNamespace

    from heritage_eval.core.tables import Cell
    from heritage_eval.report.comparability import HEADLINE_MARK, ROW_MARK
    from heritage_eval.report.compare_tables import ranking_notes

    comp = SimpleNamespace(not_ranked={"p": "PARTIAL"})
    lacks = {"Acc": {"m": ["Bei"]}}
    bare: list[dict[str, Cell | float | str | None]] = [{"model": "m", "acc": None},
                                                      {"model": "p", "acc": None}]
    assert ranking_notes(comp, lacks, bare) == []  # type: ignore[arg-type]
    marked: list[dict[str, Cell | float | str | None]] = [
        {"model": "m", "acc": Cell(0.5, mark=HEADLINE_MARK)},
        {"model": "p", "acc": Cell(0.4, mark=ROW_MARK)}]
    notes = ranking_notes(comp, lacks, marked)  # type: ignore[arg-type]
    assert [n[0] for n in notes] == [ROW_MARK, HEADLINE_MARK]
