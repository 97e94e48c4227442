"""The Ancient-Bench summary body folded one record at a time (streamed ``run`` / ``score``).

:class:`BodySink` is the benchmark's :class:`~heritage_eval.core.benchmark.RecordSink`:
the engine hands it each envelope as the envelope's ``samples.jsonl`` line is written and
drops the record; the sink keeps only its :class:`~.records.RowFacts` (scores, edit
counts, state, error reason), in the columns of a :class:`~.fact_table.FactTable` (about
60 bytes per row), and the model-failure / truncation counters, so a run's memory does not
grow with the texts of its samples. :meth:`BodySink.body` gives the same
dict as ``build_summary`` over the rows read back from the records (``to_row``) plus,
for ``run``, :func:`heritage_eval.benchmarks.outcomes.outcomes_body` — the tables are
sums in record order either way, so the numbers are equal, not merely close.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heritage_eval.benchmarks.ancient_bench.envelope import facts_of
from heritage_eval.benchmarks.ancient_bench.fact_table import FactTable
from heritage_eval.benchmarks.ancient_bench.report import build_summary
from heritage_eval.benchmarks.outcomes import OutcomeCounts
from heritage_eval.core.benchmark import RecordSink
from heritage_eval.core.record import SampleRecord


class BodySink(RecordSink):
    """The summary body of ``run`` / ``score ancient-bench`` from streamed records.

    ``models``: the result entries' order; ``categories``: the folder names in table
    order; ``protocol``: the protocol block; ``warnings``: loader notes (more may be
    appended until :meth:`body`); ``missing``: the ``{"model", "id", "path"}`` of each
    absent prediction file (``score``; appended while streaming); ``outcomes_policy``:
    the ``--refusals`` policy, or ``None`` for no ``truncation`` / ``refusals`` keys
    (``score``: predictions made elsewhere have no response details)."""

    def __init__(self, models: Sequence[str], categories: list[str],
                 protocol: dict[str, Any], warnings: Sequence[str] = (),
                 outcomes_policy: str | None = None) -> None:
        self.models = list(models)
        self.categories = categories
        self.protocol = protocol
        self.warnings = list(warnings)
        self.missing: list[dict[str, str]] = []
        self.facts = FactTable()
        self.outcomes = (OutcomeCounts("medium", outcomes_policy)
                         if outcomes_policy is not None else None)

    def add(self, record: SampleRecord) -> None:
        self.facts.add(facts_of(record))
        if self.outcomes is not None:
            self.outcomes.add(record)

    def body(self) -> dict[str, Any]:
        """``build_summary`` of the rows (without ``provenance``: the platform's replaces
        it), plus the outcomes keys when counted."""
        body = build_summary(self.facts, self.models, self.categories, self.protocol, {},
                             missing=self.missing, warnings=self.warnings)
        body.pop("provenance")
        if self.outcomes is not None:
            body.update(self.outcomes.body())
        return body
