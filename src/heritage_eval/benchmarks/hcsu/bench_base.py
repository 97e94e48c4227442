"""What the two HCSU benchmarks share on the platform (:class:`HcsuBenchmark`): loading the
release and planning every question before anything is written, model refusal, the
paper's decoding defaults, provenance, and the conversion of HCSU errors into
:class:`~heritage_eval.core.benchmark.UsageError` (exit 2, nothing written).

Samples are the planned items themselves (:class:`~.discrimination.PlannedItem` /
:class:`~.description.PlannedRequest`, ``id`` = sample id): a setting the data cannot
meet (K too large, anti-leakage rule) is found in :meth:`HcsuBenchmark.load`, before the
run folder or the response cache is opened.
"""

from __future__ import annotations

import abc
import argparse
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from heritage_eval.benchmarks.hcsu.archive import ArchiveError
from heritage_eval.benchmarks.hcsu.canonical_batch import CanonicalizeError
from heritage_eval.benchmarks.hcsu.loader import HcsuDataError
from heritage_eval.benchmarks.hcsu.options import refuse_model
from heritage_eval.benchmarks.hcsu.pipeline import PAPER_TEMPERATURE, TaskRun
from heritage_eval.benchmarks.hcsu.prompts import TEMPLATES, prompt_hash
from heritage_eval.benchmarks.hcsu.runio import LIMIT_HELP, data_info, load_data, redacted_command
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.benchmarks.outcomes import (
    add_refusals_arg,
    apply_policy,
    mark_records,
    outcomes_body,
    outcomes_markdown,
    refusals_policy,
)
from heritage_eval.core.benchmark import Benchmark, LoadedData, RunContext, UsageError
from heritage_eval.core.prompt_templates import PromptFileError
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Conversation
from heritage_eval.models.base import ModelBackend
from heritage_eval.report.provenance_md import provenance_markdown

#: Group keys of every HCSU record, in report order (see :mod:`.sample_records`).
GROUP_KEYS = ("domain", "class", "script")
#: Errors of the HCSU modules that mean "this input or setting cannot be run".
HCSU_ERRORS = (HcsuConfigError, HcsuDataError, ArchiveError, CanonicalizeError,
               PromptFileError)


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """Re-raise an HCSU data / configuration error as :class:`UsageError` (same text)."""
    try:
        yield
    except HCSU_ERRORS as exc:
        raise UsageError(str(exc)) from exc


def run_mode(opts: argparse.Namespace) -> Any:
    """``"overwrite"`` / ``"resume"`` / ``"refuse"`` from ``--overwrite`` / ``--resume``."""
    if getattr(opts, "overwrite", False):
        return "overwrite"
    return "resume" if getattr(opts, "resume", False) else "refuse"


class HcsuBenchmark(Benchmark):
    """Base of :class:`~.benchmark.HcsuDiscrimination` and
    :class:`~.benchmark_description.HcsuDescription`.

    Subclasses implement :meth:`make_plan` (config + planned items) and the scoring
    methods; ``data.extra`` holds ``dataset`` (:class:`~.schema.HcsuDataset`) and
    ``config`` (the task config), ``ctx.resources["task_run"]`` the scored
    :class:`~.pipeline.TaskRun` (set by ``score``, read by ``aggregate``)."""

    group_keys: ClassVar[tuple[str, ...]] = GROUP_KEYS
    default_temperature: ClassVar[float] = PAPER_TEMPERATURE
    #: ``--limit`` wording (read by ``core.engine.benchmark_command``)
    limit_help: ClassVar[str] = LIMIT_HELP
    #: Markdown heading of ``summary.md``
    heading: ClassVar[str] = ""

    @abc.abstractmethod
    def make_plan(self, dataset: HcsuDataset, opts: argparse.Namespace
                  ) -> tuple[Any, Sequence[Any]]:
        """``(task config, planned items)``; raises :class:`HcsuConfigError`."""

    def load(self, opts: argparse.Namespace) -> LoadedData:
        """Load ``--data`` (loader warnings on stderr) and plan every question.

        Raises :class:`UsageError` for unloadable data or a setting the data cannot meet,
        ``RunFolderConflict`` when a zip would be extracted into a folder of another run.
        """
        claim = (self.name, self.fingerprint(opts), opts.limit is not None, run_mode(opts))
        prompts = getattr(opts, "prompts", None)  # --prompts; also for API runs (no guard)
        with usage_errors():
            TEMPLATES.use(TEMPLATES.load(prompts) if prompts is not None else {})
            dataset = load_data(opts, claim=claim)
            config, plan = self.make_plan(dataset, opts)
        return LoadedData(samples=list(plan), image_root=str(Path(dataset.root).resolve()),
                          info=data_info(dataset),
                          extra={"dataset": dataset, "config": config})

    def refuse_model(self, backend: ModelBackend, data: LoadedData,
                     opts: argparse.Namespace) -> str | None:
        """An OCR engine, or a baseline made for the other task, is refused."""
        return refuse_model(backend, self.name)

    def plan(self, sample: Any, ctx: RunContext, data: LoadedData) -> Conversation | None:
        """The question's conversation; ``None`` for a target that could not be planned
        (missing / corrupt image: an ``error`` record)."""
        asked = getattr(sample, "question", None) or getattr(sample, "request", None)
        return asked.conversation() if asked is not None else None

    @staticmethod
    def task_run(ctx: RunContext) -> TaskRun:
        """The run scored by ``score`` (raises ``RuntimeError`` before it)."""
        run = ctx.resources.get("task_run")
        if not isinstance(run, TaskRun):
            raise RuntimeError("aggregate() called before score(): no scored HCSU run")
        return run

    @staticmethod
    def root(data: LoadedData) -> Path:
        """The data folder (image paths in records are relative to it)."""
        return Path(data.image_root or ".")

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        """The command with secrets redacted, task spec, prompt hash, data counts."""
        return {"command": redacted_command(), "task": data.extra["config"].spec(),
                "prompt_hash": prompt_hash(), "data": data.info}

    def body(self, data: LoadedData, ctx: RunContext,
             records: Sequence[SampleRecord] = ()) -> dict[str, Any]:
        """The legacy summary keys: ``results`` (one entry) and ``problems``, plus the
        truncation rate per domain and the refusal count (``truncation``, ``refusals``:
        :func:`~heritage_eval.benchmarks.outcomes.outcomes_body`)."""
        from heritage_eval.benchmarks.hcsu.pipeline import result_entry

        dataset: HcsuDataset = data.extra["dataset"]
        return {"results": [result_entry(ctx.backend.spec, self.task_run(ctx))],
                "problems": list(dataset.problems),
                **outcomes_body(records, "domain", refusals_policy(ctx.opts))}

    @staticmethod
    def add_refusals(parser: argparse.ArgumentParser) -> None:
        """``--refusals {error,wrong}`` (:mod:`heritage_eval.benchmarks.outcomes`)."""
        add_refusals_arg(parser)

    @staticmethod
    def policy_results(results: Mapping[str, ItemResult], ctx: RunContext
                       ) -> Mapping[str, ItemResult]:
        """The responses scored under ``--refusals`` (``wrong``: refusals as empty
        answers)."""
        return apply_policy(results, refusals_policy(ctx.opts))

    @staticmethod
    def mark(records: list[SampleRecord], ctx: RunContext) -> list[SampleRecord]:
        """Flag truncated and refused records (``details.truncated`` / ``refused``)."""
        mark_records(records, refusals_policy(ctx.opts))
        return records

    def render_table(self, summary: Mapping[str, Any]) -> str:
        """The table part of ``summary.md`` printed on the console (default: all of it)."""
        return self.render_markdown(summary)

    @staticmethod
    def extra_markdown(summary: Mapping[str, Any], max_problems: int = 20) -> str:
        """``summary.md`` sections after the table: truncation / refusals and the data
        problems (a domain that could not be loaded, bad records: first
        ``max_problems``, all in ``summary.json``), the provenance."""
        out = outcomes_markdown(summary)
        problems = list(summary.get("problems") or [])
        if problems:
            out += "\n## Data problems\n\n" + "".join(
                f"- {p}\n" for p in problems[:max_problems])
            if len(problems) > max_problems:
                out += f"- … and {len(problems) - max_problems} more (summary.json)\n"
        return out + provenance_markdown(summary)  # model, data, hashes, version, commit
