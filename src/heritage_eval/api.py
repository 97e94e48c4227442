"""The Python API: what the command line calls too, usable in a notebook.

>>> import heritage_eval as he
>>> run = he.evaluate("ancient-bench", model="rapidocr",
...                   data="data/demo/ancient_bench", out="runs/demo")      # doctest: +SKIP
>>> run.metrics().get("ned_score"), run.to_pandas().groupby("medium").ned_score.mean()

Every option of ``heritage-eval run NAME`` is a keyword argument (``max_tokens=256``,
``categories=["seals"]``; ``-`` or ``_`` both work), with the CLI's defaults and checks.
Runs work inside a running event loop (Jupyter): the requests then run on a loop of their
own in a worker thread.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.benchmarks.command_options import command_parser, namespace_from
from heritage_eval.core.config import OptionsError, RunConfig
from heritage_eval.core.record import SampleRecord

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OptionsError", "Run", "RunConfig", "compare", "evaluate", "load_run", "run_config",
           "score"]


class Run:
    """A run folder: its ``summary`` (``summary.json`` as a dict), its ``records`` (one
    :class:`~heritage_eval.core.record.SampleRecord` per scored unit) and ``status``
    (the exit status the command line would give: 0 done, 1 nothing answered or the run
    stopped; ``None`` for a loaded run). :attr:`partial` tells a ``limit`` run,
    :attr:`folder_status` the run folder's own state (``complete``, ``partial``,
    ``running`` for a run that was killed).

    ``records`` are read from ``samples.jsonl`` on first use when not given (a streamed
    run keeps none in memory, so :func:`evaluate` of a large run returns at once and
    ``len(run)`` / ``repr(run)`` read the count from the summary).

    In a notebook a run shows its headline table and first samples (``_repr_html_``,
    bounded in size); ``repr(run)`` is one line of at most 200 characters."""

    def __init__(self, path: Path, summary: dict[str, Any],
                 records: list[SampleRecord] | None = None, status: int | None = None
                 ) -> None:
        self.path = Path(path)
        self.summary = summary
        self._records = records
        self.status = status

    @property
    def records(self) -> list[SampleRecord]:
        """Every record, in ``samples.jsonl`` order (read from the folder on first use
        when the run was made without keeping them)."""
        if self._records is None:
            from heritage_eval.core.records_io import read_records

            self._records = read_records(self.path / "samples.jsonl")
        return self._records

    @records.setter
    def records(self, value: list[SampleRecord]) -> None:
        self._records = value

    def _count(self) -> int:
        """Number of records, from the summary's per-model counts when the records are
        not loaded (and the summary has them), else ``len(records)``."""
        models = self.summary.get("models") or {}
        if self._records is None and models and all(
                isinstance(b, dict) and isinstance(b.get("n_records"), int)
                for b in models.values()):
            return sum(int(b["n_records"]) for b in models.values())
        return len(self.records)

    @property
    def benchmark(self) -> str:
        return str(self.summary.get("benchmark", ""))

    @property
    def models(self) -> list[str]:
        """Model specs in the run (``score`` runs may hold several)."""
        return list(self.summary.get("models", {}))

    @property
    def partial(self) -> bool:
        return bool(self.summary.get("partial"))

    @property
    def folder_status(self) -> str | None:
        """``run.json``'s status (``complete`` / ``partial``; ``running`` while a run is
        open or after it was killed outright; ``stopped`` / ``failed`` after it ended
        early), or ``None`` for a folder without one (e.g. written by another tool)."""
        from heritage_eval.core.rundir import read_run_file

        state = read_run_file(self.path)
        return str(state["status"]) if state and "status" in state else None

    def metrics(self, model: str | None = None) -> dict[str, dict[str, Any]]:
        """Headline metrics of ``model`` (default: the only / first model): metric name ->
        ``{label, value, n, stderr, ci_low, ci_high, …}``; values are fractions."""
        models = self.summary.get("models", {})
        if not models:
            return {}
        key = model if model is not None else next(iter(models))
        if key not in models:
            raise KeyError(f"model {key!r} not in this run (models: {', '.join(models)})")
        return dict(models[key]["metrics"])

    def __iter__(self) -> Iterator[SampleRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return self._count()

    def __repr__(self) -> str:
        """``<Run ancient-bench: rapidocr, 27 records, NED 69.50 [53.49, 85.51], PATH>``
        (:func:`heritage_eval.report.notebook_repr.run_repr`; reads no record)."""
        from heritage_eval.report.notebook_repr import run_repr

        return run_repr(self.summary, self._count(), self.path)

    def _repr_html_(self) -> str:
        """Headline table and first samples, HTML-escaped and bounded in size
        (:func:`heritage_eval.report.notebook_html.run_html`)."""
        from heritage_eval.report.notebook_html import run_html

        return run_html(self.summary, self.records, self.path)

    def to_pandas(self, what: str = "records") -> pd.DataFrame:
        """``what="records"``: one row per record: ``id``, ``model``, ``state``, each
        group key, each score, ``answer``, ``reference``, ``error``, ``response`` (text
        of the scored turn). ``what="metrics"``: one row per (model, headline metric):
        ``model``, ``metric``, ``label``, ``value``, ``ci_low``, ``ci_high``, ``n``,
        ``stderr``, ``method``, ``flags`` (fractions, as in ``summary.json``). Raises
        ``ValueError`` for another ``what``."""
        from heritage_eval.report.notebook_frames import metrics_to_pandas, records_to_pandas

        if what == "records":
            return records_to_pandas(self.records)
        if what == "metrics":
            return metrics_to_pandas(self.summary)
        raise ValueError(f"what must be 'records' or 'metrics', not {what!r}")


def run_config(benchmark: str, **options: Any) -> RunConfig:
    """The typed :class:`~heritage_eval.core.config.RunConfig` of ``heritage-eval run
    BENCHMARK`` with ``options`` (keywords as in :func:`evaluate`), checked as the command
    line checks it. Raises :class:`OptionsError` for an unknown benchmark or option, a
    missing required option or a refused value."""
    from heritage_eval.core import plugins
    from heritage_eval.core.config import build_run_config

    try:
        bench = plugins.benchmark(benchmark)
    except KeyError as exc:
        raise OptionsError(str(exc.args[0])) from None
    return build_run_config(bench.name, bench.Options, options,
                            defaults=bench.platform_defaults(),
                            required=bench.required_options())


def evaluate(benchmark: str | RunConfig, **options: Any) -> Run:
    """Run a model on ``benchmark`` and score it, exactly as ``heritage-eval run
    BENCHMARK`` does; returns the finished :class:`Run`.

    ``benchmark`` is a registered name with the run's options as keywords (``out``;
    ``data`` / ``questions``; ``model`` where the benchmark has no default), or a
    :class:`~heritage_eval.core.config.RunConfig` (:func:`run_config`). Raises
    :class:`OptionsError` for unknown or bad options,
    :class:`~heritage_eval.core.benchmark.UsageError` for unusable input,
    :class:`~heritage_eval.core.rundir.RunFolderConflict` when ``out`` holds another run
    (pass ``resume=True`` or ``overwrite=True``) and ``RunFolderBusy`` when another
    process writes to it. Nothing is written in those cases.
    """
    from heritage_eval.core import plugins
    from heritage_eval.core.engine import execute

    if isinstance(benchmark, str):
        config = run_config(benchmark, **options)
    elif options:
        raise OptionsError("pass either a RunConfig or a benchmark name with options")
    else:
        config = benchmark
    out = execute(plugins.benchmark(config.benchmark), config)
    return Run(path=out.out, summary=out.summary, records=out.kept_records, status=out.status)


def score(benchmark: str, **options: Any) -> Run:
    """Score predictions made elsewhere, as ``heritage-eval score BENCHMARK`` does (for
    Ancient-Bench: ``data=`` ground truth, ``predictions=`` the official layout,
    ``out=``). Raises as :func:`evaluate`; :class:`OptionsError` for a benchmark without
    a scorer of predictions."""
    from heritage_eval.core import plugins

    target = plugins.scorer(benchmark)
    if target is None:
        raise OptionsError(f"benchmark {benchmark!r} has no scorer for predictions made "
                           "elsewhere")
    if benchmark in plugins.typed_scorers():  # a plug-in's typed score options
        from heritage_eval.core.score_config import score_config

        out = target(score_config(benchmark, options))
    else:
        parser, _ = command_parser("score", benchmark)
        out = target(namespace_from(parser, options))
    return Run(path=out.out, summary=out.summary, records=out.kept_records, status=out.status)


def load_run(path: str | Path) -> Run:
    """Read a run folder (``summary.json`` + ``samples.jsonl``). A malformed line of
    ``samples.jsonl`` is skipped with a warning naming ``file:line``. Raises
    :class:`~heritage_eval.core.records_io.RunReadError` when the folder holds no
    readable ``summary.json``."""
    from heritage_eval.core.records_io import read_records, read_summary

    root = Path(path)
    summary = read_summary(root)
    records = read_records(root / "samples.jsonl")
    return Run(path=root, summary=summary, records=records)


def compare(runs: Sequence[str | Path | Run], out: str | Path | None = None,
            overwrite: bool = False, **options: Any) -> Any:
    """Compare run folders of one benchmark: models table with intervals, paired
    differences against the first model, samples where models disagree
    (:func:`heritage_eval.report.compare.compare_runs`); with ``out``, also write the
    tables (Markdown, CSV, LaTeX) there, under the command line's rule for the folder
    (:func:`heritage_eval.report.compare_out.check_out`: new, empty or an unchanged
    earlier comparison, unless ``overwrite``). Returns the comparison object.

    Raises :class:`OptionsError` for one run or an ``out`` that may not be written
    (before anything is read or written), and what ``compare_runs`` raises."""
    from heritage_eval.report.compare import compare_runs, write_comparison
    from heritage_eval.report.compare_out import OutFolderError, check_out

    if isinstance(runs, str | Path | Run):  # one run is not a comparison
        raise OptionsError("compare needs a list of two or more run folders, got one: "
                           f"{runs.path if isinstance(runs, Run) else runs}")
    paths = [r.path if isinstance(r, Run) else Path(r) for r in runs]
    if out is not None:
        try:
            check_out(Path(out), overwrite)
        except OutFolderError as exc:
            raise OptionsError(str(exc)) from None
    comp = compare_runs(paths, **options)
    if out is not None:
        write_comparison(comp, Path(out))
    return comp
