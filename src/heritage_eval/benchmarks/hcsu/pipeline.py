"""Run the HCSU tasks end to end on a loaded dataset: plan, send, score, summarize.

These functions hold no command-line logic; :mod:`.bench_base` and :mod:`.studies` call them
and write the run folders. Every model call goes through
:func:`heritage_eval.core.runner.run_items` (bounded concurrency, response cache).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from heritage_eval.benchmarks.hcsu.description import (
    DescriptionConfig,
    PlannedRequest,
    ShotIndex,
    build_request,
    build_requests,
    check_shots,
)
from heritage_eval.benchmarks.hcsu.description import check_feasible as check_requests
from heritage_eval.benchmarks.hcsu.description_scoring import (
    add_bertscore,
    add_judgments,
    description_records,
    judge_digest,
    summarize_description,
)
from heritage_eval.benchmarks.hcsu.discrimination import (
    DiscriminationConfig,
    DistractorIndex,
    PlannedItem,
    build_question,
    check_feasible,
)
from heritage_eval.benchmarks.hcsu.judging import RUBRIC, expert_item_id, judge_context
from heritage_eval.benchmarks.hcsu.lazy_plan import LazyPlan
from heritage_eval.benchmarks.hcsu.records import Record, error_digest
from heritage_eval.benchmarks.hcsu.sampling import limit_per_domain, select_targets
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.benchmarks.hcsu.scoring import (
    average_accuracy,
    average_note,
    discrimination_records,
    summarize_discrimination,
)
from heritage_eval.benchmarks.hcsu.task_defaults import PAPER_TEMPERATURE as PAPER_TEMPERATURE
from heritage_eval.benchmarks.outcomes import DEFAULT_POLICY, apply_policy
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.runner import ItemResult, RunItem, run_items
from heritage_eval.core.types import GenerationSettings
from heritage_eval.metrics.bertscore import BertScorer, BertScoreUnavailable
from heritage_eval.metrics.judge import Judgment, run_judge
from heritage_eval.models.base import ModelBackend


@dataclass
class Engine:
    """The model side of a run: backend, decoding settings, cache, concurrency."""

    backend: ModelBackend
    settings: GenerationSettings
    cache: ResponseCache | None = None
    concurrency: int | None = None


@dataclass
class TaskRun:
    """Outcome of one task run: per-sample ``records``, per-domain ``per_domain``
    summary, ``extra`` result fields (avg accuracy, metric identities)."""

    records: list[Record]
    per_domain: dict[str, Record]
    extra: dict[str, Any] = field(default_factory=dict)
    #: the planned items (:class:`PlannedItem` / :class:`PlannedRequest`, report order)
    #: and the responses received, for the sample-record envelope (:mod:`.envelope`)
    plan: list[Any] = field(default_factory=list)
    results: dict[str, ItemResult] = field(default_factory=dict)


def result_entry(model: str, run: TaskRun) -> dict[str, Any]:
    """One ``results`` entry of ``summary.json``."""
    return {"model": model, "per_domain": run.per_domain, **run.extra}


def lazy_discrimination_plan(dataset: HcsuDataset, config: DiscriminationConfig,
                             limit: int | None = None) -> LazyPlan[PlannedItem]:
    """Select the targets, check that K can be met, and return their K-way questions as
    a :class:`~.lazy_plan.LazyPlan` (each built when read; no model call).

    Raises :class:`~.sampling.HcsuConfigError` when K cannot be met by the data, so a
    caller can check a setting before opening a cache or contacting a model.
    """
    targets = limit_per_domain(select_targets(dataset, config.per_class, config.seed), limit)
    index = DistractorIndex(dataset, config.pool)
    check_feasible(dataset, targets, config, index)
    return LazyPlan(targets, functools.partial(build_question, dataset, config=config,
                                               index=index))


def plan_discrimination(dataset: HcsuDataset, config: DiscriminationConfig,
                        limit: int | None = None) -> list[PlannedItem]:
    """Select the targets and build their K-way questions (no model call): the items of
    :func:`lazy_discrimination_plan`, as a list.

    Raises :class:`~.sampling.HcsuConfigError` when K cannot be met by the data, so a
    caller can check a setting before opening a cache or contacting a model.
    """
    return list(lazy_discrimination_plan(dataset, config, limit))


def run_discrimination(dataset: HcsuDataset, config: DiscriminationConfig, engine: Engine,
                       limit: int | None = None, desc: str = "discrimination",
                       plan: list[PlannedItem] | None = None) -> TaskRun:
    """Plan the K-way questions (unless ``plan`` is given), query the model, score
    (Table 2 figures). ``extra`` holds Avg. Acc (``None`` with ``avg_accuracy_note``
    when a domain has no answered sample), the settings that distinguish runs (``k``,
    ``distractor_pool``, ``descriptions``, ``per_class``) and the error digest.

    Raises :class:`~.sampling.HcsuConfigError` when K cannot be met by the data.
    """
    if plan is None:
        plan = plan_discrimination(dataset, config, limit)
    items = [RunItem(p.target.id, p.question.conversation()) for p in plan if p.question]
    results = run_items(items, engine.backend, engine.settings, engine.cache,
                        engine.concurrency, desc=desc)
    # the studies (k-sweep, ablation …) score the model's own failures as wrong answers,
    # the default rule of the run commands (benchmarks.outcomes)
    return score_discrimination(config, plan, apply_policy(results, DEFAULT_POLICY))


def score_discrimination(config: DiscriminationConfig, plan: list[PlannedItem],
                         results: Mapping[str, ItemResult]) -> TaskRun:
    """Score the responses to ``plan`` (no model call): the Table 2 figures of
    :func:`run_discrimination`."""
    records = discrimination_records(plan, results)
    per = summarize_discrimination(records)
    return TaskRun(records, per, discrimination_extra(config, per, error_digest(records)),
                   plan=list(plan), results=dict(results))


def discrimination_extra(config: DiscriminationConfig, per: dict[str, Record],
                         errors: dict[str, Any]) -> dict[str, Any]:
    """A discrimination run's ``extra`` result fields (key order of ``summary.json``):
    Avg. Acc and its note from ``per`` (the per-domain entries), the settings and the
    error digest ``errors``."""
    return {"avg_accuracy": average_accuracy(per), "avg_accuracy_note": average_note(per),
            "k": config.k, "chance": 1.0 / config.k, "distractor_pool": config.pool,
            "descriptions": config.descriptions, "per_class": config.per_class,
            "errors": errors}


def lazy_description_plan(dataset: HcsuDataset, config: DescriptionConfig,
                          limit: int | None = None) -> LazyPlan[PlannedRequest]:
    """Select the targets, check the settings and the anti-leakage rule for every one,
    and return their N-shot requests as a :class:`~.lazy_plan.LazyPlan` (each built
    when read; no model call). Raises :class:`~.sampling.HcsuConfigError` (the first
    target, in order, that cannot be met)."""
    targets = limit_per_domain(select_targets(dataset, config.per_class, config.seed), limit)
    check_requests(dataset, targets, config)
    index = ShotIndex(dataset, config.pool)
    check_shots(dataset, targets, config, index)
    return LazyPlan(targets, functools.partial(build_request, dataset, config=config,
                                               index=index))


def plan_description(dataset: HcsuDataset, config: DescriptionConfig,
                     limit: int | None = None) -> list[PlannedRequest]:
    """Select the targets and build their N-shot requests (no model call); raises
    :class:`~.sampling.HcsuConfigError` when the anti-leakage rule cannot be met."""
    targets = limit_per_domain(select_targets(dataset, config.per_class, config.seed), limit)
    return build_requests(dataset, targets, config)


def run_description(dataset: HcsuDataset, config: DescriptionConfig, engine: Engine,
                    scorer: BertScorer | None, scorer_error: str | None = None,
                    judge: Engine | None = None, limit: int | None = None,
                    desc: str = "description",
                    plan: list[PlannedRequest] | None = None) -> TaskRun:
    """Plan the N-shot requests (unless ``plan`` is given), query the model, score with
    BERTScore and the judge.

    ``scorer``: a loaded BERTScore model, or ``None`` (``scorer_error`` says why; the
    metric is then ``unscored``). ``judge``: the judge model, or ``None`` for no judge.
    Raises :class:`~.sampling.HcsuConfigError` when the anti-leakage rule cannot be met.
    """
    if plan is None:
        plan = plan_description(dataset, config, limit)
    items = [RunItem(p.target.id, p.request.conversation()) for p in plan if p.request]
    results = run_items(items, engine.backend, engine.settings, engine.cache,
                        engine.concurrency, desc=desc)
    return score_description(dataset, config, plan, apply_policy(results, DEFAULT_POLICY),
                             scorer, scorer_error, judge)


def score_description(dataset: HcsuDataset, config: DescriptionConfig,
                      plan: list[PlannedRequest], results: Mapping[str, ItemResult],
                      scorer: BertScorer | None, scorer_error: str | None = None,
                      judge: Engine | None = None) -> TaskRun:
    """Score the responses to ``plan`` with BERTScore and the judge (the judge's requests
    go through the cached runner): the Table 3 figures of :func:`run_description`."""
    records = description_records(plan, results)
    references = class_references(dataset)
    add_bertscore(records, references, scorer, scorer_error)
    digest = None
    if judge is not None:
        judgments, experts = judge_records(dataset, records, judge)
        add_judgments(records, judgments, experts)
        digest = judge_digest(records)
    answered = {r["class"] for r in records if r["outcome"] in ("scored", "unparsed")}
    extra = description_extra(config, scorer, scorer_error,
                              judge.backend.spec if judge else None, digest,
                              self_score(answered, references, scorer), error_digest(records))
    return TaskRun(records, summarize_description(records, judge is not None), extra,
                   plan=list(plan), results=dict(results))


def class_references(dataset: HcsuDataset) -> dict[str, str]:
    """Class key -> its expert description (``""`` when it has none)."""
    return {k: c.description or "" for k, c in dataset.classes.items()}


def description_extra(config: DescriptionConfig, scorer: BertScorer | None,
                      scorer_error: str | None, judge: str | None,
                      digest: dict[str, Any] | None, self_scored: float | None,
                      errors: dict[str, Any]) -> dict[str, Any]:
    """A description run's ``extra`` result fields (key order of ``summary.json``): the
    settings, the BERTScore identity or why it is missing, the ``judge`` spec and its
    digest (judged runs only), the expert references' self-score (x10) and the error
    digest."""
    extra: dict[str, Any] = {"shots": config.shots, "shot_pool": config.pool,
                             "per_class": config.per_class,
                             "bertscore": scorer.identity() if scorer else None,
                             "bertscore_note": "BERTScore depends on the model and layer (recorded "
                             "here); the paper names none, so compare runs scored with "
                             "the same model, not the paper's absolute values",
                             "bertscore_unavailable": None if scorer else scorer_error,
                             "judge": judge}
    if digest is not None:
        extra["judge_digest"] = digest
    extra["expert_reference"] = {"bertscore_x10": self_scored}
    extra["errors"] = errors
    return extra


def self_score(classes: Iterable[str], references: dict[str, str],
               scorer: BertScorer | None) -> float | None:
    """Mean BERTScore-F1 x 10 of the expert references scored against themselves (the
    paper's 10.00 calibration row), over ``classes`` (the classes of the answered
    samples; scored in sorted order, one batch)."""
    keys = sorted(set(classes))
    if scorer is None or not keys:
        return None
    try:
        got = scorer.score_pairs([references[k] for k in keys], [references[k] for k in keys])
    except BertScoreUnavailable:
        return None
    values = [v.value for v in got if v.value is not None]  # an empty reference: no score
    return 10.0 * sum(values) / len(values) if values else None


def judge_records(dataset: HcsuDataset, records: list[Record], judge: Engine
                  ) -> tuple[dict[str, Judgment], dict[str, Judgment]]:
    """Judge every non-empty answer and the expert reference of every class involved
    (empty answers are never sent to the judge).

    Returns ``(sample id -> judgment, class key -> judgment of its reference)``.
    """
    items: dict[str, tuple[str, str]] = {}
    classes = sorted({r["class"] for r in records if r["outcome"] in ("scored", "unparsed")})
    for key in classes:
        cls = dataset.classes[key]
        items[expert_item_id(key)] = (cls.description or "", judge_context(cls))
    for r in records:
        if r["outcome"] == "scored":
            items[r["id"]] = (r["answer"], judge_context(dataset.classes[r["class"]]))
    out = run_judge(RUBRIC, items, judge.backend, judge.cache, judge.settings,
                    judge.concurrency)
    experts = {key: out[expert_item_id(key)] for key in classes}
    return {k: v for k, v in out.items() if not k.startswith("expert::")}, experts
