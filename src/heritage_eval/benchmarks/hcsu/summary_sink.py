"""The HCSU summary bodies folded one record at a time (streamed ``run hcsu-*``).

:class:`DiscriminationSink` and :class:`DescriptionSink` are the two benchmarks'
:class:`~heritage_eval.core.benchmark.RecordSink`: the engine hands each one every
envelope as its ``samples.jsonl`` line is written and drops the record. A sink keeps
only what the body needs, read back from the envelope's groups, state, scores and
details: per domain the answered rows' true and predicted classes (interned strings;
discrimination) or the numbers behind each mean (:mod:`.description_tally`;
description), the error and judge digests' counters, the classes answered, and the
model-failure / truncation counters (:class:`~heritage_eval.benchmarks.outcomes.
OutcomeCounts`). :meth:`~HcsuSink.body` is the dict
:meth:`~.bench_base.HcsuBenchmark.body` gives over the listed records — the same
functions over the same values in the same order, so the numbers are equal, not merely
close (tests/hcsu/test_streaming_equality.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heritage_eval.benchmarks.hcsu.description import DescriptionConfig
from heritage_eval.benchmarks.hcsu.description_tally import DomainTally, JudgeTally
from heritage_eval.benchmarks.hcsu.discrimination import DiscriminationConfig
from heritage_eval.benchmarks.hcsu.judging import RICHNESS, TERMINOLOGY
from heritage_eval.benchmarks.hcsu.pipeline import (
    description_extra,
    discrimination_extra,
    self_score,
)
from heritage_eval.benchmarks.hcsu.records import ANSWERED, ErrorTally, Record
from heritage_eval.benchmarks.hcsu.schema import DOMAINS
from heritage_eval.benchmarks.hcsu.scoring import domain_entry
from heritage_eval.benchmarks.outcomes import OutcomeCounts
from heritage_eval.core.benchmark import RecordSink
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.types import Outcome
from heritage_eval.metrics.bertscore import BertScorer


class HcsuSink(RecordSink):
    """What both sinks share: the error digest, the outcome counters (by domain, under
    ``policy``), the number of records, and the body around the task's ``results``
    entry. ``model``: the model spec; ``problems``: the data problems (listed as they
    are)."""

    def __init__(self, model: str, problems: Sequence[str], policy: str) -> None:
        self.model = model
        self.problems = list(problems)
        self.errors = ErrorTally()
        self.outcomes = OutcomeCounts("domain", policy)
        self.n_records = 0

    def count(self, record: SampleRecord, outcome: str) -> str:
        """Count ``record`` (task row ``outcome``) in the shared counters; its domain."""
        self.n_records += 1
        domain = record.groups["domain"]
        self.errors.add(domain, outcome, record.error)
        self.outcomes.add(record)
        return domain

    def entry(self) -> dict[str, Any]:
        """The task's ``results`` entry (``model``, ``per_domain``, extra fields)."""
        raise NotImplementedError

    def body(self) -> dict[str, Any]:
        """The summary body: ``results``, ``problems``, ``metrics_off`` (when any:
        :mod:`.metrics_off`) and the outcome keys."""
        from heritage_eval.benchmarks.hcsu.metrics_off import metrics_off

        results = [self.entry()]
        off = metrics_off(results)
        return {"results": results, "problems": list(self.problems),
                **({"metrics_off": off} if off else {}), **self.outcomes.body()}


class _Classes:
    """One domain of a discrimination run: the answered rows' true and predicted classes
    (``None``: unparsed) and the number of rows."""

    __slots__ = ("n_rows", "pred", "true")

    def __init__(self) -> None:
        self.n_rows = 0
        self.true: list[str] = []
        self.pred: list[str | None] = []


class DiscriminationSink(HcsuSink):
    """The ``run hcsu-discrimination`` body (``config``: the task config, for the
    settings and Avg. Acc)."""

    def __init__(self, model: str, problems: Sequence[str], policy: str,
                 config: DiscriminationConfig) -> None:
        super().__init__(model, problems, policy)
        self.config = config
        self.domains: dict[str, _Classes] = {}
        self._names: dict[str, str] = {}  # one string object per class name

    def _name(self, value: Any) -> Any:
        return value if value is None else self._names.setdefault(value, value)

    def add(self, record: SampleRecord) -> None:
        outcome = record.state.value
        domain = self.count(record, outcome)
        tally = self.domains.setdefault(domain, _Classes())
        tally.n_rows += 1
        if outcome in ANSWERED:
            tally.true.append(self._name(record.groups["class"]))
            tally.pred.append(self._name(record.details.get("predicted_class")))

    def entry(self) -> dict[str, Any]:
        per: dict[str, Record] = {
            d: domain_entry(d, t.true, t.pred, t.n_rows)
            for d in DOMAINS if (t := self.domains.get(d)) is not None}
        return {"model": self.model, "per_domain": per,
                **discrimination_extra(self.config, per, self.errors.digest())}


class DescriptionSink(HcsuSink):
    """The ``run hcsu-description`` body. ``config``: the task config; ``scorer``: the
    BERTScore model (``None``: ``scorer_error`` says why), used once more by
    :meth:`body` for the expert references' self-score; ``references``: class key ->
    expert description; ``judge``: the judge's spec (``None``: no judge)."""

    def __init__(self, model: str, problems: Sequence[str], policy: str,
                 config: DescriptionConfig, scorer: BertScorer | None,
                 scorer_error: str | None, references: dict[str, str],
                 judge: str | None) -> None:
        super().__init__(model, problems, policy)
        self.config = config
        self.scorer = scorer
        self.scorer_error = scorer_error
        self.references = references
        self.judge = judge
        self.domains: dict[str, DomainTally] = {}
        self.judged = JudgeTally()
        self.answered: set[str] = set()  # classes of the answered rows

    def add(self, record: SampleRecord) -> None:
        # an answer no requested metric scored is an ``unscored`` record of a ``scored`` row
        outcome = (Outcome.SCORED.value if record.state is Outcome.UNSCORED
                   else record.state.value)
        domain = self.count(record, outcome)
        det, scores = record.details, record.scores
        self.domains.setdefault(domain, DomainTally()).add(
            outcome, det.get("bertscore_status"), scores.get("bertscore_x10"),
            det.get("judge_status"),
            {TERMINOLOGY: scores.get(TERMINOLOGY), RICHNESS: scores.get(RICHNESS)},
            {TERMINOLOGY: det.get(f"expert_{TERMINOLOGY}"),
             RICHNESS: det.get(f"expert_{RICHNESS}")})
        self.judged.add(det.get("judge_status"), det.get("judge_reason"))
        if outcome in ANSWERED:
            self.answered.add(record.groups["class"])

    def entry(self) -> dict[str, Any]:
        judged = self.judge is not None
        per = {d: t.entry(judged) for d in DOMAINS if (t := self.domains.get(d)) is not None}
        extra = description_extra(self.config, self.scorer, self.scorer_error, self.judge,
                                  self.judged.digest() if judged else None,
                                  self_score(self.answered, self.references, self.scorer),
                                  self.errors.digest())
        return {"model": self.model, "per_domain": per, **extra}
