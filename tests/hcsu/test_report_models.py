"""``hcsu report`` merges study folders of several models: every study table names the
model of each row (``tables._model_of``), so two models' rows never look alike."""

from __future__ import annotations

from heritage_eval.benchmarks.hcsu.tables import (
    k_sweep_table,
    robustness_table,
    shot_sweep_table,
)


def _rows(table: str) -> list[list[str]]:
    lines = [ln for ln in table.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def test_robustness_rows_name_their_models() -> None:
    disc = {"Bei": {"accuracy": 0.5, "macro_f1": 0.5, "macro_recall": 0.5,
                    "macro_precision": 0.5, "n": 2}}
    rows = [{"condition": "Wild (Raw)", "discrimination": disc, "discrimination_model": "a"},
            {"condition": "Wild (Raw)", "discrimination": disc, "discrimination_model": "b",
             "description_model": "c"},
            {"condition": "Origin", "discrimination": disc, "discrimination_model": "d",
             "description_model": "d"}]
    got = [r[:2] for r in _rows(robustness_table(rows))]
    # by hand: the discrimination model, "A / B" when the description model differs
    assert got == [["a", "Wild (Raw)"], ["b / c", "Wild (Raw)"], ["d", "Origin"]]


def test_sweep_rows_name_their_models() -> None:
    k_rows = [{"model": m, "k": 4, "per_domain": {}, "avg_accuracy": 0.5} for m in "xy"]
    assert [r[0] for r in _rows(k_sweep_table(k_rows))] == ["x", "y"]
    s_rows = [{"model": m, "shots": 2, "per_domain": {}} for m in "xy"]
    assert [r[0] for r in _rows(shot_sweep_table(s_rows))] == ["x", "y"]
