"""The ``summary.json`` envelope: per model, every metric with value, n, standard error
and a 95 % interval, overall and per group (schema ``heritage-eval/summary/1``).

Computed from the sample records alone (:class:`~heritage_eval.core.record.SampleRecord`)
and the benchmark's :class:`~heritage_eval.core.benchmark.MetricSpec` list, so that every
benchmark gets the same statistics (:mod:`heritage_eval.stats`). Bootstrap intervals are
seeded (:data:`BOOTSTRAP_SEED`, :data:`N_RESAMPLES`): the same records give the same
summary byte for byte.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.codes import ValueCodes
from heritage_eval.core.record import SampleRecord
from heritage_eval.stats import macro_mean_estimate, mean_estimate

SUMMARY_SCHEMA = "heritage-eval/summary/1"
BOOTSTRAP_SEED = 0
N_RESAMPLES = 2000
STATES = ("scored", "unparsed", "error", "unscored")


def cluster_of(record: SampleRecord, key: str | None) -> Hashable:
    """The cluster a record belongs to under ``key`` (a group or ``details`` key); each
    record is its own cluster when the key is absent."""
    if key is None:
        return record.id
    value = record.groups.get(key, record.details.get(key))
    return record.id if value is None else str(value)


def metric_values(records: Sequence[SampleRecord], spec: MetricSpec
                  ) -> list[tuple[SampleRecord, float]]:
    """``(record, value)`` of the records that count for ``spec`` (state in
    ``spec.states`` and a numeric score)."""
    out = []
    for r in records:
        value = r.scores.get(spec.name)
        if r.state.value in spec.states and value is not None:
            out.append((r, float(value)))
    return out


def _estimate(spec: MetricSpec, values: list[float], groups: list[str],
              clusters: list[Hashable] | None, macro: bool, seed: int,
              n_resamples: int) -> dict[str, Any]:
    if macro and spec.macro_over:
        est = macro_mean_estimate(values, groups, clusters, seed=seed,
                                  n_resamples=n_resamples)
    else:
        est = mean_estimate(values, clusters, seed=seed, n_resamples=n_resamples)
    return {"label": spec.label, **est.to_dict()}


def estimate(records: Sequence[SampleRecord], spec: MetricSpec, *, macro: bool = True,
             seed: int = BOOTSTRAP_SEED, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """Value, n, stderr and interval of ``spec`` over ``records`` (JSON-ready dict).

    With ``macro`` and ``spec.macro_over`` set, the value is the unweighted mean of the
    group means, resampled within each group; otherwise the pooled mean. Samples that
    share ``spec.cluster`` are resampled together."""
    pairs = metric_values(records, spec)
    clusters = [cluster_of(r, spec.cluster) for r, _ in pairs] if spec.cluster else None
    groups = [r.groups.get(spec.macro_over, "") for r, _ in pairs] if spec.macro_over else []
    return _estimate(spec, [v for _, v in pairs], groups, clusters, macro, seed, n_resamples)


def state_counts(records: Sequence[SampleRecord]) -> dict[str, int]:
    """Records per state, every state present (0 when none)."""
    counts = Counter(r.state.value for r in records)
    return {s: counts.get(s, 0) for s in STATES}


def outcome_keys(record: SampleRecord) -> tuple[str, ...]:
    """The :func:`response_outcomes` keys one record counts for (``finish:stop``,
    ``failure:content_filter``, ``cached`` …; empty without a scored response)."""
    turn = record.scored_turn
    resp = turn.response if turn is not None else None
    if resp is None:
        return ()
    keys = []
    if resp.finish_reason:
        keys.append(sys.intern(f"finish:{resp.finish_reason}"))
    if resp.failure:
        keys.append(sys.intern(f"failure:{resp.failure}"))
    if resp.cached:
        keys.append("cached")
    return tuple(keys)


def response_outcomes(records: Sequence[SampleRecord]) -> dict[str, int]:
    """How the scored turns' responses ended: counts of each ``finish_reason``
    (``finish:stop``, ``finish:length`` = truncated …), each failure kind
    (``failure:content_filter``, ``failure:reasoning_only`` …) and ``cached``."""
    counts: Counter[str] = Counter(k for r in records for k in outcome_keys(r))
    return dict(sorted(counts.items()))


#: Default of ``--warn-downscale``: an image sent at less than 1/4 of its original
#: longest side counts as heavily downscaled.
DEFAULT_WARN_DOWNSCALE = 4.0


def downscale_factor(record: SampleRecord) -> float | None:
    """The largest ``original longest side / sent longest side`` over every image of every
    turn of ``record`` (1.0 = sent at full size), or ``None`` when no image has both sizes
    (an engine that does not report the size sent, a score-only run)."""
    factors = [max(im.width, im.height) / max(im.sent_width, im.sent_height)
               for turn in record.turns for im in turn.images
               if im.width and im.height and im.sent_width and im.sent_height]
    return max(factors) if factors else None


def is_truncated(record: SampleRecord) -> bool:
    """Whether the scored turn of ``record`` ended with finish reason ``length``."""
    turn = record.scored_turn
    return turn is not None and turn.response is not None \
        and turn.response.finish_reason == "length"


def run_limits(records: Sequence[SampleRecord],
               warn_downscale: float = DEFAULT_WARN_DOWNSCALE) -> dict[str, Any]:
    """The ``run_limits`` block of ``summary.json``: how many records met a limit of the
    run's settings, all models together.

    ``truncated``: records whose scored turn ended with finish reason ``length`` (the
    ``--max-tokens`` limit); ``downscaled``: records with an image sent at more than
    ``warn_downscale`` times smaller on its longest side than the original
    (:func:`downscale_factor`; ``--max-side`` / ``--max-pixels``); ``n_records``;
    ``warn_downscale``: the factor used; ``max_downscale``: the largest factor seen
    (``None`` when no size was reported).
    """
    limits = RunLimits(warn_downscale)
    for r in records:
        limits.add(r)
    return limits.block()


class RunLimits:
    """:func:`run_limits` folded one record at a time (:meth:`add`, then :meth:`block`);
    keeps two counters and the largest factor, whatever the number of records."""

    def __init__(self, warn_downscale: float = DEFAULT_WARN_DOWNSCALE) -> None:
        self.warn_downscale = warn_downscale
        self.truncated = self.downscaled = self.n_records = 0
        self.max_factor: float | None = None

    def add(self, record: SampleRecord) -> None:
        """Count ``record``."""
        self.n_records += 1
        self.truncated += is_truncated(record)
        factor = downscale_factor(record)
        if factor is not None:
            self.downscaled += factor > self.warn_downscale
            self.max_factor = factor if self.max_factor is None else max(self.max_factor,
                                                                         factor)

    def block(self) -> dict[str, Any]:
        """The ``run_limits`` dict (see :func:`run_limits`)."""
        return {"truncated": self.truncated, "downscaled": self.downscaled,
                "n_records": self.n_records, "warn_downscale": self.warn_downscale,
                "max_downscale": round(self.max_factor, 3)
                if self.max_factor is not None else None}


def run_limit_lines(limits: dict[str, Any]) -> list[str]:
    """The end-of-run warnings for a :func:`run_limits` block (empty when no record met a
    limit), each naming the option to raise."""
    lines = []
    n = limits.get("n_records", 0)
    if limits.get("truncated"):
        lines.append(f"{limits['truncated']} of {n} answer(s) stopped at the token limit "
                     "(finish reason 'length'): they are cut short and score lower; raise "
                     "--max-tokens")
    if limits.get("downscaled"):
        lines.append(f"{limits['downscaled']} of {n} sample(s) had an image sent more than "
                     f"{limits['warn_downscale']:g}x smaller than the original on its "
                     f"longest side (largest: {limits['max_downscale']:g}x): small "
                     "characters may be unreadable; raise --max-side / --max-pixels")
    return lines


def invalid_rate(records: Sequence[SampleRecord]) -> dict[str, Any]:
    """Invalid rate = unparsed / (scored + unparsed), with its interval."""
    return _invalid_rate([r.state.value for r in records])


def _invalid_rate(states: Sequence[str]) -> dict[str, Any]:
    flags = [1.0 if s == "unparsed" else 0.0 for s in states if s in ("scored", "unparsed")]
    est = mean_estimate(flags, None, seed=BOOTSTRAP_SEED, n_resamples=N_RESAMPLES)
    return {"label": "Invalid rate", **est.to_dict()}


def model_block(records: Sequence[SampleRecord], metrics: Sequence[MetricSpec],
                group_keys: Sequence[str]) -> dict[str, Any]:
    """The envelope entry of one model: ``metrics`` (headline), ``groups`` (group key ->
    group value -> metric -> estimate), ``states`` and ``invalid_rate``."""
    acc = ModelFacts(metrics, group_keys)
    for r in records:
        acc.add(r)
    return acc.block()


def metric_spec_dict(spec: MetricSpec) -> dict[str, Any]:
    """A :class:`MetricSpec` as JSON (so that readers of a run folder, e.g. ``compare``,
    know each metric's label, scale, grouping and clustering without the benchmark)."""
    return {"name": spec.name, "label": spec.label, "states": list(spec.states),
            "macro_over": spec.macro_over, "cluster": spec.cluster, "by": list(spec.by),
            "scale": spec.scale, "decimals": spec.decimals,
            "higher_is_better": spec.higher_is_better}


def envelope(benchmark: str, records: Sequence[SampleRecord], metrics: Sequence[MetricSpec],
             group_keys: Sequence[str], *, partial: bool = False,
             warn_downscale: float = DEFAULT_WARN_DOWNSCALE) -> dict[str, Any]:
    """The summary envelope: ``schema``, ``benchmark``, ``partial``, ``models`` (model
    spec -> :func:`model_block`), ``statistics`` (how intervals were computed),
    ``group_keys`` and ``run_limits`` (:func:`run_limits` with ``warn_downscale``).
    The same as :class:`~heritage_eval.core.summary_stream.EnvelopeAccumulator` fed the
    records one at a time."""
    acc = EnvelopeAccumulator(metrics, group_keys, warn_downscale)
    for r in records:
        acc.add(r)
    return acc.envelope(benchmark, partial=partial)


def statistics_block(metrics: Sequence[MetricSpec]) -> dict[str, Any]:
    """The envelope's ``statistics`` entry: how intervals were computed, the specs."""
    return {"confidence": 0.95, "n_resamples": N_RESAMPLES, "seed": BOOTSTRAP_SEED,
            "interval": "percentile bootstrap; clustered metrics resample "
                        "whole clusters, macro means resample within groups",
            "stderr": "sample sd / sqrt(n); cluster-robust when clustered",
            "clusters": {m.name: m.cluster for m in metrics if m.cluster},
            "metric_specs": [metric_spec_dict(m) for m in metrics]}


class ModelFacts:
    """One model's envelope entry folded one record at a time (:meth:`add`, then
    :meth:`block`, the same dict as :func:`model_block`).

    Per record it keeps, in typed columns, the state, each metric's counted value (or
    that there is none), each group value, each macro group and cluster (as codes), and
    counts response outcomes; never the record (about 40 bytes a record for two metrics
    and three groups). The bootstrap gets the values in record order, so the estimates
    equal those computed from the list of records."""

    def __init__(self, metrics: Sequence[MetricSpec], group_keys: Sequence[str]) -> None:
        self.metrics = tuple(metrics)
        self.keys = list(dict.fromkeys([*group_keys, *(k for m in metrics for k in m.by)]))
        self.n = 0
        self._states, self._state = ValueCodes(), array("B")
        self._values = [array("d") for _ in self.metrics]
        self._counted = [bytearray() for _ in self.metrics]
        self._groups = [(ValueCodes(), array("i")) for _ in self.keys]
        self._macro = [(ValueCodes(), array("i")) if m.macro_over else None for m in self.metrics]
        self._clusters = [(ValueCodes(), array("l")) if m.cluster else None
                          for m in self.metrics]
        self.outcomes: Counter[str] = Counter()

    def add(self, r: SampleRecord) -> None:
        """Fold ``r`` in (it may be discarded afterwards)."""
        state = r.state.value
        self._state.append(self._states.code(state))
        for i, m in enumerate(self.metrics):
            value = r.scores.get(m.name)
            counted = state in m.states and value is not None
            self._values[i].append(float(value) if counted else 0.0)  # type: ignore[arg-type]
            self._counted[i].append(counted)
            macro = self._macro[i]
            if macro is not None:
                codes, col = macro
                col.append(codes.code(r.groups.get(m.macro_over or "", "") or ""))
            clusters = self._clusters[i]
            if clusters is not None:
                codes, ccol = clusters
                ccol.append(codes.code(cluster_of(r, m.cluster)))
        for (codes, col), k in zip(self._groups, self.keys, strict=True):
            col.append(codes.code(r.groups.get(k)))
        self.outcomes.update(outcome_keys(r))
        self.n += 1

    def states(self) -> list[str]:
        """Each record's state, in record order."""
        names = self._states.values
        return [names[c] for c in self._state]

    def _estimate(self, rows: Sequence[int], i: int, macro: bool) -> dict[str, Any]:
        spec = self.metrics[i]
        counted, values = self._counted[i], self._values[i]
        kept = [j for j in rows if counted[j]]
        m = self._macro[i]
        groups = [m[0].values[m[1][j]] for j in kept] if m is not None else [""] * len(kept)
        c = self._clusters[i]
        clusters = ([c[0].values[k] if (k := c[1][j]) >= 0 else None for j in kept]
                    if c is not None else None)
        return _estimate(spec, [values[j] for j in kept], groups, clusters, macro,
                         BOOTSTRAP_SEED, N_RESAMPLES)

    def block(self) -> dict[str, Any]:
        """The envelope entry (see :func:`model_block`)."""
        groups: dict[str, dict[str, dict[str, Any]]] = {}
        for (codes, col), key in zip(self._groups, self.keys, strict=True):
            by_value: dict[str, list[int]] = {}
            for j, c in enumerate(col):
                if c >= 0:
                    by_value.setdefault(codes.values[c], []).append(j)
            groups[key] = {value: {m.name: self._estimate(rows, i, m.macro_over != key)
                                   for i, m in enumerate(self.metrics)}
                           for value, rows in by_value.items()}
        all_rows = range(self.n)
        states = self.states()
        counts = Counter(states)
        return {"metrics": {m.name: self._estimate(all_rows, i, True)
                            for i, m in enumerate(self.metrics)},
                "groups": groups, "states": {s: counts.get(s, 0) for s in STATES},
                "response_outcomes": dict(sorted(self.outcomes.items())),
                "invalid_rate": _invalid_rate(states),
                "n_records": self.n}


class EnvelopeAccumulator:
    """:func:`envelope` folded one record at a time: :meth:`add` each record as it is
    written, then :meth:`envelope`. Memory: one small tuple per record (see
    :class:`ModelFacts`), so a run's records need not be kept."""

    def __init__(self, metrics: Sequence[MetricSpec], group_keys: Sequence[str],
                 warn_downscale: float = DEFAULT_WARN_DOWNSCALE) -> None:
        self.metrics = tuple(metrics)
        self.group_keys = tuple(group_keys)
        self.models: dict[str, ModelFacts] = {}
        self.limits = RunLimits(warn_downscale)

    def add(self, record: SampleRecord) -> None:
        """Fold ``record`` in."""
        facts = self.models.get(record.model)
        if facts is None:
            facts = self.models[record.model] = ModelFacts(self.metrics, self.group_keys)
        facts.add(record)
        self.limits.add(record)

    @property
    def n_records(self) -> int:
        """Records added so far."""
        return self.limits.n_records

    def answered(self) -> int:
        """Records ``scored`` or ``unparsed`` so far (all models)."""
        return sum(1 for f in self.models.values() for state in f.states()
                   if state in ("scored", "unparsed"))

    def envelope(self, benchmark: str, *, partial: bool = False) -> dict[str, Any]:
        """The summary envelope (see :func:`envelope`)."""
        return {"schema": SUMMARY_SCHEMA, "benchmark": benchmark, "partial": partial,
                "models": {m: f.block() for m, f in self.models.items()},
                "statistics": statistics_block(self.metrics),
                "group_keys": list(self.group_keys), "run_limits": self.limits.block()}
