"""The per-model interval table of a run's summary (``report.run_tables.model_table``)."""

from __future__ import annotations

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.run_tables import model_table
from heritage_eval.core.summary import envelope
from heritage_eval.core.types import Outcome

SPEC = MetricSpec(name="acc", label="Acc", macro_over="medium")


def record(i: int, medium: str, state: Outcome, acc: float | None) -> SampleRecord:
    return SampleRecord(benchmark="b", model="m", id=f"s{i}", state=state,
                        scores={} if acc is None else {"acc": acc}, groups={"medium": medium})


def test_overall_n_counts_the_samples_scored_as_the_group_rows_do() -> None:
    # seals: 2 scored + 1 error, slips: 3 scored + 1 error -> group rows n = 2 and 3;
    # Overall n = 5 (the samples its estimate counts), not the 7 records.
    recs = [record(0, "seals", Outcome.SCORED, 1.0), record(1, "seals", Outcome.SCORED, 0.0),
            record(2, "seals", Outcome.ERROR, None), record(3, "slips", Outcome.SCORED, 1.0),
            record(4, "slips", Outcome.SCORED, 1.0), record(5, "slips", Outcome.SCORED, 0.0),
            record(6, "slips", Outcome.ERROR, None)]
    summary = envelope("b", recs, [SPEC], ["medium"])
    table = model_table(summary, "m", "medium")
    assert [(r["group"], r["n"]) for r in table.rows] == [("seals", 2.0), ("slips", 3.0),
                                                          ("Overall", 5.0)]
    # the macro mean of the media means: (1/2 + 2/3) / 2 = 7/12
    assert abs(table.rows[-1]["acc"].value - 7 / 12) < 1e-12  # type: ignore[union-attr]
