"""What the two HCSU benchmarks share on the platform (:class:`HcsuBenchmark`): loading the
release and planning every question before anything is written, model refusal, the
paper's decoding defaults, provenance, and the conversion of HCSU errors into
:class:`~heritage_eval.core.benchmark.UsageError` (exit 2, nothing written).

Samples are the planned items themselves (:class:`~.discrimination.PlannedItem` /
:class:`~.description.PlannedRequest`, ``id`` = sample id), held as a
:class:`~.lazy_plan.LazyPlan` (each item built from its target when read, so the plan
holds no question: memory flat in the number of samples); a setting the data cannot
meet (K too large, anti-leakage rule) is still found for every target in
:meth:`HcsuBenchmark.load`, before the run folder or the response cache is opened.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from heritage_eval.benchmarks.hcsu.option_models import SampledOptions
from heritage_eval.benchmarks.hcsu.task_defaults import LIMIT_HELP, PAPER_TEMPERATURE
from heritage_eval.core.benchmark import Benchmark, LoadedData, RunContext, UsageError

# Loading these classes is all that ``run hcsu-* --help`` needs (their options and
# defaults), so the loader, the planning, the scoring and the engine's parts are imported
# where a method uses them (start-up within 0.3 s of ``python -c pass``).
if TYPE_CHECKING:
    from heritage_eval.benchmarks.hcsu.pipeline import TaskRun
    from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
    from heritage_eval.core.backends import ModelBackend
    from heritage_eval.core.config import RunConfig
    from heritage_eval.core.record import SampleRecord
    from heritage_eval.core.runner import ItemResult
    from heritage_eval.core.types import Conversation

#: Group keys of every HCSU record, in report order (see :mod:`.sample_records`).
GROUP_KEYS = ("domain", "class", "script")


def hcsu_errors() -> tuple[type[Exception], ...]:
    """The errors of the HCSU modules that mean "this input or setting cannot be run"
    (imported on call: the modules that raise them are the loader's and the planner's)."""
    from heritage_eval.benchmarks.hcsu.archive import ArchiveError
    from heritage_eval.benchmarks.hcsu.canonical_batch import CanonicalizeError
    from heritage_eval.benchmarks.hcsu.loader import HcsuDataError
    from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
    from heritage_eval.core.prompt_templates import PromptFileError

    return (HcsuConfigError, HcsuDataError, ArchiveError, CanonicalizeError,
            PromptFileError)


def __getattr__(name: str) -> Any:
    """``HCSU_ERRORS`` (:func:`hcsu_errors`), kept importable from here."""
    if name == "HCSU_ERRORS":
        return hcsu_errors()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """Re-raise an HCSU data / configuration error as :class:`UsageError` (same text)."""
    try:
        yield
    except Exception as exc:
        if not isinstance(exc, hcsu_errors()):
            raise
        raise UsageError(str(exc)) from exc


@contextlib.contextmanager
def run_templates(data: LoadedData) -> Iterator[None]:
    """The run's prompt templates (``--prompts``, read by :meth:`HcsuBenchmark.load` into
    ``data.extra["templates"]``) in use inside the block, the built-in ones after it, so
    that a run never leaves its templates to the next one (CLI, API and suite alike)."""
    from heritage_eval.benchmarks.hcsu.prompts import TEMPLATES

    TEMPLATES.use(data.extra.get("templates") or {})
    try:
        yield
    finally:
        TEMPLATES.use({})


def records_in(entry: Mapping[str, Any]) -> int:
    """The number of records of a run from its ``results`` entry: per domain the
    answered ``n`` plus ``n_error`` (every row is one or the other)."""
    return sum(int(d.get("n") or 0) + int(d.get("n_error") or 0)
               for d in (entry.get("per_domain") or {}).values())


class HcsuBenchmark(Benchmark):
    """Base of :class:`~.benchmark.HcsuDiscrimination` and
    :class:`~.benchmark_description.HcsuDescription`.

    Subclasses set :attr:`Options` and :attr:`nothing_message`, implement
    :meth:`make_plan` (config + planned items), :meth:`score_task` and the summary
    methods; ``data.extra`` holds ``dataset`` (:class:`~.schema.HcsuDataset`), ``config``
    (the task config) and ``templates`` (the ``--prompts`` replacements, used while the
    conversations and records are built: :func:`run_templates`),
    ``ctx.resources["task_run"]`` the scored :class:`~.pipeline.TaskRun` (set by
    ``score``, read by ``aggregate``: the listed path, every row and record in memory).

    A run streams (memory flat in the number of samples): each subclass's
    ``iter_score`` builds the records one at a time (description: one window of samples
    at a time, :mod:`.description_stream`) and its ``record_sink`` folds them into the
    same summary body (:mod:`.summary_sink`); :meth:`print_diagnostics` and
    :meth:`nothing_answered_message` then read the record count from the summary.

    ``--limit N`` keeps at most N targets per domain, round-robin over its classes
    (:func:`~.sampling.limit_per_domain`), while planning: :attr:`applies_limit`."""

    group_keys: ClassVar[tuple[str, ...]] = GROUP_KEYS
    default_temperature: ClassVar[float] = PAPER_TEMPERATURE
    limit_help: ClassVar[str | None] = LIMIT_HELP
    applies_limit: ClassVar[bool] = True
    #: tagged records ``<target>#k=v`` belong to their target (run-folder checks)
    record_id_parts: ClassVar[bool] = True
    #: Markdown heading of ``summary.md``
    heading: ClassVar[str] = ""
    #: The exit-1 message when nothing was answered (``{n}``: the number of records)
    nothing_message: ClassVar[str] = ""
    #: How the console's coverage note names the task's average over domains
    average_name: ClassVar[str] = "Avg. Acc"

    @abc.abstractmethod
    def make_plan(self, dataset: HcsuDataset, config: RunConfig
                  ) -> tuple[Any, Sequence[Any]]:
        """``(task config, planned items)`` of ``config.options`` with
        ``config.output.limit``; raises :class:`HcsuConfigError`."""

    @staticmethod
    def options(config: RunConfig) -> SampledOptions:
        """``config.options``, checked to be an HCSU run's (raises ``TypeError``)."""
        opts = config.options
        if not isinstance(opts, SampledOptions):
            raise TypeError(f"not HCSU run options: {type(opts).__name__}")
        return opts

    def load(self, config: RunConfig) -> LoadedData:
        """Load ``--data`` (loader warnings on stderr) and plan every question.

        Raises :class:`UsageError` for a missing extra, unloadable data, a bad
        ``--prompts`` file or a setting the data cannot meet, ``RunFolderConflict`` when
        a zip would be extracted into a folder of another run.
        """
        from heritage_eval.benchmarks.hcsu.lazy_plan import LazyPlan
        from heritage_eval.benchmarks.hcsu.prompts import TEMPLATES
        from heritage_eval.benchmarks.hcsu.runio import data_info, load_data
        from heritage_eval.core.extras import EXTRAS, require_extra

        require_extra("hcsu", EXTRAS["hcsu"], f"run {self.name}")  # before anything is read
        opts = self.options(config)
        claim = (self.name, self.fingerprint(config), config.output.limit is not None,
                 config.output.mode)
        with usage_errors():
            templates = TEMPLATES.load(opts.prompts) if opts.prompts is not None else {}
            dataset = load_data(opts, config.out_dir(), claim=claim)
            task, plan = self.make_plan(dataset, config)
        samples = plan if isinstance(plan, LazyPlan) else list(plan)  # built when read
        return LoadedData(samples=samples, image_root=str(Path(dataset.root).resolve()),
                          info=data_info(dataset),
                          extra={"dataset": dataset, "config": task, "templates": templates})

    def refuse_model(self, backend: ModelBackend, data: LoadedData,
                     config: RunConfig) -> str | None:
        """An OCR engine, or a baseline made for the other task, is refused."""
        from heritage_eval.benchmarks.hcsu.options import refuse_model

        return refuse_model(backend, self.name)

    def plan(self, sample: Any, ctx: RunContext, data: LoadedData) -> Conversation | None:
        """The question's conversation; ``None`` for a target that could not be planned
        (missing / corrupt image: an ``error`` record)."""
        asked = getattr(sample, "question", None) or getattr(sample, "request", None)
        if asked is None:
            return None
        with run_templates(data):
            conversation: Conversation = asked.conversation()
        return conversation

    def score(self, data: LoadedData, results: Mapping[str, ItemResult],
              ctx: RunContext) -> list[SampleRecord]:
        """:meth:`score_task` with the run's templates in use (the records repeat the
        prompts sent)."""
        with run_templates(data):
            return self.score_task(data, results, ctx)

    @abc.abstractmethod
    def score_task(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> list[SampleRecord]:
        """The task's records (see :meth:`score`)."""

    @staticmethod
    def task_run(ctx: RunContext) -> TaskRun:
        """The run scored by ``score`` (raises ``RuntimeError`` before it)."""
        from heritage_eval.benchmarks.hcsu.pipeline import TaskRun

        run = ctx.resources.get("task_run")
        if not isinstance(run, TaskRun):
            raise RuntimeError("aggregate() called before score(): no scored HCSU run")
        return run

    @staticmethod
    def root(data: LoadedData) -> Path:
        """The data folder (image paths in records are relative to it)."""
        return Path(data.image_root or ".")

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        """The command with secrets redacted, task spec, prompt hash (of the templates
        used), data counts."""
        from heritage_eval.benchmarks.hcsu.prompts import prompt_hash
        from heritage_eval.benchmarks.hcsu.runio import redacted_command

        with run_templates(data):
            hashed = prompt_hash()
        return {"command": redacted_command(), "task": data.extra["config"].spec(),
                "prompt_hash": hashed, "data": data.info}

    def body(self, data: LoadedData, ctx: RunContext,
             records: Sequence[SampleRecord] = ()) -> dict[str, Any]:
        """The legacy summary keys: ``results`` (one entry) and ``problems``, the metrics
        the run did not compute (``metrics_off``, when any: :mod:`.metrics_off`), plus the
        truncation rate per domain and the refusal count (``truncation``, ``refusals``:
        :func:`~heritage_eval.benchmarks.outcomes.outcomes_body`)."""
        from heritage_eval.benchmarks.hcsu.metrics_off import metrics_off
        from heritage_eval.benchmarks.hcsu.pipeline import result_entry
        from heritage_eval.benchmarks.outcomes import outcomes_body, refusals_policy

        dataset: HcsuDataset = data.extra["dataset"]
        results = [result_entry(ctx.backend.spec, self.task_run(ctx))]
        off = {"metrics_off": metrics_off(results)} if metrics_off(results) else {}
        return {"results": results, "problems": list(dataset.problems), **off,
                **outcomes_body(records, "domain", refusals_policy(ctx.config))}

    @staticmethod
    def policy_results(results: Mapping[str, ItemResult], ctx: RunContext
                       ) -> Mapping[str, ItemResult]:
        """The responses scored under ``--model-failures`` (``wrong``: refusals as empty
        answers)."""
        from heritage_eval.benchmarks.outcomes import apply_policy, refusals_policy

        return apply_policy(results, refusals_policy(ctx.config))

    @staticmethod
    def mark(records: list[SampleRecord], ctx: RunContext) -> list[SampleRecord]:
        """Flag truncated and refused records (``details.truncated`` / ``refused``)."""
        from heritage_eval.benchmarks.outcomes import mark_records, refusals_policy

        mark_records(records, refusals_policy(ctx.config))
        return records

    def render_table(self, summary: Mapping[str, Any]) -> str:
        """The table part of ``summary.md`` printed on the console (default: all of it)."""
        return self.render_markdown(summary)

    def print_result(self, summary: Mapping[str, Any]) -> None:
        """The task's table with its notes on stdout (:meth:`render_table`)."""
        print(self.render_table(summary))

    def print_diagnostics(self, summary: Mapping[str, Any],
                          records: Sequence[SampleRecord] | None) -> None:
        """On stderr: the error digest and, for a judged run, the judge's unscored digest,
        naming an endpoint that was never reached (:func:`~.run_output.report_errors`).
        The truncation / model-failure / exclusion warnings are the platform's. Last, a
        ``note:`` line when the average covers fewer than the paper's two domains
        (:func:`~.coverage.coverage_lines`)."""
        import sys

        from heritage_eval.benchmarks.hcsu.coverage import coverage_lines
        from heritage_eval.benchmarks.hcsu.run_output import report_errors

        prov = summary.get("provenance") or {}
        results = summary.get("results") or [{}]
        self._n_records = len(records) if records is not None else records_in(results[0])
        report_errors(self.name, results[0], self._n_records, prov.get("base_url"),
                      prov.get("judge_base_url"))
        for line in coverage_lines(results, self.average_name):
            print(line, file=sys.stderr)

    def nothing_answered_message(self, records: Sequence[SampleRecord] | None
                                 ) -> str | None:
        """The exit-1 message: :attr:`nothing_message` with the number of records (for a
        streamed run, ``records`` ``None``: the number :meth:`print_diagnostics` read
        from the summary)."""
        n = len(records) if records is not None else getattr(self, "_n_records", None)
        return self.nothing_message.format(n="?" if n is None else n)

    @staticmethod
    def extra_markdown(summary: Mapping[str, Any], max_problems: int = 20) -> str:
        """``summary.md`` sections after the table: truncation / refusals and the data
        problems (a domain that could not be loaded, bad records: first
        ``max_problems``, all in ``summary.json``), the provenance."""
        from heritage_eval.benchmarks.outcomes import outcomes_markdown
        from heritage_eval.report.provenance_md import provenance_markdown

        out = outcomes_markdown(summary)
        problems = list(summary.get("problems") or [])
        if problems:
            out += "\n## Data problems\n\n" + "".join(
                f"- {p}\n" for p in problems[:max_problems])
            if len(problems) > max_problems:
                out += f"- … and {len(problems) - max_problems} more (summary.json)\n"
        return out + provenance_markdown(summary)  # model, data, hashes, version, commit
