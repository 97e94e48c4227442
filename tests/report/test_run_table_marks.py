"""The interval tables' footnotes name exactly the marks the printed rows show, and a
model with no estimate gets one line instead of a table of dashes with n 0
(``core/run_tables.py``: ``mark_notes``, ``has_values``; the HCSU study headline)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.hcsu.markdown import condition_markdown
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.engine import headline_lines, intervals_markdown
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.run_tables import (
    FLAG_NOTE,
    NO_INTERVAL_NOTE,
    NOTHING_SCORED,
    group_table,
    model_table,
)
from heritage_eval.core.summary import envelope
from heritage_eval.core.types import Outcome

SPECS = [{"name": "acc", "label": "Acc", "decimals": 1, "scale": 100.0,
          "higher_is_better": True},
         {"name": "f1", "label": "F1", "decimals": 1, "scale": 100.0,
          "higher_is_better": True}]
FLAGS = ["few_clusters", "n_1", "one_cluster", "constant", "one_sample_group"]

estimates = st.one_of(
    st.none(),
    st.fixed_dictionaries({
        "value": st.one_of(st.none(), st.floats(0, 1)),
        "ci": st.booleans(),
        "flags": st.lists(st.sampled_from(FLAGS), unique=True, max_size=3),
        "n": st.integers(0, 50)}))


def _est(raw: dict[str, Any] | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    v = raw["value"]
    lo, hi = (v, v) if raw["ci"] and v is not None else (None, None)
    return {"value": v, "ci_low": lo, "ci_high": hi, "flags": raw["flags"], "n": raw["n"]}


def _block(pair: tuple[Any, Any]) -> dict[str, Any]:
    """The estimates of one row: ``acc`` and ``f1`` from a pair of drawn estimates."""
    made = {"acc": _est(pair[0]), "f1": _est(pair[1])}
    return {k: e for k, e in made.items() if e is not None}


def _summary(groups: dict[str, dict[str, Any]], overall: dict[str, Any]) -> dict[str, Any]:
    return {"benchmark": "b", "group_keys": ["condition"],
            "statistics": {"metric_specs": SPECS},
            "models": {"m": {"n_records": 9, "metrics": overall,
                             "groups": {"condition": groups}}}}


def _expected(ests: list[dict[str, Any] | None]) -> list[str]:
    """The rule, from the raw estimates: a note for "—" when a shown value has no
    interval, for "†" when a shown value has a flag other than n_1 / one_cluster."""
    shown = [e for e in ests if e and e["value"] is not None]
    notes = []
    if any(e["ci_low"] is None for e in shown):
        notes.append(NO_INTERVAL_NOTE)
    if any(set(e["flags"]) - {"n_1", "one_cluster"} for e in shown):
        notes.append(FLAG_NOTE)
    return notes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(estimates, estimates), min_size=1, max_size=4),
       st.tuples(estimates, estimates))
def test_footnotes_name_exactly_the_marks_shown(rows: list[tuple[Any, Any]],
                                                overall: tuple[Any, Any]) -> None:
    groups = {f"c{i}": _block(pair) for i, pair in enumerate(rows)}
    top = _block(overall)
    summary = _summary(groups, top)
    every = [*(e for g in groups.values() for e in g.values()), *top.values()]
    assert model_table(summary, "m", "condition").footnotes == _expected(every)
    group_notes = group_table(summary, "condition").footnotes
    assert [n for n in group_notes if n in (NO_INTERVAL_NOTE, FLAG_NOTE)] == _expected(every)
    # the study headline leaves the pooled Overall row out, and its notes with it
    md = condition_markdown(summary, "condition")
    rows_only = [e for g in groups.values() for e in g.values()]
    shown = [e for e in rows_only if e["value"] is not None]
    assert (FLAG_NOTE in md) == (FLAG_NOTE in _expected(rows_only))
    assert (NOTHING_SCORED in md) == (not shown)


def test_a_flag_on_an_empty_estimate_or_a_left_out_row_gets_no_note() -> None:
    empty_flagged = {"value": None, "ci_low": None, "ci_high": None,
                     "flags": ["constant"], "n": 0}
    flagged = {"value": 0.5, "ci_low": 0.2, "ci_high": 0.8, "flags": ["few_clusters"], "n": 4}
    plain = {"value": 0.5, "ci_low": 0.2, "ci_high": 0.8, "flags": [], "n": 4}
    summary = _summary({"a": {"acc": plain, "f1": empty_flagged}}, {"acc": flagged})
    assert model_table(summary, "m", "condition").footnotes == [FLAG_NOTE]  # Overall's †
    md = condition_markdown(summary, "condition")
    assert "†" not in md.split("No pooled headline")[0]  # Overall left out: no † shown


SPEC = MetricSpec(name="bertscore", label="BERTScore", macro_over="domain")


def test_a_run_that_scored_nothing_prints_one_line_not_a_table() -> None:
    # what `run hcsu-description --no-bertscore` gives: answered records, no score
    recs = [SampleRecord(schema="heritage-eval/sample/1", benchmark="b", model="m",
                         id=f"s{i}", state=Outcome.UNSCORED, scores={}, groups={"domain": d})
            for i, d in enumerate(["bei", "tie", "bei"])]
    summary = envelope("b", recs, [SPEC], ["domain"])
    lines = headline_lines(summary)
    assert lines == ["", "m — value [95 % interval]:", NOTHING_SCORED]
    md = intervals_markdown(summary)
    assert f"**m**: {NOTHING_SCORED}" in md and FLAG_NOTE not in md and "| n" not in md
