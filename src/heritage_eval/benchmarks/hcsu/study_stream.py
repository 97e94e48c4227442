"""A study's records streamed, condition by condition, at flat memory.

A study (``hcsu k-sweep``, ``ablation`` …) runs one task per condition (a K, a
description mode). :class:`StudyStream` writes each record's ``samples.jsonl`` line as
it comes (:class:`~heritage_eval.core.store.AtomicLineWriter`: a temporary file renamed
at the end) and folds it into

* the study's statistics envelope (:class:`~heritage_eval.core.summary.
  EnvelopeAccumulator`, grouped by the study's tags and the HCSU groups), as a streamed
  ``run`` builds it (:func:`heritage_eval.core.run_output.stream_samples`);
* the condition's ``results`` entry (the run path's sink,
  :class:`~.summary_sink.DiscriminationSink`);
* the condition's interval block (:class:`~heritage_eval.core.summary.ModelFacts`
  grouped by ``domain``): the figures' error bars (:mod:`.figures`).

No record is kept: per record only the accumulators' per-sample numbers stay. The
numbers equal those of the listed path (tests/hcsu/test_study_streaming.py).
:func:`stream_conditions` runs a discrimination study's conditions into a stream;
:func:`discrimination_stream` gives a condition's records one at a time, as
:func:`~.pipeline.run_discrimination` followed by :func:`~.sample_records.run_records`
and :func:`~heritage_eval.core.model_failures.mark_records` lists them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from heritage_eval.benchmarks.hcsu.description import DescriptionConfig, PlannedRequest
from heritage_eval.benchmarks.hcsu.description_stream import (
    DescriptionScoring,
    iter_description_records,
)
from heritage_eval.benchmarks.hcsu.discrimination import DiscriminationConfig, PlannedItem
from heritage_eval.benchmarks.hcsu.pipeline import Engine, class_references
from heritage_eval.benchmarks.hcsu.records import Record
from heritage_eval.benchmarks.hcsu.sample_records import (
    IdTag,
    description_record,
    discrimination_record,
)
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.benchmarks.hcsu.scoring import discrimination_records
from heritage_eval.benchmarks.hcsu.summary_sink import (
    DescriptionSink,
    DiscriminationSink,
    HcsuSink,
)
from heritage_eval.benchmarks.outcomes import DEFAULT_POLICY, mark_records
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.model_failures import apply_to_one
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.runner import ItemResult, progress_bar, stream_items
from heritage_eval.core.store import AtomicLineWriter
from heritage_eval.core.streamed_results import OnePassResults, SamplePlan, in_sample_order
from heritage_eval.core.summary import EnvelopeAccumulator, ModelFacts
from heritage_eval.metrics.bertscore import BertScorer


class Condition:
    """One condition of a study: its ``tags`` (e.g. ``{"k": 4}``), the run path's
    ``sink`` (its :meth:`entry` is the ``results`` entry) and the interval block of
    ``metrics`` grouped by ``domain`` (:meth:`intervals`)."""

    def __init__(self, tags: Mapping[str, Any], sink: HcsuSink,
                 metrics: Sequence[MetricSpec]) -> None:
        self.tags = dict(tags)
        self.sink = sink
        self.facts = ModelFacts(metrics, ("domain",))

    def add(self, record: SampleRecord) -> None:
        """Fold ``record`` in."""
        self.sink.add(record)
        self.facts.add(record)

    @property
    def n_records(self) -> int:
        """Records folded so far."""
        return self.sink.n_records

    def entry(self) -> dict[str, Any]:
        """The ``results`` entry of ``summary.json`` (the listed path's
        :meth:`~.studies.StudyRun.entry`)."""
        return self.sink.entry()

    def intervals(self) -> dict[str, Any]:
        """The condition's interval block (:func:`~heritage_eval.core.summary.
        model_block` of its records): ``metrics`` (over all domains; macro over the
        metric's ``macro_over``) and ``groups.domain.<domain>`` (pooled within it)."""
        return self.facts.block()


class StudyStream:
    """``samples.jsonl`` of a study written as its records come, with the study's
    envelope and the conditions' tallies (module docstring). Use as a context manager:
    the file is in place when the block ends normally; raises ``OSError`` when the
    folder cannot be written."""

    def __init__(self, path: Path, metrics: Sequence[MetricSpec],
                 group_keys: Sequence[str]) -> None:
        self.metrics = tuple(metrics)
        self.writer = AtomicLineWriter(path)
        self.envelope = EnvelopeAccumulator(self.metrics, group_keys)
        self.conditions: list[Condition] = []

    def __enter__(self) -> StudyStream:
        self.writer.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.writer.__exit__(kind, exc, tb)

    def condition(self, tags: Mapping[str, Any], sink: HcsuSink) -> Condition:
        """A new condition (``tags``, results from ``sink``), listed in order."""
        cond = Condition(tags, sink, self.metrics)
        self.conditions.append(cond)
        return cond

    def add(self, condition: Condition, records: Iterator[SampleRecord]) -> None:
        """Write and fold every record of ``records`` (one condition's) as it comes."""
        for record in records:
            self.writer.write(record.to_json_line())
            self.envelope.add(record)
            condition.add(record)

    def results(self) -> list[dict[str, Any]]:
        """The ``results`` list: one entry per condition, in order."""
        return [c.entry() for c in self.conditions]

    def intervals(self, key: str) -> dict[str, dict[str, Any]]:
        """``str(tag value of key)`` -> the condition's interval block
        (:meth:`Condition.intervals`), for the figures."""
        return {str(c.tags[key]): c.intervals() for c in self.conditions}

    @property
    def n_records(self) -> int:
        """Records written so far."""
        return self.envelope.n_records

    def answered(self) -> bool:
        """Whether any record so far ended ``scored`` or ``unparsed``."""
        return self.envelope.answered() > 0


def discrimination_stream(config: DiscriminationConfig, plan: Sequence[PlannedItem],
                          engine: Engine, root: Path, tags: Mapping[str, Any],
                          id_tag: IdTag, desc: str) -> Iterator[SampleRecord]:
    """The records of one discrimination condition, in plan order, one at a time: each
    question sent (:func:`~heritage_eval.core.runner.stream_items`, a window of requests
    in flight), its answer under the studies' model-failure rule (``wrong``), scored,
    enveloped (``tags`` in ``groups``, ``id_tag`` in the id; images under ``root``) and
    flagged; nothing kept after its record."""
    fix = apply_to_one(DEFAULT_POLICY)
    settings = {"distractor_pool": config.pool, "descriptions": config.descriptions}
    model = engine.backend.spec
    bar = progress_bar(len(plan), desc, model)  # the total shown, as run_items showed it
    order = SamplePlan(plan, lambda p: p.question.conversation() if p.question else None,
                       on_skip=lambda: bar.update(1))
    stream = stream_items(order.items(), engine.backend, engine.settings, engine.cache,
                          engine.concurrency, desc=desc, bar=bar)
    with bar, contextlib.closing(stream):
        pairs = in_sample_order(order, stream)
        for item, (sid, res) in zip(plan, pairs, strict=True):
            got = {} if res is None else {sid: fix(res)}
            (row,) = discrimination_records([item], got)
            record = discrimination_record(item, row, got.get(sid), model, root, tags,
                                           id_tag, settings)
            mark_records([record], DEFAULT_POLICY)
            yield record


def stream_conditions(stream: StudyStream, dataset: HcsuDataset, base: DiscriminationConfig,
                      plans: Mapping[Any, Sequence[PlannedItem]], engine: Engine, tag: str,
                      desc: str) -> None:
    """Run, score and stream every planned condition of a discrimination study into
    ``stream``, in order: ``plans`` maps each value of ``tag`` (the config field and the
    record tag that tell the conditions apart: ``k``, ``descriptions``) to its
    questions; ``desc``: the progress label, ``{}`` standing for the value. Each
    condition's ``results`` entry comes from a :class:`~.summary_sink.
    DiscriminationSink` (the ``run`` path's, under the ``wrong`` rule)."""
    for value, plan in plans.items():
        config = dataclasses.replace(base, **{tag: value})
        sink = DiscriminationSink(engine.backend.spec, dataset.problems, DEFAULT_POLICY,
                                  config)
        cond = stream.condition({tag: value}, sink)
        stream.add(cond, discrimination_stream(config, plan, engine, dataset.root,
                                               {tag: value}, tag, desc.format(value)))


def description_stream(plan: Sequence[PlannedRequest], engine: Engine,
                       scoring: DescriptionScoring, root: Path, tags: Mapping[str, Any],
                       id_tag: IdTag, desc: str) -> Iterator[SampleRecord]:
    """The records of one description condition, in plan order: each request sent
    (:func:`~heritage_eval.core.runner.stream_items`), its answer under the ``wrong``
    rule, scored a window at a time (:func:`~.description_stream.
    iter_description_records`: BERTScore and the judge per window, empty answers held
    until their zeros are known), enveloped (``tags``, ``id_tag``) and flagged."""
    model = engine.backend.spec
    bertscore, judged = scoring.scorer is not None, scoring.judge is not None
    bar = progress_bar(len(plan), desc, model)
    order = SamplePlan(plan, lambda p: p.request.conversation() if p.request else None,
                       on_skip=lambda: bar.update(1))
    stream = stream_items(order.items(), engine.backend, engine.settings, engine.cache,
                          engine.concurrency, desc=desc, bar=bar)

    def make(item: PlannedRequest, row: Record, res: ItemResult | None,
             zeros: Mapping[str, set[str]]) -> SampleRecord:
        record = description_record(item, row, res, model, root, zeros,
                                    bertscore=bertscore, judged=judged, tags=tags,
                                    id_tag=id_tag)
        mark_records([record], DEFAULT_POLICY)
        return record

    with bar, contextlib.closing(stream):
        yield from iter_description_records(
            plan, OnePassResults(in_sample_order(order, stream)),
            apply_to_one(DEFAULT_POLICY), scoring, make, contextlib.nullcontext)


def stream_description_conditions(stream: StudyStream, dataset: HcsuDataset,
                                  base: DescriptionConfig,
                                  plans: Mapping[int, Sequence[PlannedRequest]],
                                  engine: Engine, scorer: BertScorer | None,
                                  scorer_error: str | None, judge: Engine | None) -> None:
    """Run, score and stream every planned shot count of the shot sweep into ``stream``
    (``plans``: shot count -> requests; tag ``shots``); each condition's ``results``
    entry comes from a :class:`~.summary_sink.DescriptionSink` (the ``run`` path's)."""
    references = class_references(dataset)
    scoring = DescriptionScoring(dataset, scorer, scorer_error, judge)
    for shots, plan in plans.items():
        config = dataclasses.replace(base, shots=shots)
        sink = DescriptionSink(engine.backend.spec, dataset.problems, DEFAULT_POLICY, config,
                               scorer, scorer_error, references,
                               judge.backend.spec if judge else None)
        cond = stream.condition({"shots": shots}, sink)
        stream.add(cond, description_stream(plan, engine, scoring, dataset.root,
                                             {"shots": shots}, "shots", f"{shots}-shot"))
