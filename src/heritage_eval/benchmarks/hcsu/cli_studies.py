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
robustness, whose conditions are prepared inside the folder, plans both tasks on every
condition once they are made and checks the planned ids,
:func:`~.robustness_stream.robustness_ids`, before any request is sent) and writes
``samples.jsonl`` as sample-record envelopes (:mod:`.sample_records`, tagged with
``k`` / ``shots`` / ``descriptions`` / ``condition`` + ``task`` in ``groups`` and in the
id), ``summary.json`` with the statistics envelope (grouped by those tags) and the
legacy ``results`` list, and ``summary.md`` (:mod:`.study_folder`); the K and shot sweeps also draw
``k_sweep.png`` / ``shot_sweep.png`` (:mod:`.figures`). Tables, messages and exit codes are those
of the earlier commands.

Headline rule: a study's conditions differ (K = 2 … 5 has chance 50 % … 20 %), so the
headline is the per-condition table (value [95 % interval] per ``k`` / ``shots`` /
``descriptions`` / ``condition``), on the console and in ``summary.md``; the envelope's
pooled ``models.*.metrics`` stay in ``summary.json`` for tools, and ``summary.json``
names the condition tag (``condition_keys``) and says why the pooled value is not a
headline (``headline_note``), which the viewer and ``compare`` read. ``summary.md`` ends
with the run's provenance (:mod:`heritage_eval.report.provenance_md`).

Streaming: every study runs condition by condition through :mod:`.study_stream` — each
record's ``samples.jsonl`` line written as it comes, the envelope, the ``results``
entries and the figure's intervals folded from per-sample numbers — so its memory does
not grow with the records. The description conditions (the shot sweep's, robustness's
description task) score BERTScore and the judge a window at a time, as ``run
hcsu-description`` (:func:`~.study_stream.stream_description_conditions`,
:func:`~.study_stream.description_stream`); robustness's Table 4 rows come from its
conditions' sinks (:mod:`.robustness_stream`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.archive import wild_root
from heritage_eval.benchmarks.hcsu.bench_base import GROUP_KEYS
from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
from heritage_eval.benchmarks.hcsu.cli_args import (
    ABLATION_OPTIONS,
    K_SWEEP_OPTIONS,
    ROBUSTNESS_OPTIONS,
    SHOT_SWEEP_OPTIONS,
    ablation_args,
    k_sweep_args,
    robustness_args,
    shot_sweep_args,
)
from heritage_eval.benchmarks.hcsu.commands import TOOLS
from heritage_eval.benchmarks.hcsu.figures import plot_k_sweep, plot_shot_sweep
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
from heritage_eval.benchmarks.hcsu.robustness_stream import (
    ID_TAGS,
    plan_robustness,
    robustness_ids,
    stream_robustness,
)
from heritage_eval.benchmarks.hcsu.run_output import print_summary
from heritage_eval.benchmarks.hcsu.runio import (
    engine_for,
    judge_backend,
    judge_engine,
    load_data,
    model_for,
    run_provenance,
    scorer_for,
    zip_password,
)
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.studies import (
    plan_ablation,
    plan_k_sweep,
    plan_shot_sweep,
    prepare_conditions,
)
from heritage_eval.benchmarks.hcsu.study_folder import (
    NONE_DESCRIBED,
    NONE_ERROR,
    NONE_FAILED,
    claim,
    options_of,
    planned_ids,
    refuse_shrink,
    report_each,
    study_session,
    study_status,
    study_summary,
)
from heritage_eval.benchmarks.hcsu.study_stream import (
    StudyStream,
    stream_conditions,
    stream_description_conditions,
)
from heritage_eval.benchmarks.hcsu.tables import (
    discrimination_table,
    k_sweep_table,
    robustness_table,
    shot_sweep_table,
)
from heritage_eval.benchmarks.registry import AddArgs, Command, Handler
from heritage_eval.core.run_limits import print_run_limits
from heritage_eval.core.run_output import write_summary
from heritage_eval.core.rundir import RunSession, read_run_file
from heritage_eval.core.store import RunFolder

__all__ = ["ABLATION", "K_SWEEP", "ROBUSTNESS", "SHOT_SWEEP", "planned_ids"]


def _finish_streamed(session: RunSession, name: str, stream: StudyStream,
                     prov: dict[str, Any], md: str, problems: list[str],
                     tags: str | tuple[str, ...], limit: int | None,
                     results: list[dict[str, Any]] | None = None,
                     off: Sequence[str] = ()) -> tuple[dict[str, Any], str]:
    """Write ``summary.json`` / ``summary.md`` of a streamed study (its ``samples.jsonl``
    is in place); ``tags``: the study's condition tag(s), the first one headlined;
    ``results``: the ``results`` list (default: the stream's, one entry per
    condition); ``off``: metrics the study did not compute, when its results do not say
    (:mod:`.metrics_off`); ``(summary, console text)``."""
    env = stream.envelope.envelope(name, partial=limit is not None)
    summary, shown, markdown = study_summary(
        session, env, stream.results() if results is None else results, prov, md,
        problems, (tags,) if isinstance(tags, str) else tags, limit, off)
    write_summary(RunFolder(session.root), summary, markdown)
    return summary, shown


def _k_sweep(args: argparse.Namespace) -> int:
    cmd = K_SWEEP_OPTIONS
    config = cmd.config(args)
    opts = options_of(config, KSweepOptions)
    limit = config.output.limit
    backend = model_for(config.model, DISCRIMINATION)
    ds = load_data(opts, config.out_dir(), claim=claim(cmd, config))
    base = discrimination_config(opts, dataset=ds)
    plans, skipped, message = plan_k_sweep(ds, base, list(opts.ks), limit)
    if message:
        print(f"warning: {message}" if plans else f"error: {message}", file=sys.stderr)
    if not plans:
        return 2  # checked before the run folder and the cache are opened
    with study_session(cmd, config, planned_ids(plans, "k")) as session:
        engine = engine_for(config, RunFolder(session.root), backend)
        with StudyStream(session.root / "samples.jsonl", (ACCURACY,),
                         ("k", *GROUP_KEYS)) as stream:
            stream_conditions(stream, ds, base, plans, engine, "k", "K={}")
        results = stream.results()
        md = "## HCSU K-way calibration\n\n" + k_sweep_table(results)
        plot_k_sweep(results, stream.intervals("k"), session.root / "k_sweep.png")
        session.record_file("k_sweep.png")
        spec = base.spec() | {"k": sorted(plans)}  # the K values run, not one K
        prov = run_provenance(config.model, engine, ds, spec, skipped=skipped)
        summary, shown = _finish_streamed(session, cmd.name, stream, prov, md, ds.problems,
                                          "k", limit)
    print_summary(shown, session.root)
    print_run_limits(summary)
    report_each((f"K={c.tags['k']}", e, c.n_records)
                for c, e in zip(stream.conditions, results, strict=True))
    return study_status(NONE_ERROR, stream.n_records, stream.answered(), session.root)


def _shot_sweep(args: argparse.Namespace) -> int:
    cmd = SHOT_SWEEP_OPTIONS
    config = cmd.config(args)
    opts = options_of(config, ShotSweepOptions)
    limit = config.output.limit
    backend = model_for(config.model, DESCRIPTION)
    judge = judge_backend(opts, config.model)
    ds = load_data(opts, config.out_dir(), claim=claim(cmd, config))
    base = description_config(opts)
    plans, skipped = plan_shot_sweep(ds, base, list(opts.shot_list), limit)
    if not plans:
        print("error: no shot count can be met (see above)", file=sys.stderr)
        return 2
    scorer, why = scorer_for(opts)
    with study_session(cmd, config, planned_ids(plans, "shots")) as session:
        folder = RunFolder(session.root)
        engine = engine_for(config, folder, backend)
        with StudyStream(session.root / "samples.jsonl", DESCRIPTION_METRICS,
                         ("shots", *GROUP_KEYS)) as stream:
            stream_description_conditions(stream, ds, base, plans, engine, scorer, why,
                                          judge_engine(config, folder, judge))
        results = stream.results()
        md = "## HCSU few-shot calibration\n\n" + shot_sweep_table(results)
        plot_shot_sweep(results, stream.intervals("shots"), session.root / "shot_sweep.png")
        session.record_file("shot_sweep.png")
        spec = base.spec() | {"shots": sorted(plans)}  # the shot counts run
        prov = run_provenance(config.model, engine, ds, spec, skipped=skipped,
                              judge_model=judge.spec if judge else None,
                              bertscore=scorer.identity() if scorer else None)
        summary, shown = _finish_streamed(session, cmd.name, stream, prov, md, ds.problems,
                                          "shots", limit)
    print_summary(shown, session.root)
    print_run_limits(summary)
    report_each((f"{c.tags['shots']} shots", e, c.n_records)
                for c, e in zip(stream.conditions, results, strict=True))
    return study_status(NONE_DESCRIBED, stream.n_records, stream.answered(), session.root)


def _ablation(args: argparse.Namespace) -> int:
    cmd = ABLATION_OPTIONS
    config = cmd.config(args)
    opts = options_of(config, AblationOptions)
    limit = config.output.limit
    backend = model_for(config.model, DISCRIMINATION)
    ds = load_data(opts, config.out_dir(), claim=claim(cmd, config))
    base = discrimination_config(opts, dataset=ds)
    modes = ["random", "generated", "expert"] if base.generated else ["random", "expert"]
    plans = plan_ablation(ds, base, modes, limit)  # type: ignore[arg-type]
    with study_session(cmd, config, planned_ids(plans, "descriptions")) as session:
        engine = engine_for(config, RunFolder(session.root), backend)
        with StudyStream(session.root / "samples.jsonl", (ACCURACY,),
                         ("descriptions", *GROUP_KEYS)) as stream:
            stream_conditions(stream, ds, base, dict(plans), engine, "descriptions",
                                   "{} descriptions")
        results = stream.results()
        md = ("## HCSU description ablation (Table 5)\n\n"
              + discrimination_table(results, label="Descriptions", label_key="descriptions"))
        prov = run_provenance(config.model, engine, ds, base.spec() | {"descriptions": modes})
        summary, shown = _finish_streamed(session, cmd.name, stream, prov, md, ds.problems,
                                          "descriptions", limit)
    print_summary(shown, session.root)
    print_run_limits(summary)
    report_each((f"{c.tags['descriptions']} descriptions", e, c.n_records)
                for c, e in zip(stream.conditions, results, strict=True))
    return study_status(NONE_ERROR, stream.n_records, stream.answered(), session.root)


def _robustness(args: argparse.Namespace) -> int:
    cmd = ROBUSTNESS_OPTIONS
    config = cmd.config(args)
    opts = options_of(config, RobustnessOptions)
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
    with study_session(cmd, config) as session:
        folder = RunFolder(session.root)
        password = zip_password(opts)
        wild = wild_root(Path(opts.data), Path(opts.extract_to or folder.path("extracted")),
                         password)  # the Wild archive wild.zip.001 …, extracted once
        folders = prepare_conditions(wild, folder.path("conditions"), opts.canonical,
                                     opts.workers)
        ds = load_data(opts, config.out_dir())
        disc = discrimination_config(opts, dataset=ds) if "discrimination" in tasks else None
        desc = description_config(opts) if "description" in tasks else None
        plans = plan_robustness(folders, disc, desc, config.output.limit, password)
        refuse_shrink(session, cmd, config, robustness_ids(plans), previous)  # nothing sent
        engines = {task: engine_for(config, folder, backend)
                   for task, backend in backends.items()}
        scorer, why = scorer_for(opts) if "description" in tasks else (None, None)
        with StudyStream(session.root / "samples.jsonl", (ACCURACY, *DESCRIPTION_METRICS),
                         (*ID_TAGS, *GROUP_KEYS)) as stream:
            rows = stream_robustness(stream, plans, disc, desc, engines, scorer, why,
                                     judge_engine(config, folder, judge))
        md = "## HCSU robustness (Table 4)\n\n" + robustness_table(rows)
        spec = {"discrimination": disc.spec() if disc else None,
                "description": desc.spec() if desc else None}
        prov = run_provenance(config.model, next(iter(engines.values())), ds, spec,
                              conditions={k: str(v) for k, v in folders.items()})
        off = ([why] if why else []) + ([] if judge else ["Term. / Rich. (no --judge)"])
        summary, shown = _finish_streamed(session, cmd.name, stream, prov, md, ds.problems,
                                          ID_TAGS, config.output.limit, results=rows,
                                          off=off if desc else [])
    print_summary(shown, session.root)
    print_run_limits(summary)
    return study_status(NONE_FAILED, stream.n_records, stream.answered(), session.root)


def _command(name: str, add_args: AddArgs, handler: Handler) -> Command:
    help_text = TOOLS[name][0]
    return Command(name=name, help=help_text, add_args=add_args, handler=guarded(handler),
                   description=help_text)


K_SWEEP = _command("k-sweep", k_sweep_args, _k_sweep)
SHOT_SWEEP = _command("shot-sweep", shot_sweep_args, _shot_sweep)
ABLATION = _command("ablation", ablation_args, _ablation)
ROBUSTNESS = _command("robustness", robustness_args, _robustness)
