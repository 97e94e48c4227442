"""The run folder of an HCSU study (``hcsu k-sweep | shot-sweep | ablation |
robustness``, :mod:`.cli_studies`): opening it, the no-shrink rule, the summary and its
files, the error digests and the exit status.

A study's ``summary.json`` is the statistics envelope (grouped by the study's tags and
the HCSU groups) plus ``results``, ``provenance``, ``problems``, the condition tag
``condition_keys`` and ``headline_note``; ``summary.md`` is the PARTIAL banner of a
``--limit`` run, the study's table, the per-condition intervals of the first tag and
the provenance. The envelope comes from a stream's accumulator (:mod:`.study_stream`:
every study, whose ``samples.jsonl`` is written as the records come);
:func:`listed_records` lists a listed run's records (the reference the streaming tests
compare with).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from heritage_eval.benchmarks.hcsu.cli_args import CommandOptions
from heritage_eval.benchmarks.hcsu.description import PlannedRequest
from heritage_eval.benchmarks.hcsu.discrimination import PlannedItem
from heritage_eval.benchmarks.hcsu.markdown import condition_markdown, pooled_note
from heritage_eval.benchmarks.hcsu.metrics_off import metrics_off
from heritage_eval.benchmarks.hcsu.run_output import (
    fail_if_nothing_answered,
    report_errors,
)
from heritage_eval.benchmarks.hcsu.runio import Claim
from heritage_eval.benchmarks.hcsu.sample_records import id_suffix, run_records
from heritage_eval.benchmarks.hcsu.studies import StudyRun
from heritage_eval.benchmarks.outcomes import DEFAULT_POLICY, mark_records
from heritage_eval.core.config import BenchmarkOptions, RunConfig
from heritage_eval.core.option_spec import selection_reader
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.run_output import partial_banner
from heritage_eval.core.rundir import (
    RUN_FILE,
    RunFolderConflict,
    RunSession,
    check_folder,
    open_run,
)
from heritage_eval.core.store import atomic_write_text
from heritage_eval.core.types import stable_hash
from heritage_eval.report.provenance_md import provenance_markdown

Opts = TypeVar("Opts", bound=BenchmarkOptions)

#: exit-1 messages of the studies (``{n}``: the number of records)
NONE_ERROR = "none of the {n} sample(s) was answered (every one ended as error)"
NONE_FAILED = "none of the {n} sample(s) was answered (errors or failed metrics)"
NONE_DESCRIBED = "none of the {n} description(s) was answered (errors or failed metrics)"


def options_of(config: RunConfig, kind: type[Opts]) -> Opts:
    """``config.options`` as the study's own options (raises ``TypeError`` otherwise)."""
    opts = config.options
    if not isinstance(opts, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(opts).__name__}")
    return opts


def claim(cmd: CommandOptions, config: RunConfig) -> Claim:
    """The claim a study puts on a data folder it extracts into (:func:`~.runio.
    load_data`): command, fingerprint, partial, mode."""
    return (cmd.name, cmd.fingerprint(config), config.output.limit is not None,
            config.output.mode)


@contextlib.contextmanager
def study_session(cmd: CommandOptions, config: RunConfig,
                  sample_ids: Collection[str] | None = None) -> Iterator[RunSession]:
    """The study's run folder, open (:func:`~heritage_eval.core.rundir.open_run`);
    ``sample_ids``: the record ids the study will write, so that a run that would leave
    fewer rows than the folder holds is refused before anything is written."""
    with open_run(config.out_dir(), cmd.name, cmd.fingerprint(config),
                  partial=config.output.limit is not None, mode=config.output.mode,
                  defaults=cmd.default_fingerprint(), sample_ids=sample_ids,
                  id_parts=True, canonical=selection_reader(cmd.options)) as session:
        yield session


def planned_ids(plans: Mapping[Any, Sequence[PlannedItem | PlannedRequest]], tag: str
                ) -> set[str]:
    """The record ids a study writes for ``plans`` (tag value -> planned questions or
    requests): one per planned item, ``<target id>#<tag>=<value>``, as
    :mod:`.sample_records` tags them."""
    return {item.target.id + id_suffix({tag: value}, tag) for value, plan in plans.items()
            for item in plan}


def refuse_shrink(session: RunSession, cmd: CommandOptions, config: RunConfig,
                  sample_ids: Collection[str], previous: dict[str, Any] | None) -> None:
    """The no-shrink rule for a study whose samples are known only once its run folder
    is open (robustness: its conditions are prepared inside it): raise
    :class:`~heritage_eval.core.rundir.RunFolderConflict` when ``sample_ids`` (the ids of
    every record the study plans, :func:`~.robustness_stream.robustness_ids`) would
    leave out rows the folder holds (unless ``--overwrite``, whose folder was emptied on
    open). Called once the study is planned, before any request is sent and before
    ``samples.jsonl`` is touched. ``previous``: the folder's ``run.json`` before it was
    opened, put back on refusal, so that it still describes the rows kept."""
    try:
        check_folder(session.root, cmd.name, cmd.fingerprint(config),
                     config.output.limit is not None, config.output.mode,
                     cmd.default_fingerprint(), sample_ids, id_parts=True,
                     canonical=selection_reader(cmd.options))
    except RunFolderConflict:
        if previous is not None:
            atomic_write_text(session.root / RUN_FILE,
                              json.dumps(previous, ensure_ascii=False, indent=2) + "\n")
        raise


def listed_records(runs: Sequence[StudyRun], id_tag: str | tuple[str, ...],
                   bertscore: bool = False, judged: bool = False) -> list[SampleRecord]:
    """Every record of ``runs`` (listed path, the streaming tests' reference), flagged
    as ``run`` flags them."""
    records = [rec for s in runs for rec in run_records(
        s.run, s.task, s.model, s.root, tags=s.tags, id_tag=id_tag, bertscore=bertscore,
        judged=judged)]
    mark_records(records, DEFAULT_POLICY)  # details.truncated / model_failure, as in `run`
    return records


def study_summary(session: RunSession, env: dict[str, Any], results: list[dict[str, Any]],
                  prov: dict[str, Any], md: str, problems: list[str],
                  tags: tuple[str, ...], limit: int | None, off: Sequence[str] = ()
                  ) -> tuple[dict[str, Any], str, str]:
    """The study's summary from its envelope ``env`` (see the module docstring) and its
    two texts: ``(summary, console text, summary.md)``; the console text is the table
    ``md`` and the per-condition intervals of ``tags[0]``. ``metrics_off``: the metrics
    not computed, from ``results`` (:mod:`.metrics_off`) and ``off``."""
    partial = limit is not None
    prov |= {"limit": limit, "partial": partial,
             "config_hash": stable_hash(session.config)}  # as run.json records it
    summary = {**env, "results": results, "provenance": prov, "problems": problems}
    # named by the line shown when nothing was scored (core.run_tables.nothing_scored)
    not_computed = list(dict.fromkeys([*metrics_off(results), *off]))
    summary |= {"metrics_off": not_computed} if not_computed else {}
    key = tags[0]
    values = [str(v) for b in summary["models"].values()
              for v in (b.get("groups") or {}).get(key, {})]
    summary |= {"condition_keys": [key],
                "headline_note": pooled_note(key, list(dict.fromkeys(values)))}
    shown = md + condition_markdown(summary, key)
    return summary, shown, partial_banner(summary) + shown + provenance_markdown(summary)


def report_each(conditions: Iterable[tuple[str, dict[str, Any], int]]) -> None:
    """:func:`~.run_output.report_errors` for every condition of a study:
    ``(label, results entry, number of records)``."""
    for label, entry, n in conditions:
        report_errors(label, entry, n)


def study_status(message: str, n_records: int, answered: bool, root: Path) -> int:
    """Exit status of a study: 1 with ``message`` (``{n}``: ``n_records``) when no
    record of any of its runs was answered, else 0."""
    return fail_if_nothing_answered(message.format(n=n_records), not answered, root)
