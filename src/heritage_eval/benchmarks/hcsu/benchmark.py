"""``run hcsu-discrimination`` on the platform: K-way style discrimination (Table 2).

Records: see :mod:`.sample_records` (``scores = {"accuracy": 1.0 | 0.0}``, the chosen
label as ``answer``, the correct label as ``reference``, the K candidates in
``details``). The summary body keeps the legacy keys: ``results`` (one entry with
``per_domain`` accuracy and macro precision / recall / F1, ``avg_accuracy`` …) and
``problems``. Macro P / R / F1 stay in the body only: they are not means of per-sample
values, so they get no per-sample interval.

Metric and clustering (decision): ``accuracy`` is the headline, a macro mean over the
two domains (the paper's Avg. Acc = mean of Bei and Tie accuracy, resampled within each
domain), reported per domain. Samples are clustered by **class** (one calligrapher and
script within one domain): every target of a class is compared with the same expert
description and drawn from the same small pool of reference images, and how
recognisable a hand is varies far more between classes than between characters of one
hand, so the targets of a class are not independent draws. Resampling whole classes
makes the interval honest about a test set of a few dozen classes; treating the ~90
targets per class as independent would make it several times too narrow.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from heritage_eval.benchmarks.hcsu.bench_base import HcsuBenchmark, run_templates
from heritage_eval.benchmarks.hcsu.option_models import DiscriminationOptions
from heritage_eval.benchmarks.hcsu.task_defaults import DISCRIMINATION, DISCRIMINATION_MAX_TOKENS
from heritage_eval.core.benchmark import LoadedData, MetricSpec, RunContext
from heritage_eval.core.config import BenchmarkOptions

# ``run hcsu-discrimination --help`` needs only the class (its options and defaults): the
# planning, the scoring and the record code are imported by the methods that use them.
if TYPE_CHECKING:
    from heritage_eval.benchmarks.hcsu.discrimination import PlannedItem
    from heritage_eval.benchmarks.hcsu.lazy_plan import LazyPlan
    from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
    from heritage_eval.benchmarks.hcsu.summary_sink import DiscriminationSink
    from heritage_eval.core.config import RunConfig
    from heritage_eval.core.record import SampleRecord
    from heritage_eval.core.runner import ItemResult

EPILOG = ("Examples:\n"
          "  heritage-eval run {name} --data data/demo/hcsu --model {model}{flags} "
          "--out runs/x\n"
          "  heritage-eval run {name} --data HCSU --model openai:qwen3-vl-235b "
          "--base-url http://localhost:8000/v1 --out runs/qwen")
#: The discrimination metric (also used by the k-sweep / ablation / robustness studies).
ACCURACY = MetricSpec("accuracy", "Acc", macro_over="domain", cluster="class",
                      by=("domain",))


class HcsuDiscrimination(HcsuBenchmark):
    """For each target image, pick its style among K candidates (description + reference
    image each). Options: data (``--data``, ``--per-class``, ``--seed``, zip options)
    and the task (``--k`` 2–26, default 8; ``--distractor-pool``; ``--descriptions``)."""

    name: ClassVar[str] = DISCRIMINATION
    help: ClassVar[str] = "HCSU K-way calligraphy style discrimination (Table 2)"
    description: ClassVar[str] = (
        "For each target character image, pick its style (calligrapher + script) among K "
        "candidates, each an expert description and a reference image. Scores accuracy, "
        "macro precision/recall/F1 per domain (Bei, Tie) and Avg. Acc.\n\n"
        + EPILOG.format(name=DISCRIMINATION, model="baseline:image-similarity",
                        flags=" --distractor-pool all"))
    metrics: ClassVar[tuple[MetricSpec, ...]] = (ACCURACY,)
    default_max_tokens: ClassVar[int] = DISCRIMINATION_MAX_TOKENS
    Options: ClassVar[type[BenchmarkOptions]] = DiscriminationOptions
    nothing_message: ClassVar[str] = ("none of the {n} sample(s) was answered (every one "
                                      "ended as error)")

    def make_plan(self, dataset: HcsuDataset, config: RunConfig
                  ) -> tuple[Any, LazyPlan[PlannedItem]]:
        """The task config and the questions, each built when read (memory flat in the
        number of samples: :class:`~.lazy_plan.LazyPlan`)."""
        from heritage_eval.benchmarks.hcsu.options import discrimination_config
        from heritage_eval.benchmarks.hcsu.pipeline import lazy_discrimination_plan

        task = discrimination_config(self.options(config), dataset=dataset)
        return task, lazy_discrimination_plan(dataset, task, config.output.limit)

    def score_task(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> list[SampleRecord]:
        """Parse each answer into a label and score it (unparsed: wrong; a model failure
        by ``--model-failures``; truncated answers flagged)."""
        from heritage_eval.benchmarks.hcsu.pipeline import score_discrimination
        from heritage_eval.benchmarks.hcsu.sample_records import run_records

        run = score_discrimination(data.extra["config"], list(data.samples),
                                   self.policy_results(results, ctx))
        ctx.resources["task_run"] = run
        return self.mark(run_records(run, DISCRIMINATION, ctx.backend.spec,
                                     self.root(data)), ctx)

    def iter_score(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> Iterator[SampleRecord]:
        """:meth:`score`'s records built one sample at a time: each result read once, in
        sample order (a one-pass mapping works), nothing kept after its record."""
        from heritage_eval.benchmarks.hcsu.sample_records import discrimination_record
        from heritage_eval.benchmarks.hcsu.scoring import discrimination_records
        from heritage_eval.benchmarks.outcomes import refusals_policy
        from heritage_eval.core.model_failures import apply_to_one

        fix = apply_to_one(refusals_policy(ctx.config))
        task = data.extra["config"]
        settings = {"distractor_pool": task.pool, "descriptions": task.descriptions}
        root, model = self.root(data), ctx.backend.spec
        for item in data.samples:
            res = results.get(item.id)  # outside the templates: reading plans ahead
            got = {} if res is None else {item.id: fix(res)}
            with run_templates(data):
                (row,) = discrimination_records([item], got)
                record = discrimination_record(item, row, got.get(item.id), model, root,
                                               settings=settings)
            yield self.mark([record], ctx)[0]

    def record_sink(self, data: LoadedData, ctx: RunContext) -> DiscriminationSink:
        """Streams (memory flat in the number of samples): :class:`DiscriminationSink`."""
        from heritage_eval.benchmarks.hcsu.summary_sink import DiscriminationSink
        from heritage_eval.benchmarks.outcomes import refusals_policy

        return DiscriminationSink(ctx.backend.spec, data.extra["dataset"].problems,
                                  refusals_policy(ctx.config), data.extra["config"])

    def aggregate(self, records: Sequence[SampleRecord], data: LoadedData,
                  ctx: RunContext) -> dict[str, Any]:
        return self.body(data, ctx, records)

    def render_table(self, summary: Mapping[str, Any]) -> str:
        """The paper's table with its notes (what the console shows)."""
        from heritage_eval.benchmarks.hcsu.markdown import discrimination_markdown

        return discrimination_markdown(summary["results"])

    def render_markdown(self, summary: Mapping[str, Any]) -> str:
        return self.render_table(summary) + self.extra_markdown(summary)
