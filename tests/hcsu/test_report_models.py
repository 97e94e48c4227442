"""``hcsu report`` merges study folders of several models: every study table names the
model of each row (``tables._model_of``), so two models' rows never look alike."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_merged_robustness_rows_name_their_k_and_a_folder_counts_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse
    import json

    from heritage_eval.benchmarks.hcsu.report import merged_table, report

    disc = {"Bei": {"accuracy": 0.5, "macro_f1": 0.5, "macro_recall": 0.5,
                    "macro_precision": 0.5, "n": 2}}

    def summary(k: int) -> dict[str, object]:
        return {"benchmark": "hcsu-robustness",
                "provenance": {"task": {"discrimination": {"k": k}}},
                "results": [{"condition": "Origin", "discrimination": disc,
                             "discrimination_model": "m"}]}

    got = [r[:3] for r in _rows(merged_table([summary(5), summary(4)]))]
    assert got == [["m", "Origin", "5"], ["m", "Origin", "4"]]  # K tells them apart
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(summary(5)), encoding="utf-8")
    twice = argparse.Namespace(runs=[run, tmp_path / "." / "run"], out=None)
    assert report(twice) == 2
    assert "are the same run folder" in capsys.readouterr().err
