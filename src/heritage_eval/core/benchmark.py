"""The benchmark interface: what every benchmark plugs into (docs/design.md).

In the spirit of Inspect AI's ``Task(dataset, solver, scorer)``, a benchmark is a small
object with five jobs::

    Options                              its own options: a typed model (class attribute)
    load(config)       -> LoadedData     samples from the release layout / question file
    plan(sample, ctx)  -> Conversation   what is sent for one sample (one or more turns)
    score(data, results, ctx) -> [SampleRecord]   the one sample record per scored unit
    aggregate(records, data, ctx) -> dict        the benchmark's summary body (its tables)
    render_markdown(summary) -> str              ``summary.md``

Optionally, a benchmark streams (memory flat in dataset size): :meth:`Benchmark.record_sink`
returns a :class:`RecordSink` that folds each record into the summary body, and
:meth:`Benchmark.iter_score` yields the records one at a time; the engine then plans,
sends and scores the samples one window at a time, writes each record's
``samples.jsonl`` line as it comes and keeps no conversation, result or record.

plus :attr:`Benchmark.metrics`, the named metrics whose value, standard error and 95 %
interval the platform computes from the records (overall and per group). The runner,
cache, run folder, statistics, comparison, Python API and CLI use only this interface
(:mod:`heritage_eval.core.engine`). The engine, not the benchmark, applies the platform's
rules: model failures and denominators, truncation, ``--limit`` and PARTIAL, intervals,
redaction (docs/design.md).
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from heritage_eval.core.config import BenchmarkOptions, RunConfig

if TYPE_CHECKING:  # annotations only: a command's --help needs none of these modules
    from heritage_eval.core.backends import ModelBackend
    from heritage_eval.core.cache import ResponseCache
    from heritage_eval.core.record import SampleRecord
    from heritage_eval.core.runner import ItemResult
    from heritage_eval.core.types import Conversation, GenerationSettings


class UsageError(Exception):
    """Unusable input or options, found before anything is written (exit status 2)."""


class ModelRefused(UsageError):
    """The benchmark refuses this model by design (``Benchmark.refuse_model``: e.g. an OCR
    engine on a multiple-choice benchmark); a suite reports the pair as ``skipped``."""


@dataclass(frozen=True)
class MetricSpec:
    """A named metric the platform aggregates from ``SampleRecord.scores``.

    ``name``: key in ``scores``. ``label``: column header (``"NED"``, ``"Acc"``); it may
    name the run's options in braces (``"Acc@{k}"``), filled in by the engine.
    ``states``: record states counted (default: answered = scored + unparsed; an
    unparsed record must carry a score, usually 0). ``macro_over``: group key whose
    groups are averaged without weights for the headline (Ancient-Bench Overall = mean of
    media; HCSU Avg. Acc = mean of Bei and Tie); ``None``: pooled mean over records.
    ``cluster``: group or ``details`` key identifying samples that share a source (MUSE:
    the artwork), one cluster for the cluster-robust intervals. ``by``: group keys reported
    separately. ``scale`` / ``decimals``: display (100 / 2 = percent with two decimals).
    ``higher_is_better``: for ranking in tables. ``bounds``: the range every stored value
    lies in (``(0, 1)`` for fractions; ``None`` when there is no fixed range); intervals
    are clipped to it, values at its two ends only are read as a proportion (Wilson),
    and constant data get a bound from it (docs/intervals.md). A value outside it makes
    the summary fail with a message naming the metric's value.
    """

    name: str
    label: str
    states: tuple[str, ...] = ("scored", "unparsed")
    macro_over: str | None = None
    cluster: str | None = None
    by: tuple[str, ...] = ()
    scale: float = 100.0
    decimals: int = 2
    higher_is_better: bool = True
    bounds: tuple[float, float] | None = (0.0, 1.0)


@dataclass
class LoadedData:
    """What :meth:`Benchmark.load` returns.

    ``samples``: benchmark-specific sample objects, each with a unique string ``id``
    attribute, in the order they are reported. ``image_root``: folder image paths in
    records are relative to. ``warnings``: loader notes shown to the user and written to
    the summary. ``info``: provenance fields about the data (path, counts, hashes).
    ``extra``: anything the benchmark keeps for scoring (e.g. the whole question file).
    """

    samples: Sequence[Any]
    image_root: str | None = None
    warnings: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunContext:
    """The model side of a run, handed to :meth:`Benchmark.plan` / :meth:`~.score`.

    ``config``: the run's typed configuration (the same object for CLI, API and suite
    files); the benchmark's own options are ``config.options``. ``resources``:
    benchmark-made helpers (embedder, judge, BERTScore model) created in
    :meth:`Benchmark.prepare`.
    """

    config: RunConfig
    backend: ModelBackend
    settings: GenerationSettings
    cache: ResponseCache | None = None
    concurrency: int | None = None
    resources: dict[str, Any] = field(default_factory=dict)


class RecordSink(abc.ABC):
    """Folds a benchmark's records, one at a time, into its summary body (the streamed
    form of :meth:`Benchmark.aggregate`): :meth:`add` each record as it is written, then
    :meth:`body`. Keeps only what the body needs (group keys, scores, counts)."""

    @abc.abstractmethod
    def add(self, record: SampleRecord) -> None:
        """Fold ``record`` in; the caller may drop it afterwards."""

    @abc.abstractmethod
    def body(self) -> dict[str, Any]:
        """The summary body, equal to :meth:`Benchmark.aggregate` of the records added
        (in the order added)."""


class Benchmark(abc.ABC):
    """A benchmark protocol on the shared platform; see the module docstring.

    Subclasses set :attr:`name` (registry name, also ``SampleRecord.benchmark``),
    :attr:`help`, :attr:`description`, :attr:`group_keys` (keys of
    ``SampleRecord.groups`` in report order), :attr:`metrics` and :attr:`Options` (a
    :class:`~heritage_eval.core.config.BenchmarkOptions` subclass: the benchmark's own
    options, from which ``run NAME``'s command-line options are generated).

    ``--limit N``: unless :attr:`applies_limit` is true, the engine keeps the first N
    samples of each :meth:`limit_key` group (default: the first N samples) and marks the
    run PARTIAL when that left samples out; a benchmark that limits while loading (to
    read less) sets :attr:`applies_limit` and reads ``config.output.limit`` itself.
    """

    name: ClassVar[str]
    help: ClassVar[str] = ""
    description: ClassVar[str] = ""
    group_keys: ClassVar[tuple[str, ...]] = ()
    metrics: ClassVar[tuple[MetricSpec, ...]] = ()
    #: temperature and max new tokens defaults of the paper's protocol
    default_temperature: ClassVar[float] = 0.0
    default_max_tokens: ClassVar[int] = 1024
    default_model: ClassVar[str | None] = None
    #: longest image side sent by default (``None``: the platform's 2048)
    default_max_side: ClassVar[int | None] = None
    #: the benchmark's own options (``config.options``)
    Options: ClassVar[type[BenchmarkOptions]] = BenchmarkOptions
    #: ``--limit``'s help, worded for the benchmark's unit (``None``: the platform's)
    limit_help: ClassVar[str | None] = None
    #: True when :meth:`load` applies ``--limit`` itself (see the class docstring)
    applies_limit: ClassVar[bool] = False
    #: the records add ``#<part>`` to their sample's id (a MUSE turn ``<question>#<turn>``):
    #: a row ``<id>#…`` of a run folder belongs to sample ``<id>`` (the rule that a
    #: folder never shrinks, :func:`heritage_eval.core.row_loss.rows_lost`)
    record_id_parts: ClassVar[bool] = False

    def platform_defaults(self) -> dict[str, Any]:
        """The benchmark's defaults of platform options (its protocol's temperature and
        max new tokens, its default model and image side)."""
        out: dict[str, Any] = {"temperature": self.default_temperature,
                               "max_tokens": self.default_max_tokens}
        if self.default_model is not None:
            out["model"] = self.default_model
        if self.default_max_side is not None:
            out["max_side"] = self.default_max_side
        return out

    def required_options(self) -> tuple[str, ...]:
        """Platform options a run needs: ``out``, and ``model`` without a default."""
        return ("out",) if self.default_model is not None else ("out", "model")

    def limit_key(self, sample: Any) -> str:
        """The group within which ``--limit`` keeps the first N samples (default: one
        group, so the first N samples)."""
        return ""

    @abc.abstractmethod
    def load(self, config: RunConfig) -> LoadedData:
        """Load the samples named by ``config.options``. Raises :class:`UsageError` when
        nothing can be run (missing folder, bad header): nothing is written then."""

    def refuse_model(self, backend: ModelBackend, data: LoadedData,
                     config: RunConfig) -> str | None:
        """Why ``backend`` cannot run this benchmark (exit 2, nothing written), or
        ``None``."""
        return None

    def prepare(self, ctx: RunContext, data: LoadedData) -> None:
        """Create scoring resources (embedder, judge, BERTScore) in ``ctx.resources``.
        Raises :class:`UsageError` when one cannot be made."""
        return None

    @abc.abstractmethod
    def plan(self, sample: Any, ctx: RunContext, data: LoadedData) -> Conversation | None:
        """The conversation sent for ``sample``; ``None``: nothing is sent (a sample
        that failed to load; :meth:`score` makes its error record)."""

    @abc.abstractmethod
    def score(self, data: LoadedData, results: Mapping[str, ItemResult],
              ctx: RunContext) -> list[SampleRecord]:
        """One record per scored unit (a sample, or a MUSE turn), in report order.

        ``results`` maps sample id -> the responses received (absent: not sent)."""

    def iter_score(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> Iterator[SampleRecord]:
        """:meth:`score`'s records one at a time, in the same order (default: from
        :meth:`score`'s list; a streaming benchmark builds each on demand).

        With a :meth:`record_sink` the engine streams, and ``results`` is then a one-pass
        mapping (:class:`~heritage_eval.core.streamed_results.OnePassResults`) filled
        while the records are asked for: look each sample's result up once, in sample
        order (``results.get(id)`` consumes it); iterating it reads every result first."""
        yield from self.score(data, results, ctx)

    def record_sink(self, data: LoadedData, ctx: RunContext) -> RecordSink | None:
        """A :class:`RecordSink` giving :meth:`aggregate`'s body from streamed records, or
        ``None`` (default): the engine keeps the list of records and calls
        :meth:`aggregate`. A streamed run's exit status follows the default rule of
        :meth:`exit_status` (0 when anything was answered)."""
        return None

    @abc.abstractmethod
    def aggregate(self, records: Sequence[SampleRecord], data: LoadedData,
                  ctx: RunContext) -> dict[str, Any]:
        """The benchmark's summary body: its result entries and tables (the keys that
        scripts read, e.g. ``results[0].per_category``). The platform adds the
        ``metrics`` envelope with intervals, ``provenance`` and ``partial``."""

    @abc.abstractmethod
    def render_markdown(self, summary: Mapping[str, Any]) -> str:
        """``summary.md`` from the whole summary (body + envelope)."""

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        """Benchmark-specific provenance fields (prompt hashes, protocol, seeds)."""
        return {}

    def fingerprint(self, config: RunConfig) -> dict[str, Any]:
        """What identifies a run configuration (data, model, settings, protocol); a run
        folder holding another configuration is refused. Default: every option except
        those that only change how the run proceeds
        (:data:`~heritage_eval.core.fingerprint.NON_CONFIG_OPTIONS`)."""
        from heritage_eval.core.fingerprint import config_of

        return config_of(config.flat())

    def print_result(self, summary: Mapping[str, Any]) -> None:
        """Print the headline table to stdout after a run (default: nothing)."""
        return None

    def print_diagnostics(self, summary: Mapping[str, Any],
                          records: Sequence[SampleRecord] | None) -> None:
        """Print the benchmark's own end-of-run notes to stderr after the tables (error
        digests, unreachable judges …); ``records`` is ``None`` for a streamed run.
        Default: nothing."""
        return None

    def nothing_answered_message(self, records: Sequence[SampleRecord]) -> str | None:
        """The error line printed when :meth:`exit_status` is 1 (``None``: the benchmark's
        :meth:`print_result` already says it)."""
        return (f"nothing was answered: every one of the {len(records)} record(s) ended as "
                "error or unscored (reasons in summary.md)")

    def exit_status(self, records: Sequence[SampleRecord]) -> int:
        """0 when anything was answered; 1 when every record is ``error``/``unscored``
        (or there is none). An all-``unparsed`` run is a valid (bad) result: 0."""
        answered = sum(1 for r in records if r.state in ("scored", "unparsed"))
        return 0 if answered else 1
