"""The ``run muse`` summary body folded one record at a time (the streamed ``run``).

:class:`MuseSink` is the benchmark's :class:`~heritage_eval.core.benchmark.RecordSink`:
the engine hands it each record as its ``samples.jsonl`` line is written and drops it.
Per model it folds the record's turn row (:func:`.records.row_of`) into a
:class:`~.analysis.summary_fold.SummaryFold`, keeps the first chance-floor entry of each
open-answer task (as :func:`.records.turn_rows`) and counts the model failures
(:class:`~heritage_eval.core.failure_counts.OutcomeCounts`). :meth:`MuseSink.body` is
then ``Muse.aggregate`` of the records added: the same fold over the same rows in the
same order, so the same numbers.
"""

from __future__ import annotations

from typing import Any

from heritage_eval.benchmarks.muse.analysis.summary_fold import SummaryFold
from heritage_eval.benchmarks.muse.records import bad_row_of, row_of
from heritage_eval.core.benchmark import RecordSink
from heritage_eval.core.failure_counts import OutcomeCounts
from heritage_eval.core.record import SampleRecord


class MuseSink(RecordSink):
    """``{"benchmark": "muse", "results": [one block per model], …outcome keys}`` from
    streamed records. ``embedder_id``: the embedder named in each block (``None``: none);
    ``policy``: the model-failure rule (``wrong`` / ``exclude``)."""

    def __init__(self, embedder_id: str | None, policy: str) -> None:
        self.embedder_id = embedder_id
        self.folds: dict[str, SummaryFold] = {}
        self.floors: dict[str, dict[str, dict[str, Any]]] = {}
        self.outcomes = OutcomeCounts("task", policy)

    def add(self, record: SampleRecord) -> None:
        fold = self.folds.get(record.model)
        if fold is None:
            fold = self.folds[record.model] = SummaryFold()
            self.floors[record.model] = {}
        self.outcomes.add(record)
        if record.details.get("unreadable_line"):
            fold.add_bad(bad_row_of(record))
            return
        fold.add(row_of(record))
        floor = record.details.get("chance_floor")
        if isinstance(floor, dict):
            self.floors[record.model].setdefault(record.groups.get("task", ""), floor)

    def body(self) -> dict[str, Any]:
        results = [fold.result(model, {"embedder": self.embedder_id}, self.floors[model])
                   for model, fold in self.folds.items()]
        return {"benchmark": "muse", "results": results, **self.outcomes.body()}
