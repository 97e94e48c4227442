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

import concurrent.futures
import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from heritage_eval.core import paths, redact
from heritage_eval.core.benchmark import (
    Benchmark,
    LoadedData,
    MetricSpec,
    ModelRefused,
    RecordSink,
    RunContext,
    UsageError,
)
from heritage_eval.core.config import RunConfig
from heritage_eval.core.executors import Executor
from heritage_eval.core.failure_counts import OutcomeCounts
from heritage_eval.core.fingerprint import NON_CONFIG_OPTIONS, config_of  # noqa: F401
from heritage_eval.core.lazy_samples import release_ids, sample_ids
from heritage_eval.core.model_failures import apply_policy, apply_to_one, marked, policy_of
from heritage_eval.core.option_spec import selection_reader
from heritage_eval.core.provenance import git_commit, provenance
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.record_checks import check_distinct_ids, checked
from heritage_eval.core.run_limits import print_run_limits
from heritage_eval.core.run_output import (  # re-exported: the run's files
    EvalOutput,
    cache_line,
    merge_summary,
    partial_banner,
    stream_samples,
    write_run,
    write_summary,
)
from heritage_eval.core.run_parts import (
    backend_from_config,
    cache_from_config,
    executor_from_config,
    has_cache,
    model_provenance,
)
from heritage_eval.core.run_tables import write_run_tables
from heritage_eval.core.rundir import RunSession, limit_truncates, open_run
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

__all__ = ["EvalOutput", "cache_line", "config_of", "default_fingerprint", "execute",
           "finish_summary", "headline_lines", "intervals_markdown", "partial_banner",
           "print_run_limits", "stream_samples", "write_run", "write_summary"]


def headline_lines(summary: dict[str, Any]) -> list[str]:
    """What the console shows after a run's own table: per model, each metric with its
    95 % interval per group of the first group key and overall (the table of
    ``summary.md``'s interval section, its footnotes naming only the marks it shows), or
    :func:`~heritage_eval.core.run_tables.nothing_scored` for a model with no estimate."""
    from heritage_eval.core.run_tables import has_values, model_table, nothing_scored
    from heritage_eval.core.tables import to_markdown

    keys: list[str | None] = [*summary.get("group_keys", [])][:1] or [None]
    lines = []
    for model in summary.get("models", {}):
        table = _with_overall_note(summary, model, model_table(summary, model, keys[0]))
        lines += ["", f"{model} — value [95 % interval]:", to_markdown(
            replace(table, title="")).rstrip() if has_values(table)
                  else nothing_scored(summary)]
    return lines


def _with_overall_note(summary: dict[str, Any], model: str, table: Any) -> Any:
    """``table`` with the footnote saying what each Overall column is (macro or pooled:
    :func:`~heritage_eval.core.run_tables.overall_note`) after its marks' notes."""
    from heritage_eval.core.run_tables import overall_note

    note = overall_note(summary, model)
    return replace(table, footnotes=[*table.footnotes, note]) if note else table


def intervals_markdown(summary: dict[str, Any]) -> str:
    """The ``summary.md`` section with every metric's 95 % interval, per group: a preface
    naming the interval methods, then per model its table
    (:func:`~heritage_eval.core.run_tables.model_table`), or one line
    (:func:`~heritage_eval.core.run_tables.nothing_scored`) for a model with no estimate.

    The preface carries no legend of the marks: each table's footnotes name exactly the
    marks its rows show ("—", "†"; :func:`~heritage_eval.core.run_tables.mark_notes`), in
    one wording, so the section never explains a mark it does not show."""
    from heritage_eval.core.run_tables import has_values, model_table, nothing_scored
    from heritage_eval.core.tables import to_markdown

    keys: list[str | None] = [*summary.get("group_keys", [])][:1] or [None]
    parts = ["\n## 95 % confidence intervals\n",
             "Value [95 % interval]: Wilson for 0/1 values, adjusted Student t for "
             "bounded scores, cluster-robust (Korn-Graubard / CR2) for clustered metrics; "
             "an Overall that is a macro mean (the unweighted mean of the groups) combines "
             "the groups' standard errors (Welch-Satterthwaite), a pooled Overall is over "
             "the records; each table's footnotes say which each Overall column is and "
             "name the marks it shows (summary.json flags; docs/intervals.md). All groups "
             "and formats: `tables/`.\n"]
    for model in summary.get("models", {}):
        for key in keys:
            table = _with_overall_note(summary, model, model_table(summary, model, key))
            parts.append(to_markdown(table) if has_values(table)
                         else f"**{model}**: {nothing_scored(summary)}\n")
    return "\n".join(parts) + "\n"


def finish_summary(bench: Benchmark, records: list[SampleRecord], body: dict[str, Any],
                   prov: dict[str, Any], partial: bool,
                   warn_downscale: float = DEFAULT_WARN_DOWNSCALE,
                   config: RunConfig | None = None) -> dict[str, Any]:
    """The benchmark's summary body with the platform envelope merged in (envelope keys
    first; the body keeps its own keys such as ``results`` and ``per_category``);
    ``warn_downscale``: the factor of the envelope's ``run_limits`` block."""
    metrics = bench.metrics if config is None else labelled_metrics(bench, config)
    env = envelope(bench.name, records, metrics, bench.group_keys, partial=partial,
                   warn_downscale=warn_downscale)
    return merge_summary(env, body, prov)


def execute(bench: Benchmark, config: RunConfig) -> EvalOutput:
    """Run ``bench`` with ``config`` end to end (see the module docstring).

    Raises :class:`~heritage_eval.core.benchmark.UsageError`,
    :class:`~heritage_eval.core.rundir.RunFolderConflict`,
    :class:`~heritage_eval.core.rundir.RunFolderBusy`, ``ExecutorError`` or
    ``ModelSpecError`` before anything is written; ``OSError`` for an unwritable
    ``out``. Per-sample failures never raise: they become ``error`` records.
    """
    start = time.perf_counter()
    commit = _in_background(git_commit)  # two git processes, while the data loads
    with _collector_frozen_after() as freeze:
        return _execute(bench, config, start, commit, freeze)


@contextlib.contextmanager
def _collector_frozen_after() -> Iterator[Callable[[], None]]:
    """Gives ``freeze()``: moves every object alive at that moment (the loaded data,
    the modules, the configuration) out of the cyclic garbage collector's reach until
    the block ends (``gc.freeze`` / ``gc.unfreeze``), so that the collections the
    per-sample loop triggers do not scan them again and again (issue 23: ~5 % of a
    cached 10,000-sample re-run). Nothing is frozen when something else froze objects
    already (a host that freezes before forking keeps its own state) or the collector
    is off; the outputs do not depend on it."""
    frozen = False

    def freeze() -> None:
        nonlocal frozen
        if not frozen and gc.isenabled() and gc.get_freeze_count() == 0:
            gc.freeze()
            frozen = True

    try:
        yield freeze
    finally:
        if frozen:
            gc.unfreeze()


def _execute(bench: Benchmark, config: RunConfig, start: float,
             commit: concurrent.futures.Future[str | None],
             freeze: Callable[[], None]) -> EvalOutput:
    """:func:`execute` after its start (``start``: its ``perf_counter``; ``commit``: the
    git commit being read); ``freeze`` is called once the data is loaded."""
    redact.register_options(config.flat())  # every secret the options name is masked
    if config.output.allow_outside_paths is not None:
        paths.set_outside_allowed(bool(config.output.allow_outside_paths))
    out_dir = config.out_dir()
    data = bench.load(config)
    ids = sample_ids(data.samples)  # no pass over the data when the benchmark kept them
    check_distinct_ids(bench.name, ids)
    loaded = data.samples
    data, partial = _limited(bench, config, data)
    if data.samples is not loaded:
        ids = sample_ids(data.samples)
    backend = backend_from_config(config.model)
    refusal = bench.refuse_model(backend, data, config)
    if refusal:
        raise ModelRefused(refusal)
    settings = config.generation.settings()
    ctx = RunContext(config=config, backend=backend, settings=settings,
                     concurrency=run_concurrency(config, backend))
    bench.prepare(ctx, data)
    freeze()  # what is loaded now lives as long as the run
    executor = executor_from_config(config.executor, config.model)  # before writing
    preflight = getattr(backend, "preflight", None)
    if callable(preflight) and not has_cache(config.output):
        # a fresh run with a bad endpoint setup stops here, in seconds, writing nothing;
        # a resumed run checks lazily, at its first uncached request (a finished run
        # re-scores from its cache even when the server is gone)
        run_sync(preflight())
    fingerprint = bench.fingerprint(config)
    with open_run(out_dir, bench.name, fingerprint, partial=partial,
                  mode=config.output.mode, defaults=default_fingerprint(bench),
                  sample_ids=ids, id_parts=bench.record_id_parts,
                  canonical=selection_reader(bench.Options)) as session:
        ids = ()  # checked against the folder: not needed again in this run
        release_ids(data.samples)
        release_ids(loaded)
        sink = bench.record_sink(data, ctx)
        warn = config.output.warn_downscale
        acc = EnvelopeAccumulator(labelled_metrics(bench, config), bench.group_keys, warn)
        counts = OutcomeCounts((bench.group_keys or ("",))[0], failure_policy(config))
        records = _run_and_score(bench, data, ctx, session, executor, sink, acc, counts)
        body = bench.aggregate(records, data, ctx) if records is not None else \
            sink.body() if sink is not None else {}
        if "model_failures" not in body:  # a benchmark that does not count them itself
            body = {**body, **counts.body()}
        prov = provenance(benchmark=bench.name, git_commit=commit.result(),
                          **model_provenance(config.model, backend, settings),
                          **bench.provenance(data, ctx), data_info=data.info,
                          config_hash=stable_hash(fingerprint), limit=config.output.limit,
                          partial=partial, resumed=session.resumed,
                          executor=config.executor.executor,
                          run_seconds=round(time.perf_counter() - start, 2))
        if records is not None:
            summary = finish_summary(bench, records, body, prov, partial, warn, config)
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
    return EvalOutput(records, summary, out_dir, status)


def labelled_metrics(bench: Benchmark, config: RunConfig) -> tuple[MetricSpec, ...]:
    """``bench.metrics`` with each label's ``{option}`` fields filled from the run's
    options (``"Acc@{k}"`` -> ``"Acc@5"``). A label naming no option is kept as is.
    Raises :class:`~heritage_eval.core.benchmark.UsageError` for a label naming an
    option the benchmark does not have."""
    values = dict(config.options)
    out = []
    for metric in bench.metrics:
        if "{" not in metric.label:
            out.append(metric)
            continue
        try:
            out.append(replace(metric, label=metric.label.format(**values)))
        except (KeyError, IndexError, ValueError) as exc:
            raise UsageError(f"metric {metric.name!r}: label {metric.label!r} names no "
                             f"option of {bench.name} ({exc})") from None
    return tuple(out)


def _limited(bench: Benchmark, config: RunConfig, data: LoadedData
             ) -> tuple[LoadedData, bool]:
    """``data`` under ``--limit`` and whether the run is PARTIAL (the limit left samples
    out). A benchmark that limits while loading (``applies_limit``) is probed by loading
    with a limit one higher (:func:`~.rundir.limit_truncates`); otherwise the engine keeps
    the first N samples of each :meth:`~.Benchmark.limit_key` group itself."""
    limit = config.output.limit
    if limit is None:
        return data, False
    if bench.applies_limit:
        def count(n: int) -> int:
            output = config.output.model_copy(update={"limit": n})
            return len(bench.load(config.model_copy(update={"output": output})).samples)
        return data, limit_truncates(limit, len(data.samples), count)
    seen: dict[str, int] = {}
    kept = []
    for sample in data.samples:
        key = bench.limit_key(sample)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= limit:
            kept.append(sample)
    return replace(data, samples=kept), len(kept) < len(data.samples)


def default_fingerprint(bench: Benchmark) -> dict[str, Any]:
    """The fingerprint of every option at its default (the benchmark's options without a
    default left out), so that a run folder made before an option existed still matches
    when the option is at its default."""
    from heritage_eval.core.config import SECTIONS

    values: dict[str, Any] = {}
    for model in (bench.Options, *SECTIONS.values()):
        for name, field in model.model_fields.items():
            if not field.is_required():
                values[name] = field.get_default(call_default_factory=True)
    return config_of({**values, **bench.platform_defaults()})


def _in_background(fn: Callable[[], str | None]) -> concurrent.futures.Future[str | None]:
    """``fn()`` started in a worker thread; ``.result()`` waits for it."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(fn)
    pool.shutdown(wait=False)
    return future


def run_concurrency(config: RunConfig, backend: Any) -> int | None:
    """Conversations kept in flight: ``concurrency`` per endpoint (× the endpoints of a
    backend serving several), or ``None`` for the backend's own default."""
    given = config.model.concurrency
    if given is None:
        return None
    return int(given) * max(1, len(getattr(backend, "base_urls", None) or ()))


def failure_policy(config: RunConfig) -> str:
    """The run's model-failure policy (``model_failures``; ``wrong`` by default):
    :func:`~.model_failures.policy_of`."""
    return policy_of(config.output.model_failures)


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
    policy = failure_policy(ctx.config)
    ctx.cache = cache_from_config(ctx.config.output, folder)
    try:
        if sink is None or acc is None:
            items = [RunItem(id=str(s.id), conversation=conv) for s in data.samples
                     if (conv := bench.plan(s, ctx, data)) is not None]
            results = run_items(items, ctx.backend, ctx.settings, ctx.cache, ctx.concurrency,
                                desc=bench.name, executor=executor)
            del items
            records = bench.score(data, apply_policy(results, policy), ctx)
            return list(marked(checked(bench.name, records, bench.metrics), policy, counts))
        bar = progress_bar(len(data.samples), bench.name, ctx.backend.spec)
        plan = SamplePlan(data.samples, lambda s: bench.plan(s, ctx, data),
                          on_skip=lambda: bar.update(1))
        with bar, contextlib.closing(stream_items(
                plan.items(), ctx.backend, ctx.settings, ctx.cache, ctx.concurrency,
                desc=bench.name, executor=executor, bar=bar)) as stream:
            streamed = OnePassResults(in_sample_order(plan, stream))
            scored = bench.iter_score(data, MappedResults(streamed, apply_to_one(policy)), ctx)
            stream_samples(folder.path("samples.jsonl"),
                           marked(checked(bench.name, scored, bench.metrics), policy, counts),
                           acc, sink)
        return None
    finally:
        if ctx.cache is not None:
            ctx.cache.close()
