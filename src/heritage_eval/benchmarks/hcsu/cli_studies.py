"""``heritage-eval hcsu k-sweep | shot-sweep | ablation | robustness``: multi-run studies.

Each study checks its settings and the model before anything is written, then opens its
run folder like every platform run (:func:`heritage_eval.core.rundir.open_run`: another
configuration in ``--out`` is refused naming ``--resume`` / ``--overwrite``, a lock
keeps a second process out, a ``--limit`` run is marked PARTIAL) and writes
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
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.archive import wild_root
from heritage_eval.benchmarks.hcsu.bench_base import GROUP_KEYS, run_mode
from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
from heritage_eval.benchmarks.hcsu.cli_args import (
    ablation_args,
    k_sweep_args,
    robustness_args,
    shot_sweep_args,
)
from heritage_eval.benchmarks.hcsu.commands import TOOLS
from heritage_eval.benchmarks.hcsu.figures import plot_k_sweep, plot_shot_sweep
from heritage_eval.benchmarks.hcsu.markdown import condition_markdown, pooled_note
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
    engine_from_args,
    judge_backend,
    judge_from_args,
    load_data,
    model_for,
    run_provenance,
    scorer_from_args,
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
from heritage_eval.core.engine import config_of, partial_banner, print_run_limits, write_run
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.rundir import RunSession, open_run
from heritage_eval.core.store import RunFolder
from heritage_eval.core.summary import envelope
from heritage_eval.core.types import stable_hash
from heritage_eval.report.provenance_md import provenance_markdown


def _claim(name: str, args: argparse.Namespace) -> tuple[str, dict[str, Any], bool, Any]:
    return name, config_of(args), args.limit is not None, run_mode(args)


@contextlib.contextmanager
def _session(name: str, args: argparse.Namespace) -> Iterator[RunSession]:
    defaults = config_of(argparse.Namespace(**getattr(args, "_defaults", None) or {}))
    with open_run(args.out, name, config_of(args), partial=args.limit is not None,
                  mode=run_mode(args), defaults=defaults) as session:
        yield session


def _records(runs: Sequence[StudyRun], id_tag: str | tuple[str, ...], bertscore: bool = False,
             judged: bool = False) -> list[SampleRecord]:
    records = [rec for s in runs for rec in run_records(
        s.run, s.task, s.model, s.root, tags=s.tags, id_tag=id_tag, bertscore=bertscore,
        judged=judged)]
    mark_records(records, DEFAULT_POLICY)  # details.truncated / model_failure, as in `run`
    return records


def _write(session: RunSession, name: str, results: list[dict[str, Any]],
           records: list[SampleRecord], prov: dict[str, Any], md: str, problems: list[str],
           metrics: Sequence[MetricSpec], tags: tuple[str, ...], args: argparse.Namespace
           ) -> tuple[dict[str, Any], str]:
    """Write the study's run folder: ``samples.jsonl`` (envelopes), ``summary.json`` (the
    statistics envelope plus ``results``, ``provenance``, ``problems``, the condition tag
    ``condition_keys`` and ``headline_note``) and ``summary.md`` (PARTIAL banner for a
    ``--limit`` run, the study's table ``md``, the per-condition intervals of ``tags[0]``,
    provenance), atomically. Returns ``(summary, console text)``: the table and the
    per-condition intervals."""
    partial = args.limit is not None
    prov |= {"limit": args.limit, "partial": partial,
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
    name = "hcsu-k-sweep"
    backend = model_for(args, DISCRIMINATION)
    ds = load_data(args, claim=_claim(name, args))
    base = discrimination_config(args, dataset=ds)
    plans, skipped, message = plan_k_sweep(ds, base, args.ks, args.limit)
    if message:
        print(f"warning: {message}" if plans else f"error: {message}", file=sys.stderr)
    if not plans:
        return 2  # checked before the run folder and the cache are opened
    with _session(name, args) as session:
        engine = engine_from_args(args, RunFolder(session.root), backend)
        runs = k_sweep(ds, base, plans, engine)
        results = [s.entry() for s in runs]
        records = _records(runs, "k")
        md = "## HCSU K-way calibration\n\n" + k_sweep_table(results)
        plot_k_sweep(results, records, session.root / "k_sweep.png")
        session.record_file("k_sweep.png")
        spec = base.spec() | {"k": sorted(plans)}  # the K values run, not one K
        summary, shown = _write(session, name, results, records,
                         run_provenance(args, engine, ds, spec, skipped=skipped), md, ds.problems,
                         (ACCURACY,), ("k",), args)
    print_summary(shown, session.root)
    print_run_limits(summary)
    _report_each(runs, "k", "K={}")
    return _nothing(_NONE_ERROR, records, session.root)


def _shot_sweep(args: argparse.Namespace) -> int:
    name = "hcsu-shot-sweep"
    backend = model_for(args, DESCRIPTION)
    judge = judge_backend(args)
    ds = load_data(args, claim=_claim(name, args))
    base = description_config(args)
    plans, skipped = plan_shot_sweep(ds, base, args.shot_list, args.limit)
    if not plans:
        print("error: no shot count can be met (see above)", file=sys.stderr)
        return 2
    scorer, why = scorer_from_args(args)
    with _session(name, args) as session:
        folder = RunFolder(session.root)
        engine = engine_from_args(args, folder, backend)
        runs = shot_sweep(ds, base, plans, engine, scorer, why,
                          judge_from_args(args, folder, judge))
        results = [s.entry() for s in runs]
        records = _records(runs, "shots", scorer is not None, judge is not None)
        md = "## HCSU few-shot calibration\n\n" + shot_sweep_table(results)
        plot_shot_sweep(results, records, session.root / "shot_sweep.png")
        session.record_file("shot_sweep.png")
        spec = base.spec() | {"shots": sorted(plans)}  # the shot counts run
        summary, shown = _write(session, name, results, records,
                         run_provenance(args, engine, ds, spec, skipped=skipped,
                                        judge_model=judge.spec if judge else None,
                                        bertscore=scorer.identity() if scorer else None),
                         md, ds.problems, DESCRIPTION_METRICS, ("shots",), args)
    print_summary(shown, session.root)
    print_run_limits(summary)
    _report_each(runs, "shots", "{} shots")
    return _nothing(_NONE_DESCRIBED, records, session.root)


def _ablation(args: argparse.Namespace) -> int:
    name = "hcsu-description-ablation"
    backend = model_for(args, DISCRIMINATION)
    ds = load_data(args, claim=_claim(name, args))
    base = discrimination_config(args, dataset=ds)
    modes = ["random", "generated", "expert"] if base.generated else ["random", "expert"]
    plans = plan_ablation(ds, base, modes, args.limit)  # type: ignore[arg-type]
    with _session(name, args) as session:
        engine = engine_from_args(args, RunFolder(session.root), backend)
        runs = description_ablation(ds, base, plans, engine)
        results = [s.entry() for s in runs]
        records = _records(runs, "descriptions")
        md = ("## HCSU description ablation (Table 5)\n\n"
              + discrimination_table(results, label="Descriptions", label_key="descriptions"))
        summary, shown = _write(session, name, results, records,
                         run_provenance(args, engine, ds,
                                        base.spec() | {"descriptions": modes}),
                         md, ds.problems, (ACCURACY,), ("descriptions",), args)
    print_summary(shown, session.root)
    print_run_limits(summary)
    _report_each(runs, "descriptions", "{} descriptions")
    return _nothing(_NONE_ERROR, records, session.root)


def _robustness(args: argparse.Namespace) -> int:
    name = "hcsu-robustness"
    tasks = set(args.tasks)
    desc_args = argparse.Namespace(**{**vars(args),
                                      "model": args.description_model or args.model})
    backends = {}
    if "discrimination" in tasks:
        backends["discrimination"] = model_for(args, DISCRIMINATION)
    if "description" in tasks:
        try:
            backends["description"] = model_for(desc_args, DESCRIPTION)
        except HcsuConfigError as exc:
            role = "--description-model" if args.description_model else "--model"
            raise HcsuConfigError(
                f"{exc}. The robustness study runs both tasks by default: name a model "
                "for the description task with --description-model (e.g. "
                "--description-model baseline:nearest-description), or run only "
                f"--tasks discrimination (the description model is {role} "
                f"{desc_args.model!r})") from exc
    judge = judge_backend(args) if "description" in tasks else None
    with _session(name, args) as session:
        folder = RunFolder(session.root)
        password = args.zip_password or os.environ.get(args.zip_password_env) or None
        wild = wild_root(Path(args.data), Path(args.extract_to or folder.path("extracted")),
                         password)  # the Wild archive wild.zip.001 …, extracted once
        folders = prepare_conditions(wild, folder.path("conditions"), args.canonical,
                                     args.workers)
        ds = load_data(args)
        engines = {task: engine_from_args(desc_args if task == "description" else args,
                                          folder, backend)
                   for task, backend in backends.items()}
        scorer, why = scorer_from_args(args) if "description" in tasks else (None, None)
        disc = discrimination_config(args, dataset=ds) if "discrimination" in tasks else None
        desc = description_config(args) if "description" in tasks else None
        rows, runs = robustness(folders, disc, desc, engines, scorer, why,
                                judge_from_args(args, folder, judge), args.limit, password)
        records = _records(runs, ("condition", "task"), scorer is not None,
                           judge is not None)
        md = "## HCSU robustness (Table 4)\n\n" + robustness_table(rows)
        spec = {"discrimination": disc.spec() if disc else None,
                "description": desc.spec() if desc else None}
        summary, shown = _write(session, name, rows, records,
                         run_provenance(args, next(iter(engines.values())), ds, spec,
                                        conditions={k: str(v) for k, v in folders.items()}),
                         md, ds.problems, (ACCURACY, *DESCRIPTION_METRICS), ("condition", "task"),
                         args)
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
