"""The one evaluation loop every benchmark runs through (CLI, Python API, config files).

:func:`execute` takes a :class:`~heritage_eval.core.benchmark.Benchmark` and the parsed
options and does, in order: load the data, make the backend, check that the model suits
the benchmark, prepare scoring resources — all before anything is written, so a usage
error creates no folder — then open the run folder (configuration check and lock,
:mod:`.rundir`), send every planned conversation through the cached runner, score,
aggregate, add the statistics envelope and provenance, and write ``samples.jsonl``,
``summary.json``, ``summary.md`` and ``tables/`` (Markdown, CSV, LaTeX) atomically.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from heritage_eval.cli.common import (
    add_model_args,
    backend_from_args,
    cache_from_args,
    model_provenance,
    settings_from_args,
)
from heritage_eval.cli.executor_args import (
    EXECUTOR_OPTIONS,
    add_executor_args,
    executor_from_args,
)
from heritage_eval.core import paths, redact
from heritage_eval.core.benchmark import (
    Benchmark,
    LoadedData,
    ModelRefused,
    RecordSink,
    RunContext,
    UsageError,
)
from heritage_eval.core.executors import Executor, ExecutorError
from heritage_eval.core.failure_counts import OutcomeCounts
from heritage_eval.core.model_failures import apply_policy, apply_to_one, marked, policy_of
from heritage_eval.core.provenance import git_commit, provenance
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.run_limits_cli import (
    add_run_limit_args,
    print_run_limits,
    warn_downscale_of,
)
from heritage_eval.core.run_output import (  # re-exported: the run's files
    EvalOutput,
    cache_line,
    merge_summary,
    partial_banner,
    stream_samples,
    write_run,
    write_summary,
)
from heritage_eval.core.rundir import (
    Mode,
    RunFolderBusy,
    RunFolderConflict,
    RunSession,
    limit_truncates,
    open_run,
)
from heritage_eval.core.runner import RunItem, progress_bar, run_items, run_sync, stream_items
from heritage_eval.core.store import RunFolder
from heritage_eval.core.streamed_results import (
    MappedResults,
    OnePassResults,
    SamplePlan,
    in_sample_order,
)
from heritage_eval.core.summary import (
    DEFAULT_WARN_DOWNSCALE,
    EnvelopeAccumulator,
    envelope,
)
from heritage_eval.core.types import stable_hash
from heritage_eval.report.run_tables import write_run_tables

#: Options that change how a run proceeds, not what it computes: left out of the
#: configuration fingerprint (a re-run with another --concurrency resumes).
NON_CONFIG_OPTIONS = frozenset({
    "out", "cache", "no_cache", "concurrency", "timeout", "retries", "resume", "overwrite",
    "verbose", "limit", "api_key_env", "judge_api_key_env", "embedder_api_key_env",
    "zip_password", "zip_password_env", "extract_to", "quiet", "command", "benchmark",
    "subcommand", "base_urls", "base_urls_file", "config", "warn_downscale"}) | EXECUTOR_OPTIONS


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value.resolve())
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def config_of(opts: argparse.Namespace) -> dict[str, Any]:
    """The configuration fingerprint of ``opts``: every option that can change a result
    (paths resolved), without :data:`NON_CONFIG_OPTIONS` and private ``_`` keys."""
    return {k: _jsonable(v) for k, v in sorted(vars(opts).items())
            if k not in NON_CONFIG_OPTIONS and not k.startswith("_")}


def record_defaults(p: argparse.ArgumentParser) -> None:
    """Keep every option's default in the namespace (``_defaults``), so that a run folder
    made before an option existed still matches when the option is at its default."""
    defaults = {a.dest: a.default for a in p._actions
                if a.dest not in ("help",) and a.default is not argparse.SUPPRESS}
    p.set_defaults(_defaults=defaults)


def add_run_folder_args(p: argparse.ArgumentParser) -> None:
    """``--resume`` / ``--overwrite``: what to do when ``--out`` holds another run."""
    g = p.add_argument_group("run folder")
    x = g.add_mutually_exclusive_group()
    x.add_argument("--resume", action="store_true",
                   help="--out holds a run of other settings: continue in it anyway "
                        "(answers cached for identical requests are re-used, the results "
                        "replaced)")
    x.add_argument("--overwrite", action="store_true",
                   help="--out holds another run: delete that run's files first")


def headline_lines(summary: dict[str, Any]) -> list[str]:
    """What the console shows after a run's own table: per model, each metric with its
    95 % interval per group of the first group key and overall (the table of
    ``summary.md``'s interval section)."""
    from heritage_eval.report.run_tables import model_table
    from heritage_eval.report.tables import to_markdown

    keys: list[str | None] = [*summary.get("group_keys", [])][:1] or [None]
    lines = []
    for model in summary.get("models", {}):
        table = model_table(summary, model, keys[0])
        lines += ["", f"{model} — value [95 % interval]:", to_markdown(
            replace(table, title="")).rstrip()]
    return lines


def intervals_markdown(summary: dict[str, Any]) -> str:
    """The ``summary.md`` section with every metric's 95 % interval, per group."""
    from heritage_eval.report.run_tables import model_table
    from heritage_eval.report.tables import to_markdown

    keys: list[str | None] = [*summary.get("group_keys", [])][:1] or [None]
    parts = ["\n## 95 % confidence intervals\n",
             "Value [95 % interval]: Wilson for 0/1 values, adjusted Student t for "
             "bounded scores, cluster-robust (Korn-Graubard / CR2) for clustered metrics; "
             "macro means (Overall) combine the groups' standard errors "
             "(Welch-Satterthwaite); — marks no interval (n = 1), † a flagged estimate "
             "(summary.json flags; docs/intervals.md). All groups and formats: `tables/`.\n"]
    for model in summary.get("models", {}):
        for key in keys:
            parts.append(to_markdown(model_table(summary, model, key)))
    return "\n".join(parts) + "\n"


def finish_summary(bench: Benchmark, records: list[SampleRecord], body: dict[str, Any],
                   prov: dict[str, Any], partial: bool,
                   warn_downscale: float = DEFAULT_WARN_DOWNSCALE) -> dict[str, Any]:
    """The benchmark's summary body with the platform envelope merged in (envelope keys
    first; the body keeps its own keys such as ``results`` and ``per_category``);
    ``warn_downscale``: the factor of the envelope's ``run_limits`` block."""
    env = envelope(bench.name, records, bench.metrics, bench.group_keys, partial=partial,
                   warn_downscale=warn_downscale)
    return merge_summary(env, body, prov)


def execute(bench: Benchmark, opts: argparse.Namespace) -> EvalOutput:
    """Run ``bench`` with ``opts`` end to end (see the module docstring).

    Raises :class:`UsageError`, :class:`RunFolderConflict`, :class:`RunFolderBusy` or
    ``ModelSpecError`` before anything is written; ``OSError`` for an unwritable
    ``--out``. Per-sample failures never raise: they become ``error`` records.
    """
    start = time.perf_counter()
    commit = _in_background(git_commit)  # two git processes, while the data loads
    redact.register_options(opts)  # every secret the options name is masked everywhere
    paths.configure_from_options(opts)  # --allow-outside-paths
    data = bench.load(opts)
    backend = backend_from_args(opts)
    refusal = bench.refuse_model(backend, data, opts)
    if refusal:
        raise ModelRefused(refusal)
    settings = settings_from_args(opts)
    ctx = RunContext(opts=opts, backend=backend, settings=settings,
                     concurrency=run_concurrency(opts, backend))
    bench.prepare(ctx, data)
    executor = executor_from_args(opts)  # ExecutorError (e.g. Ray missing) before writing
    preflight = getattr(backend, "preflight", None)
    if callable(preflight) and not _has_cache(opts):
        # a fresh run with a bad endpoint setup stops here, in seconds, writing nothing;
        # a resumed run checks lazily, at its first uncached request (a finished run
        # re-scores from its cache even when the server is gone)
        run_sync(preflight())
    limit = getattr(opts, "limit", None)  # PARTIAL only when the limit left samples out
    partial = limit_truncates(limit, len(data.samples), lambda n: len(bench.load(
        argparse.Namespace(**{**vars(opts), "limit": n})).samples))
    mode: Mode = "overwrite" if getattr(opts, "overwrite", False) else (
        "resume" if getattr(opts, "resume", False) else "refuse")
    config = bench.fingerprint(opts)
    defaults = config_of(argparse.Namespace(**getattr(opts, "_defaults", {}) or {}))
    with open_run(opts.out, bench.name, config, partial=partial, mode=mode,
                  defaults=defaults, sample_ids={str(s.id) for s in data.samples}
                  ) as session:
        sink = bench.record_sink(data, ctx)
        acc = EnvelopeAccumulator(bench.metrics, bench.group_keys, warn_downscale_of(opts))
        counts = OutcomeCounts((bench.group_keys or ("",))[0], failure_policy(opts))
        records = _run_and_score(bench, data, ctx, session, executor, sink, acc, counts)
        body = bench.aggregate(records, data, ctx) if records is not None else \
            sink.body() if sink is not None else {}
        if "model_failures" not in body:  # a benchmark that does not count them itself
            body = {**body, **counts.body()}
        prov = provenance(benchmark=bench.name, git_commit=commit.result(),
                          **model_provenance(opts, backend, settings),
                          **bench.provenance(data, ctx), data_info=data.info,
                          config_hash=stable_hash(config), limit=getattr(opts, "limit", None),
                          partial=partial, resumed=session.resumed,
                          executor=getattr(opts, "executor", None) or "local",
                          run_seconds=round(time.perf_counter() - start, 2))
        if records is not None:
            summary = finish_summary(bench, records, body, prov, partial,
                                     warn_downscale_of(opts))
        else:
            summary = merge_summary(acc.envelope(bench.name, partial=partial), body, prov)
        fatal = getattr(backend, "fatal_error", None)
        if fatal:
            summary["run_stopped"] = str(fatal)
        markdown = (partial_banner(summary) + bench.render_markdown(summary)
                    + intervals_markdown(summary))
        if records is not None:
            write_run(RunFolder(session.root), records, summary, markdown)
        else:  # samples.jsonl was written while scoring
            write_summary(RunFolder(session.root), summary, markdown)
        for path in write_run_tables(summary, session.root):
            session.record_file(path.relative_to(session.root).as_posix())
    if summary.get("run_stopped"):
        status = 1
    elif records is not None:
        status = bench.exit_status(records)
    else:
        status = 0 if acc.answered() else 1
    return EvalOutput(records, summary, Path(opts.out), status)


def _in_background(fn: Callable[[], str | None]) -> concurrent.futures.Future[str | None]:
    """``fn()`` started in a worker thread; ``.result()`` waits for it."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(fn)
    pool.shutdown(wait=False)
    return future


def set_option_default(p: argparse.ArgumentParser, dest: str, value: Any,
                       help_text: str | None = None) -> None:
    """Change the default (and, with ``help_text``, the help) of the option ``dest``
    already added to ``p``; a benchmark's own default of a shared option."""
    for action in p._actions:
        if action.dest == dest:
            action.default = value
            if help_text is not None:
                action.help = help_text
            return
    raise KeyError(f"no option with dest {dest!r}")


def _has_cache(opts: argparse.Namespace) -> bool:
    if getattr(opts, "no_cache", False):
        return False
    path = getattr(opts, "cache", None) or Path(opts.out) / "cache.sqlite"
    return Path(path).is_file()


def run_concurrency(opts: argparse.Namespace, backend: Any) -> int | None:
    """Conversations kept in flight: ``--concurrency`` per endpoint (× the endpoints of a
    backend serving several), or ``None`` for the backend's own default."""
    given = getattr(opts, "concurrency", None)
    if given is None:
        return None
    return int(given) * max(1, len(getattr(backend, "base_urls", None) or ()))


def failure_policy(opts: argparse.Namespace) -> str:
    """The run's model-failure policy (``--model-failures``; ``wrong`` when the command
    has no such option): :func:`~.model_failures.policy_of`."""
    return policy_of(getattr(opts, "model_failures", None) or getattr(opts, "refusals", None))


def _run_and_score(bench: Benchmark, data: LoadedData, ctx: RunContext,
                   session: RunSession, executor: Executor | None = None,
                   sink: RecordSink | None = None, acc: EnvelopeAccumulator | None = None,
                   counts: OutcomeCounts | None = None) -> list[SampleRecord] | None:
    """Send, then score: the list of records, or — with ``sink`` and ``acc`` — ``None``
    after streaming them to ``samples.jsonl`` (:func:`stream_samples`): each sample is
    planned, sent, scored and written in turn (:func:`~.runner.stream_items`), so no
    conversation, result or record outlives its window. The model-failure rule
    (:mod:`~.model_failures`) is applied here for every benchmark: responses through
    :func:`~.model_failures.apply_policy` before scoring, records flagged and counted
    into ``counts`` after."""
    folder = RunFolder(session.root)
    policy = failure_policy(ctx.opts)
    ctx.cache = cache_from_args(ctx.opts, folder)
    try:
        if sink is None or acc is None:
            items = [RunItem(id=str(s.id), conversation=conv) for s in data.samples
                     if (conv := bench.plan(s, ctx, data)) is not None]
            results = run_items(items, ctx.backend, ctx.settings, ctx.cache, ctx.concurrency,
                                desc=bench.name, executor=executor)
            del items
            records = bench.score(data, apply_policy(results, policy), ctx)
            return list(marked(records, policy, counts))
        bar = progress_bar(len(data.samples), bench.name, ctx.backend.spec)
        plan = SamplePlan(data.samples, lambda s: bench.plan(s, ctx, data),
                          on_skip=lambda: bar.update(1))
        with bar, contextlib.closing(stream_items(
                plan.items(), ctx.backend, ctx.settings, ctx.cache, ctx.concurrency,
                desc=bench.name, executor=executor, bar=bar)) as stream:
            streamed = OnePassResults(in_sample_order(plan, stream))
            scored = bench.iter_score(data, MappedResults(streamed, apply_to_one(policy)), ctx)
            stream_samples(folder.path("samples.jsonl"), marked(scored, policy, counts), acc,
                           sink)
        return None
    finally:
        if ctx.cache is not None:
            ctx.cache.close()


def cli_execute(bench: Benchmark, args: argparse.Namespace) -> int:
    """Handler of ``heritage-eval run NAME``: :func:`execute`, messages, exit status
    (0 done, 1 nothing answered, 2 usage error / folder conflict / busy)."""
    try:
        out = execute(bench, args)
    except (UsageError, RunFolderConflict, RunFolderBusy, ExecutorError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bench.print_result(out.summary)
    for line in headline_lines(out.summary):
        print(line)
    print_run_limits(out.summary)
    if out.summary.get("partial"):
        print("note: --limit run: results are PARTIAL (marked so in summary.md and "
              "summary.json)", file=sys.stderr)
    if (cached := cache_line(out.summary)) is not None:
        print(cached, file=sys.stderr)
    print(f"run folder: {out.out}", file=sys.stderr)
    if out.summary.get("run_stopped"):
        print(f"error: the run was stopped: {out.summary['run_stopped']}; the samples not "
              f"answered are errors (not cached: re-run to complete); run folder written "
              f"to {out.out}", file=sys.stderr)
        return 1
    message = bench.nothing_answered_message(out.records) if out.status == 1 else None
    if message:
        print(f"error: {message}; run folder written to {out.out}", file=sys.stderr)
    return out.status


def benchmark_command(bench: Benchmark) -> Any:
    """The generic ``run NAME`` :class:`~heritage_eval.benchmarks.registry.Command`."""
    from heritage_eval.benchmarks.registry import Command

    def add_args(p: argparse.ArgumentParser) -> None:
        bench.add_options(p)
        add_model_args(p, temperature=bench.default_temperature,
                       max_tokens=bench.default_max_tokens,
                       default_model=bench.default_model,
                       limit_help=getattr(bench, "limit_help", None)
                       or "evaluate only the first N samples of each group (a quick try; "
                          "the run is marked PARTIAL)")
        max_side = getattr(bench, "default_max_side", None)
        if max_side is not None:
            set_option_default(p, "max_side", max_side,
                               "longest image side sent to the model, pixels; the "
                               "--max-pixels budget binds first for most images "
                               f"(default: {max_side})")
        add_run_limit_args(p)
        add_run_folder_args(p)
        add_executor_args(p)
        record_defaults(p)

    return Command(name=bench.name, help=bench.help, add_args=add_args,
                   handler=lambda args: cli_execute(bench, args),
                   description=bench.description or bench.help)
