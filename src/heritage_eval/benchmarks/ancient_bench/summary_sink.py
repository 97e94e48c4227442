"""The Ancient-Bench summary body folded one record at a time (streamed ``run`` / ``score``).

:class:`BodySink` is the benchmark's :class:`~heritage_eval.core.benchmark.RecordSink`:
the engine hands it each envelope as the envelope's ``samples.jsonl`` line is written and
drops the record; the sink keeps only its :class:`~.records.RowFacts` (scores, edit
counts, state, error reason), in the columns of a :class:`~.fact_table.FactTable` (about
about 60 bytes per row), and the truncation / refusal counters, so a run's memory does not grow
with the texts of its samples. :meth:`BodySink.body` gives the same
dict as ``build_summary`` over the rows read back from the records (``to_row``) plus,
for ``run``, :func:`heritage_eval.benchmarks.outcomes.outcomes_body` — the tables are
sums in record order either way, so the numbers are equal, not merely close.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from heritage_eval.benchmarks.ancient_bench.envelope import facts_of
from heritage_eval.benchmarks.ancient_bench.fact_table import FactTable
from heritage_eval.benchmarks.ancient_bench.report import build_summary
from heritage_eval.benchmarks.outcomes import is_truncated, refusal_kind
from heritage_eval.core.benchmark import RecordSink
from heritage_eval.core.record import ResponseRecord, SampleRecord


class _Rate:
    """``{"n_responses", "n_truncated", "rate"}`` of ``outcomes._rate``, counted."""

    __slots__ = ("n_cut", "n_responses")

    def __init__(self) -> None:
        self.n_responses = 0
        self.n_cut = 0

    def add(self, resp: ResponseRecord | None) -> None:
        if resp is not None and resp.text is not None:
            self.n_responses += 1
            self.n_cut += is_truncated(resp)

    def block(self) -> dict[str, Any]:
        return {"n_responses": self.n_responses, "n_truncated": self.n_cut,
                "rate": self.n_cut / self.n_responses if self.n_responses else None}


class OutcomeCounts:
    """:func:`heritage_eval.benchmarks.outcomes.outcomes_body` folded one record at a
    time: per model the truncation rate overall and per ``group_key`` value (first-seen
    order) and the refusal kinds."""

    def __init__(self, group_key: str, policy: str) -> None:
        self.group_key = group_key
        self.policy = policy
        self._overall: dict[str, _Rate] = {}
        self._groups: dict[str, dict[str, _Rate]] = {}
        self._kinds: dict[str, Counter[str]] = {}

    def add(self, record: SampleRecord) -> None:
        """Count ``record``'s scored response."""
        turn = record.scored_turn
        resp = turn.response if turn is not None else None
        model = record.model
        if model not in self._overall:
            self._overall[model], self._groups[model] = _Rate(), {}
            self._kinds[model] = Counter()
        self._overall[model].add(resp)
        if self.group_key in record.groups:
            value = record.groups[self.group_key]
            self._groups[model].setdefault(value, _Rate()).add(resp)
        kind = refusal_kind(resp)
        if kind:
            self._kinds[model][kind] += 1

    def body(self) -> dict[str, Any]:
        """``{"truncation": …, "refusals": …}`` as ``outcomes_body`` returns it."""
        truncation = {m: {"by": self.group_key, "overall": rate.block(),
                          "groups": {g: r.block() for g, r in self._groups[m].items()}}
                      for m, rate in self._overall.items()}
        refusals = {m: {"n": sum(k.values()), "kinds": dict(sorted(k.items())),
                        "policy": self.policy} for m, k in self._kinds.items()}
        return {"truncation": truncation, "refusals": refusals}


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
