"""``run hcsu-description`` on the platform: N-shot style description (Table 3).

Records: see :mod:`.sample_records` (``scores``: ``bertscore_x10``, ``terminology``,
``richness``; the expert description as ``reference``; the shots and the judge's reply
in ``details``). BERTScore and the judge are scoring resources made in :meth:`prepare`
(a judge that cannot read the rubric, an unknown judge model: exit 2 before anything is
written) and used in :meth:`score`; the judge's requests go through the run's cached
runner. The summary body keeps the legacy keys (``results`` with ``per_domain``
BERTScore / Term. / Rich. and their Δ against the expert references, ``problems``).

Metrics (decision): all three keep the paper's scale in the records, so the envelope's
numbers read like the tables: ``bertscore_x10`` is BERTScore-F1 x 10 (0–10; the paper
prints it so, the expert references scoring 10.00 against themselves) and the judge
scores are 0–10; ``scale`` is therefore 1. Each headline is the pooled mean over the
answers the metric scored plus a 0 per empty answer (the Table 4 / shot-sweep pooling),
reported per domain (the Table 3 cells). Samples are clustered by **class**, as in the
discrimination task: the answers for targets of one class are all scored against the
same expert description (and judged against the same facts), so they share its
difficulty.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from heritage_eval.benchmarks.hcsu.bench_base import HcsuBenchmark, run_templates, usage_errors
from heritage_eval.benchmarks.hcsu.benchmark import EPILOG
from heritage_eval.benchmarks.hcsu.option_models import DescriptionOptions, Judged
from heritage_eval.benchmarks.hcsu.task_defaults import DESCRIPTION, DESCRIPTION_MAX_TOKENS
from heritage_eval.core.benchmark import LoadedData, MetricSpec, RunContext
from heritage_eval.core.config import BenchmarkOptions

# ``run hcsu-description --help`` needs only the class (its options and defaults): the
# planning, BERTScore, the judge and the record code are imported where they are used.
if TYPE_CHECKING:
    from heritage_eval.benchmarks.hcsu.description import PlannedRequest
    from heritage_eval.benchmarks.hcsu.lazy_plan import LazyPlan
    from heritage_eval.benchmarks.hcsu.records import Record
    from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
    from heritage_eval.benchmarks.hcsu.summary_sink import DescriptionSink
    from heritage_eval.core.backends import ModelBackend
    from heritage_eval.core.config import ModelConfig, RunConfig
    from heritage_eval.core.record import SampleRecord
    from heritage_eval.core.runner import ItemResult
    from heritage_eval.metrics.bertscore import BertScorer

#: ``JUDGE_SETTINGS`` is read from :mod:`.runio` on first use (module ``__getattr__``).
__all__ = ["DESCRIPTION_METRICS", "JUDGE_SETTINGS", "HcsuDescription"]  # noqa: F822
#: The description metrics (also used by the shot-sweep / robustness studies). Ranges:
#: BERTScore-F1 x 10 is at most 10 but has no fixed lower end (baseline rescaling,
#: (F - b)/(1 - b), goes below -10 for F near -1), so it declares none; the judge's
#: Terminology / Richness lie on the rubric's 0-10 scale.
DESCRIPTION_METRICS = (
    MetricSpec("bertscore_x10", "BERTScore", cluster="class", by=("domain",), scale=1.0,
               bounds=None),
    MetricSpec("terminology", "Term.", cluster="class", by=("domain",), scale=1.0,
               bounds=(0.0, 10.0)),
    MetricSpec("richness", "Rich.", cluster="class", by=("domain",), scale=1.0,
               bounds=(0.0, 10.0)))


def judge_backend(options: Judged, model: ModelConfig) -> ModelBackend | None:
    """The judge backend of ``options`` (``None`` without ``--judge``):
    :func:`.runio.judge_backend`, imported on call."""
    from heritage_eval.benchmarks.hcsu.runio import judge_backend as make

    return make(options, model)


def scorer_for(options: Judged) -> tuple[BertScorer | None, str | None]:
    """``(scorer, None)`` or ``(None, reason)``: :func:`.runio.scorer_for`, imported on
    call (tests replace this name to fake BERTScore)."""
    from heritage_eval.benchmarks.hcsu.runio import scorer_for as make

    return make(options)


def __getattr__(name: str) -> Any:
    """``JUDGE_SETTINGS`` (:data:`.runio.JUDGE_SETTINGS`), kept importable from here."""
    if name == "JUDGE_SETTINGS":
        from heritage_eval.benchmarks.hcsu.runio import JUDGE_SETTINGS

        return JUDGE_SETTINGS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class HcsuDescription(HcsuBenchmark):
    """Describe the style of a target image after N shots of other classes. Options:
    data, ``--shots`` (default 2), ``--shot-pool``, ``--max-words``, the judge
    (``--judge`` …) and BERTScore (``--bertscore-model`` …, ``--no-bertscore``)."""

    name: ClassVar[str] = DESCRIPTION
    help: ClassVar[str] = "HCSU N-shot calligraphy style description (Table 3)"
    description: ClassVar[str] = (
        "Describe the style of a target character image after N examples of other "
        "classes (none showing the same character). Scores BERTScore-F1 x10 against "
        "the expert description and, with --judge, Terminology / Richness (0-10) "
        "with their difference from the expert references.\n\n"
        + EPILOG.format(name=DESCRIPTION, model="baseline:nearest-description", flags=""))
    metrics: ClassVar[tuple[MetricSpec, ...]] = DESCRIPTION_METRICS
    default_max_tokens: ClassVar[int] = DESCRIPTION_MAX_TOKENS
    Options: ClassVar[type[BenchmarkOptions]] = DescriptionOptions
    nothing_message: ClassVar[str] = ("none of the {n} description(s) was answered (errors "
                                      "or failed metrics; see the warnings above)")
    average_name: ClassVar[str] = "Overall"

    @staticmethod
    def description_options(config: RunConfig) -> DescriptionOptions:
        """``config.options`` of a description run (raises ``TypeError`` otherwise)."""
        opts = config.options
        if not isinstance(opts, DescriptionOptions):
            raise TypeError(f"not hcsu-description options: {type(opts).__name__}")
        return opts

    def make_plan(self, dataset: HcsuDataset, config: RunConfig
                  ) -> tuple[Any, LazyPlan[PlannedRequest]]:
        """The task config and the requests, each built when read (memory flat in the
        number of samples: :class:`~.lazy_plan.LazyPlan`)."""
        from heritage_eval.benchmarks.hcsu.options import description_config
        from heritage_eval.benchmarks.hcsu.pipeline import lazy_description_plan

        task = description_config(self.options(config))
        return task, lazy_description_plan(dataset, task, config.output.limit)

    def prepare(self, ctx: RunContext, data: LoadedData) -> None:
        """The judge backend (``None`` without ``--judge``) and the BERTScore model
        (``None`` with the reason when disabled or unavailable: a warning). Raises
        :class:`~heritage_eval.core.benchmark.UsageError` for a judge that cannot read the
        rubric or a BERTScore setting that cannot work."""
        opts = self.description_options(ctx.config)
        with usage_errors():
            ctx.resources["judge"] = judge_backend(opts, ctx.config.model)
        scorer, why = scorer_for(opts)
        ctx.resources["bertscore"] = scorer
        ctx.resources["bertscore_error"] = why

    def score_task(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> list[SampleRecord]:
        """BERTScore against the expert description, then the judge (answers and the
        expert references of the classes involved)."""
        from heritage_eval.benchmarks.hcsu.pipeline import Engine, score_description
        from heritage_eval.benchmarks.hcsu.runio import JUDGE_SETTINGS
        from heritage_eval.benchmarks.hcsu.sample_records import run_records

        judge = ctx.resources.get("judge")
        engine = Engine(judge, JUDGE_SETTINGS, ctx.cache, ctx.concurrency) if judge else None
        scorer = ctx.resources.get("bertscore")
        run = score_description(data.extra["dataset"], data.extra["config"],
                                list(data.samples), self.policy_results(results, ctx),
                                scorer, ctx.resources.get("bertscore_error"), engine)
        ctx.resources["task_run"] = run
        return self.mark(run_records(run, DESCRIPTION, ctx.backend.spec, self.root(data),
                                     bertscore=scorer is not None, judged=judge is not None),
                         ctx)

    def iter_score(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> Iterator[SampleRecord]:
        """:meth:`score`'s records built one window of samples at a time
        (:mod:`.description_stream`: results read once in sample order, BERTScore and
        the judge per window, empty answers held until their zeros are known)."""
        from heritage_eval.benchmarks.hcsu.description_stream import (
            DescriptionScoring,
            iter_description_records,
        )
        from heritage_eval.benchmarks.hcsu.pipeline import Engine
        from heritage_eval.benchmarks.hcsu.runio import JUDGE_SETTINGS
        from heritage_eval.benchmarks.hcsu.sample_records import description_record
        from heritage_eval.benchmarks.outcomes import refusals_policy
        from heritage_eval.core.model_failures import apply_to_one

        judge = ctx.resources.get("judge")
        scorer = ctx.resources.get("bertscore")
        scoring = DescriptionScoring(
            data.extra["dataset"], scorer, ctx.resources.get("bertscore_error"),
            Engine(judge, JUDGE_SETTINGS, ctx.cache, ctx.concurrency) if judge else None)
        model, root = ctx.backend.spec, self.root(data)

        def make(item: PlannedRequest, row: Record, res: ItemResult | None,
                 zeros: Mapping[str, set[str]]) -> SampleRecord:
            record = description_record(item, row, res, model, root, zeros,
                                        bertscore=scorer is not None,
                                        judged=judge is not None)
            return self.mark([record], ctx)[0]

        yield from iter_description_records(
            data.samples, results, apply_to_one(refusals_policy(ctx.config)), scoring,
            make, lambda: run_templates(data))

    def record_sink(self, data: LoadedData, ctx: RunContext) -> DescriptionSink:
        """Streams (memory flat in the number of samples): :class:`DescriptionSink`."""
        from heritage_eval.benchmarks.hcsu.pipeline import class_references
        from heritage_eval.benchmarks.hcsu.summary_sink import DescriptionSink
        from heritage_eval.benchmarks.outcomes import refusals_policy

        judge = ctx.resources.get("judge")
        dataset = data.extra["dataset"]
        return DescriptionSink(ctx.backend.spec, dataset.problems, refusals_policy(ctx.config),
                               data.extra["config"], ctx.resources.get("bertscore"),
                               ctx.resources.get("bertscore_error"), class_references(dataset),
                               judge.spec if judge else None)

    def aggregate(self, records: Sequence[SampleRecord], data: LoadedData,
                  ctx: RunContext) -> dict[str, Any]:
        return self.body(data, ctx, records)

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        """As for every HCSU run, plus the judge model and endpoint and the BERTScore
        model identity."""
        judge = ctx.resources.get("judge")
        scorer = ctx.resources.get("bertscore")
        return {**super().provenance(data, ctx),
                "judge_model": judge.spec if judge else None,
                "judge_base_url": getattr(judge, "base_url", None),
                "bertscore": scorer.identity() if scorer else None}

    def render_table(self, summary: Mapping[str, Any]) -> str:
        """The paper's table with its notes (what the console shows)."""
        from heritage_eval.benchmarks.hcsu.markdown import description_markdown

        return description_markdown(summary["results"])

    def render_markdown(self, summary: Mapping[str, Any]) -> str:
        return self.render_table(summary) + self.extra_markdown(summary)
