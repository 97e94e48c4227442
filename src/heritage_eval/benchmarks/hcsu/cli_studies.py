"""``heritage-eval hcsu k-sweep | shot-sweep | ablation | robustness``: multi-run studies.

Each study reads its options into a typed :class:`~heritage_eval.core.config.RunConfig`
(its own options model from :mod:`.option_models` plus the platform's model, output and
run-folder sections; :mod:`.cli_args`), checks its settings and the model before
anything is written, then opens its run folder like every platform run
(:func:`heritage_eval.core.rundir.open_run`: another configuration in ``--out`` is
refused naming ``--resume`` / ``--overwrite``, a lock keeps a second process out, a
``--limit`` run is marked PARTIAL, and a run that would leave out rows the folder holds
— a smaller ``--limit``, fewer ``--ks`` — is refused, also under ``--resume``, naming
them: the K / shot / ablation studies pass the ids they plan, :func:`planned_ids`;
robustness, whose conditions are prepared inside the folder, checks its records before
``samples.jsonl`` is written) and writes
``samples.jsonl`` as sample-record envelopes (:mod:`.sample_records`, tagged with
``k`` / ``shots`` / ``descriptions`` / ``condition`` + ``task`` in ``groups`` and in the
id), ``summary.json`` with the statistics envelope (grouped by those tags) and the
legacy ``results`` list, and ``summary.md``; the K and shot sweeps also draw
``k_sweep.png`` / ``shot_sweep.png`` (:mod:`.figures`). Tables, messages and exit codes are those
of the earlier commands.

Headline rule: a study's conditions differ (K = 2 … 5 has chance 50 % … 20 %), so the
headline is the per-condition table (value [95 % interval] per ``k`` / ``shots`` /
``descriptions`` / ``condition``), on the console and in ``summary.md``; the envelope's
pooled ``models.*.metrics`` stay in ``summary.json`` for tools, and ``summary.json``
names the condition tag (``condition_keys``) and says why the pooled value is not a
headline (``headline_note``), which the viewer and ``compare`` read. ``summary.md`` ends
with the run's provenance (:mod:`heritage_eval.report.provenance_md`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from heritage_eval.benchmarks.hcsu.archive import wild_root
from heritage_eval.benchmarks.hcsu.bench_base import GROUP_KEYS
from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
from heritage_eval.benchmarks.hcsu.cli_args import (
    ABLATION_OPTIONS,
    K_SWEEP_OPTIONS,
    ROBUSTNESS_OPTIONS,
    SHOT_SWEEP_OPTIONS,
    CommandOptions,
    ablation_args,
    k_sweep_args,
    robustness_args,
    shot_sweep_args,
)
from heritage_eval.benchmarks.hcsu.commands import TOOLS
from heritage_eval.benchmarks.hcsu.description import PlannedRequest
from heritage_eval.benchmarks.hcsu.discrimination import PlannedItem
from heritage_eval.benchmarks.hcsu.figures import plot_k_sweep, plot_shot_sweep
from heritage_eval.benchmarks.hcsu.markdown import condition_markdown, pooled_note
from heritage_eval.benchmarks.hcsu.option_models import (
    AblationOptions,
    KSweepOptions,
    RobustnessOptions,
    ShotSweepOptions,
)
from heritage_eval.benchmarks.hcsu.options import (
    DESCRIPTION,
    DISCRIMINATION,
    description_config,
    discrimination_config,
    guarded,
)
from heritage_eval.benchmarks.hcsu.run_output import (
    fail_if_nothing_answered,
    nothing_answered,
    print_summary,
    report_errors,
)
from heritage_eval.benchmarks.hcsu.runio import (
    Claim,
    engine_for,
    judge_backend,
    judge_engine,
    load_data,
    model_for,
    run_provenance,
    scorer_for,
    zip_password,
)
from heritage_eval.benchmarks.hcsu.sample_records import run_records
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.studies import (
    StudyRun,
    description_ablation,
    k_sweep,
    plan_ablation,
    plan_k_sweep,
    plan_shot_sweep,
    prepare_conditions,
    robustness,
    shot_sweep,
)
from heritage_eval.benchmarks.hcsu.tables import (
    discrimination_table,
    k_sweep_table,
    robustness_table,
    shot_sweep_table,
)
from heritage_eval.benchmarks.outcomes import DEFAULT_POLICY, mark_records
from heritage_eval.benchmarks.registry import AddArgs, Command, Handler
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.config import BenchmarkOptions, RunConfig
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.run_limits import print_run_limits
from heritage_eval.core.run_output import partial_banner, write_run
from heritage_eval.core.rundir import (
    RUN_FILE,
    RunFolderConflict,
    RunSession,
    check_folder,
    open_run,
    read_run_file,
)
from heritage_eval.core.store import RunFolder, atomic_write_text
from heritage_eval.core.summary import envelope
from heritage_eval.core.types import stable_hash
from heritage_eval.report.provenance_md import provenance_markdown

Opts = TypeVar("Opts", bound=BenchmarkOptions)


def _options(config: RunConfig, kind: type[Opts]) -> Opts:
    """``config.options`` as the study's own options (raises ``TypeError`` otherwise)."""
    opts = config.options
    if not isinstance(opts, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(opts).__name__}")
    return opts


def _claim(cmd: CommandOptions, config: RunConfig) -> Claim:
    return (cmd.name, cmd.fingerprint(config), config.output.limit is not None,
            config.output.mode)


@contextlib.contextmanager
def _session(cmd: CommandOptions, config: RunConfig,
             sample_ids: Collection[str] | None = None) -> Iterator[RunSession]:
    """The study's run folder, open (:func:`~heritage_eval.core.rundir.open_run`);
    ``sample_ids``: the record ids the study will write, so that a run that would leave
    fewer rows than the folder holds is refused before anything is written."""
    with open_run(config.out_dir(), cmd.name, cmd.fingerprint(config),
                  partial=config.output.limit is not None, mode=config.output.mode,
                  defaults=cmd.default_fingerprint(), sample_ids=sample_ids) as session:
        yield session


def planned_ids(plans: Mapping[Any, Sequence[PlannedItem | PlannedRequest]], tag: str
                ) -> set[str]:
    """The record ids a study writes for ``plans`` (tag value -> planned questions or
    requests): one per planned item, ``<target id>#<tag>=<value>``, as
    :mod:`.sample_records` tags them."""
    return {f"{item.target.id}#{tag}={value}" for value, plan in plans.items()
            for item in plan}


def _refuse_shrink(session: RunSession, cmd: CommandOptions, config: RunConfig,
                   records: Sequence[SampleRecord], previous: dict[str, Any] | None
                   ) -> None:
    """The no-shrink rule for a study whose samples are known only once it has run
    (robustness: its conditions are prepared inside the run folder): raise
    :class:`~heritage_eval.core.rundir.RunFolderConflict`, before ``samples.jsonl`` is
    touched, when ``records`` would leave out rows the folder holds (unless
    ``--overwrite``, whose folder was emptied on open). ``previous``: the folder's
    ``run.json`` before it was opened, put back on refusal, so that it still describes
    the rows kept."""
    try:
        check_folder(session.root, cmd.name, cmd.fingerprint(config),
                     config.output.limit is not None, config.output.mode,
                     cmd.default_fingerprint(), {r.id for r in records})
    except RunFolderConflict:
        if previous is not None:
            atomic_write_text(session.root / RUN_FILE,
                              json.dumps(previous, ensure_ascii=False, indent=2) + "\n")
        raise


def _records(runs: Sequence[StudyRun], id_tag: str | tuple[str, ...], bertscore: bool = False,
             judged: bool = False) -> list[SampleRecord]:
    records = [rec for s in runs for rec in run_records(
        s.run, s.task, s.model, s.root, tags=s.tags, id_tag=id_tag, bertscore=bertscore,
        judged=judged)]
    mark_records(records, DEFAULT_POLICY)  # details.truncated / model_failure, as in `run`
    return records


def _write(session: RunSession, name: str, results: list[dict[str, Any]],
           records: list[SampleRecord], prov: dict[str, Any], md: str, problems: list[str],
           metrics: Sequence[MetricSpec], tags: tuple[str, ...], limit: int | None
           ) -> tuple[dict[str, Any], str]:
    """Write the study's run folder: ``samples.jsonl`` (envelopes), ``summary.json`` (the
    statistics envelope plus ``results``, ``provenance``, ``problems``, the condition tag
    ``condition_keys`` and ``headline_note``) and ``summary.md`` (PARTIAL banner for a
    ``--limit`` run, the study's table ``md``, the per-condition intervals of ``tags[0]``,
    provenance), atomically. Returns ``(summary, console text)``: the table and the
    per-condition intervals."""
    partial = limit is not None
    prov |= {"limit": limit, "partial": partial,
             "config_hash": stable_hash(session.config)}  # as run.json records it
    summary = {**envelope(name, records, metrics, (*tags, *GROUP_KEYS), partial=partial),
               "results": results, "provenance": prov, "problems": problems}
    key = tags[0]
    values = [str(v) for b in summary["models"].values()
              for v in (b.get("groups") or {}).get(key, {})]
    summary |= {"condition_keys": [key],
                "headline_note": pooled_note(key, list(dict.fromkeys(values)))}
    shown = md + condition_markdown(summary, key)
    write_run(RunFolder(session.root), records, summary,
              partial_banner(summary) + shown + provenance_markdown(summary))
    return summary, shown


def _report_each(runs: Sequence[StudyRun], key: str, label: str) -> None:
    """:func:`~.run_output.report_errors` for every run of a study; ``label`` is a format
    string for the run's ``key`` tag (``"K={}"``)."""
    for s in runs:
        report_errors(label.format(s.tags[key]), s.entry(), s.run.records)


def _nothing(message: str, records: list[SampleRecord], root: Path) -> int:
    """Exit status of a study: 1 with ``message`` (``{n}``: the number of records) when
    no record of any of its runs was answered."""
    return fail_if_nothing_answered(message.format(n=len(records)),
                                    nothing_answered(records), root)


#: exit-1 messages of the studies
_NONE_ERROR = "none of the {n} sample(s) was answered (every one ended as error)"
_NONE_FAILED = "none of the {n} sample(s) was answered (errors or failed metrics)"
_NONE_DESCRIBED = "none of the {n} description(s) was answered (errors or failed metrics)"


def _k_sweep(args: argparse.Namespace) -> int:
    cmd = K_SWEEP_OPTIONS
    config = cmd.config(args)
    opts = _options(config, KSweepOptions)
    limit = config.output.limit
    backend = model_for(config.model, DISCRIMINATION)
    ds = load_data(opts, config.out_dir(), claim=_claim(cmd, config))
    base = discrimination_config(opts, dataset=ds)
    plans, skipped, message = plan_k_sweep(ds, base, list(opts.ks), limit)
    if message:
        print(f"warning: {message}" if plans else f"error: {message}", file=sys.stderr)
    if not plans:
        return 2  # checked before the run folder and the cache are opened
    with _session(cmd, config, planned_ids(plans, "k")) as session:
        engine = engine_for(config, RunFolder(session.root), backend)
        runs = k_sweep(ds, base, plans, engine)
        results = [s.entry() for s in runs]
        records = _records(runs, "k")
        md = "## HCSU K-way calibration\n\n" + k_sweep_table(results)
        plot_k_sweep(results, records, session.root / "k_sweep.png")
        session.record_file("k_sweep.png")
        spec = base.spec() | {"k": sorted(plans)}  # the K values run, not one K
        prov = run_provenance(config.model, engine, ds, spec, skipped=skipped)
        summary, shown = _write(session, cmd.name, results, records, prov, md, ds.problems,
                                (ACCURACY,), ("k",), limit)
    print_summary(shown, session.root)
    print_run_limits(summary)
    _report_each(runs, "k", "K={}")
    return _nothing(_NONE_ERROR, records, session.root)


def _shot_sweep(args: argparse.Namespace) -> int:
    cmd = SHOT_SWEEP_OPTIONS
    config = cmd.config(args)
    opts = _options(config, ShotSweepOptions)
    limit = config.output.limit
    backend = model_for(config.model, DESCRIPTION)
    judge = judge_backend(opts, config.model)
    ds = load_data(opts, config.out_dir(), claim=_claim(cmd, config))
    base = description_config(opts)
    plans, skipped = plan_shot_sweep(ds, base, list(opts.shot_list), limit)
    if not plans:
        print("error: no shot count can be met (see above)", file=sys.stderr)
        return 2
    scorer, why = scorer_for(opts)
    with _session(cmd, config, planned_ids(plans, "shots")) as session:
        folder = RunFolder(session.root)
        engine = engine_for(config, folder, backend)
        runs = shot_sweep(ds, base, plans, engine, scorer, why,
                          judge_engine(config, folder, judge))
        results = [s.entry() for s in runs]
        records = _records(runs, "shots", scorer is not None, judge is not None)
        md = "## HCSU few-shot calibration\n\n" + shot_sweep_table(results)
        plot_shot_sweep(results, records, session.root / "shot_sweep.png")
        session.record_file("shot_sweep.png")
        spec = base.spec() | {"shots": sorted(plans)}  # the shot counts run
        prov = run_provenance(config.model, engine, ds, spec, skipped=skipped,
                              judge_model=judge.spec if judge else None,
                              bertscore=scorer.identity() if scorer else None)
        summary, shown = _write(session, cmd.name, results, records, prov, md, ds.problems,
                                DESCRIPTION_METRICS, ("shots",), limit)
    print_summary(shown, session.root)
    print_run_limits(summary)
    _report_each(runs, "shots", "{} shots")
    return _nothing(_NONE_DESCRIBED, records, session.root)


def _ablation(args: argparse.Namespace) -> int:
    cmd = ABLATION_OPTIONS
    config = cmd.config(args)
    opts = _options(config, AblationOptions)
    limit = config.output.limit
    backend = model_for(config.model, DISCRIMINATION)
    ds = load_data(opts, config.out_dir(), claim=_claim(cmd, config))
    base = discrimination_config(opts, dataset=ds)
    modes = ["random", "generated", "expert"] if base.generated else ["random", "expert"]
    plans = plan_ablation(ds, base, modes, limit)  # type: ignore[arg-type]
    with _session(cmd, config, planned_ids(plans, "descriptions")) as session:
        engine = engine_for(config, RunFolder(session.root), backend)
        runs = description_ablation(ds, base, plans, engine)
        results = [s.entry() for s in runs]
        records = _records(runs, "descriptions")
        md = ("## HCSU description ablation (Table 5)\n\n"
              + discrimination_table(results, label="Descriptions", label_key="descriptions"))
        prov = run_provenance(config.model, engine, ds, base.spec() | {"descriptions": modes})
        summary, shown = _write(session, cmd.name, results, records, prov, md, ds.problems,
                                (ACCURACY,), ("descriptions",), limit)
    print_summary(shown, session.root)
    print_run_limits(summary)
    _report_each(runs, "descriptions", "{} descriptions")
    return _nothing(_NONE_ERROR, records, session.root)


def _robustness(args: argparse.Namespace) -> int:
    cmd = ROBUSTNESS_OPTIONS
    config = cmd.config(args)
    opts = _options(config, RobustnessOptions)
    tasks = set(opts.tasks)
    desc_model = config.model.model_copy(
        update={"model": opts.description_model or config.model.model})
    backends = {}
    if "discrimination" in tasks:
        backends["discrimination"] = model_for(config.model, DISCRIMINATION)
    if "description" in tasks:
        try:
            backends["description"] = model_for(desc_model, DESCRIPTION)
        except HcsuConfigError as exc:
            role = "--description-model" if opts.description_model else "--model"
            raise HcsuConfigError(
                f"{exc}. The robustness study runs both tasks by default: name a model "
                "for the description task with --description-model (e.g. "
                "--description-model baseline:nearest-description), or run only "
                f"--tasks discrimination (the description model is {role} "
                f"{desc_model.model!r})") from exc
    judge = judge_backend(opts, config.model) if "description" in tasks else None
    previous = read_run_file(config.out_dir())
    with _session(cmd, config) as session:
        folder = RunFolder(session.root)
        password = zip_password(opts)
        wild = wild_root(Path(opts.data), Path(opts.extract_to or folder.path("extracted")),
                         password)  # the Wild archive wild.zip.001 …, extracted once
        folders = prepare_conditions(wild, folder.path("conditions"), opts.canonical,
                                     opts.workers)
        ds = load_data(opts, config.out_dir())
        engines = {task: engine_for(config, folder, backend)
                   for task, backend in backends.items()}
        scorer, why = scorer_for(opts) if "description" in tasks else (None, None)
        disc = discrimination_config(opts, dataset=ds) if "discrimination" in tasks else None
        desc = description_config(opts) if "description" in tasks else None
        rows, runs = robustness(folders, disc, desc, engines, scorer, why,
                                judge_engine(config, folder, judge), config.output.limit,
                                password)
        records = _records(runs, ("condition", "task"), scorer is not None,
                           judge is not None)
        _refuse_shrink(session, cmd, config, records, previous)
        md = "## HCSU robustness (Table 4)\n\n" + robustness_table(rows)
        spec = {"discrimination": disc.spec() if disc else None,
                "description": desc.spec() if desc else None}
        prov = run_provenance(config.model, next(iter(engines.values())), ds, spec,
                              conditions={k: str(v) for k, v in folders.items()})
        summary, shown = _write(session, cmd.name, rows, records, prov, md, ds.problems,
                                (ACCURACY, *DESCRIPTION_METRICS), ("condition", "task"),
                                config.output.limit)
    print_summary(shown, session.root)
    print_run_limits(summary)
    return _nothing(_NONE_FAILED, records, session.root)


def _command(name: str, add_args: AddArgs, handler: Handler) -> Command:
    help_text = TOOLS[name][0]
    return Command(name=name, help=help_text, add_args=add_args, handler=guarded(handler),
                   description=help_text)


K_SWEEP = _command("k-sweep", k_sweep_args, _k_sweep)
SHOT_SWEEP = _command("shot-sweep", shot_sweep_args, _shot_sweep)
ABLATION = _command("ablation", ablation_args, _ablation)
ROBUSTNESS = _command("robustness", robustness_args, _robustness)
