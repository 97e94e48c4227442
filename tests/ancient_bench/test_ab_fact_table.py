"""FactTable keeps every fact a summary reads, exactly (floats bit for bit, None kept)."""

from __future__ import annotations

import pytest

from heritage_eval.benchmarks.ancient_bench.fact_table import INT_FIELDS, FactTable
from heritage_eval.benchmarks.ancient_bench.records import RowFacts
from heritage_eval.core.types import Outcome

FIELDS = ("model", "id", "category", "state", "ned_score", "f1", "error", "error_kind",
          *INT_FIELDS)


def _facts() -> list[RowFacts]:
    scored = RowFacts(model="m", id="seals/印一", category="seals", state=Outcome.SCORED,
                      ned_score=0.1 + 0.2, f1=2 / 3, error=None, error_kind=None,
                      insertions=0, deletions=3, substitutions=1, st_only_substitutions=0,
                      n_pred_tokens=5, n_gt_tokens=8, metadata={"script": "篆", "x": 1})
    error = RowFacts(model="n", id="cliff_carvings/line4", category="cliff_carvings",
                     state=Outcome.ERROR, ned_score=None, f1=None,
                     error="conv.jsonl:4: malformed JSON", error_kind="data",
                     insertions=None, deletions=None, substitutions=None,
                     st_only_substitutions=None, n_pred_tokens=None, n_gt_tokens=None,
                     metadata={})
    return [scored, error, scored]


def test_rows_read_back_equal_the_facts() -> None:
    table = FactTable()
    facts = _facts()
    for f in facts:
        table.add(f)
    assert len(table) == 3
    for f, row in zip(facts, table, strict=True):
        for name in FIELDS:
            if name != "id":
                assert getattr(row, name) == getattr(f, name), name
        # ids are kept for the rows in error only (what the summary's errors list names)
        assert row.id == (f.id if f.state is Outcome.ERROR else "")
        assert dict(row.metadata) == dict(f.metadata)
    # 0.1 + 0.2 is 0.30000000000000004: stored as the same double, not rounded
    assert table[0].ned_score == 0.30000000000000004
    assert dict(table[-1].metadata) == {"script": "篆"}  # only script / period are facts
    assert [r.id for r in table[1:]] == ["cliff_carvings/line4", ""]
    with pytest.raises(IndexError):
        table[3]


def test_a_count_too_large_for_16_bits_widens_its_column() -> None:
    # counts are kept as 16-bit ints (-1: None) until one does not fit: 40,000 predicted
    # tokens (a runaway answer) and the rows before it still read back as written.
    table = FactTable()
    first, error, _ = _facts()
    big = RowFacts(**{name: getattr(first, name) for name in RowFacts.__slots__})
    big.n_pred_tokens, big.insertions = 40_000, 32_768
    for f in (first, error, big):
        table.add(f)
    assert [r.n_pred_tokens for r in table] == [5, None, 40_000]
    assert [r.insertions for r in table] == [0, None, 32_768]
    assert [r.deletions for r in table] == [3, None, 3]  # this column stayed 16-bit


def test_rows_of_a_model_in_order() -> None:
    # models m, n, m: the view of m holds rows 0 and 2, of n row 1; an unknown model none
    table = FactTable()
    for f in _facts():
        table.add(f)
    assert [r.model for r in table.rows_of("m")] == ["m", "m"]
    assert [r.id for r in table.rows_of("n")] == ["cliff_carvings/line4"]
    assert table.rows_of("n")[0].state is Outcome.ERROR
    assert len(table.rows_of("absent")) == 0


def test_ids_kept_exactly_for_the_rows_with_an_error_reason_or_kind() -> None:
    # the rule: a row with ``error`` or ``error_kind`` set keeps its id; any other reads "".
    # Grid: every combination of error set / kind set over two states.
    table = FactTable()
    first, _, _ = _facts()
    expected = []
    for n, (error, kind) in enumerate([(None, None), ("why", None), (None, "api"),
                                       ("why", "data")]):
        row = RowFacts(**{name: getattr(first, name) for name in RowFacts.__slots__})
        row.id, row.error, row.error_kind = f"seals/{n}", error, kind
        table.add(row)
        expected.append("" if error is None and kind is None else f"seals/{n}")
    assert [r.id for r in table] == expected
    assert [(r.error, r.error_kind) for r in table] == [
        (None, None), ("why", None), (None, "api"), ("why", "data")]
