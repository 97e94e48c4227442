"""The ``summary.json`` envelope: per model, every metric with value, n, standard error
and a 95 % interval, overall and per group (schema ``heritage-eval/summary/1``).

Computed from the sample records alone (:class:`~heritage_eval.core.record.SampleRecord`)
and the benchmark's :class:`~heritage_eval.core.benchmark.MetricSpec` list, so that every
benchmark gets the same statistics (:mod:`heritage_eval.stats`: Wilson / Korn–Graubard
for proportions, t / CR2 for bounded scores, Welch–Satterthwaite for macro means; each
estimate's ``flags`` name what a reader must know). The intervals are closed-form, so
the same records give the same summary byte for byte (:data:`BOOTSTRAP_SEED` and
:data:`N_RESAMPLES` are kept for callers and no longer drive any draw).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.codes import ValueCodes
from heritage_eval.core.columns import Column
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.run_limits import DEFAULT_WARN_DOWNSCALE, RunLimits
from heritage_eval.stats import macro_mean_estimate, mean_estimate
from heritage_eval.stats.intervals import FloatArray, IntArray, Labels

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


def _estimate(spec: MetricSpec, values: Sequence[float] | FloatArray,
              groups: Labels, clusters: Labels | None, macro: bool,
              seed: int, n_resamples: int,
              group_names: Sequence[str] | None = None) -> dict[str, Any]:
    """The estimate of ``spec`` (its declared ``bounds``); ``group_names`` name the
    integer group codes in flags."""
    if macro and spec.macro_over:
        est = macro_mean_estimate(values, groups, clusters, bounds=spec.bounds, seed=seed,
                                  n_resamples=n_resamples, group_names=group_names)
    else:
        est = mean_estimate(values, clusters, bounds=spec.bounds, seed=seed,
                            n_resamples=n_resamples)
    return {"label": spec.label, **est.to_dict()}


def estimate(records: Sequence[SampleRecord], spec: MetricSpec, *, macro: bool = True,
             seed: int = BOOTSTRAP_SEED, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """Value, n, stderr, interval and flags of ``spec`` over ``records`` (JSON-ready
    dict).

    With ``macro`` and ``spec.macro_over`` set, the value is the unweighted mean of the
    group means (Welch–Satterthwaite interval); otherwise the pooled mean. Samples that
    share ``spec.cluster`` form one cluster (cluster-robust interval)."""
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


def invalid_rate(records: Sequence[SampleRecord]) -> dict[str, Any]:
    """Invalid rate = unparsed / (scored + unparsed), with its (Wilson) interval."""
    return _invalid_rate([1.0 if r.state.value == "unparsed" else 0.0 for r in records
                          if r.state.value in ANSWERED])


#: The states of an answered record (the invalid rate's denominator).
ANSWERED = ("scored", "unparsed")


def _invalid_rate(flags: Sequence[float] | FloatArray,
                  label: str = "Invalid rate") -> dict[str, Any]:
    """The invalid-rate block from one flag per answered record (1.0: unparsed); with
    ``label``, any other rate of 0/1 flags (the model-failure rate)."""
    est = mean_estimate(flags, None, bounds=(0.0, 1.0))
    return {"label": label, **est.to_dict()}


def failure_code(record: SampleRecord) -> int:
    """0: a record in the model-failure rate's denominator that is not a model failure;
    1: a model failure (``details.model_failure``, docs/denominators.md); 2: left out of
    it (an ``error`` that is not the model's: network, server, data)."""
    if record.details.get("model_failure"):
        return 1
    return 2 if record.state.value == "error" else 0


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
            "higher_is_better": spec.higher_is_better,
            "bounds": None if spec.bounds is None else list(spec.bounds)}


def envelope(benchmark: str, records: Sequence[SampleRecord], metrics: Sequence[MetricSpec],
             group_keys: Sequence[str], *, partial: bool = False,
             warn_downscale: float = DEFAULT_WARN_DOWNSCALE) -> dict[str, Any]:
    """The summary envelope: ``schema``, ``benchmark``, ``partial``, ``models`` (model
    spec -> :func:`model_block`), ``statistics`` (how intervals were computed),
    ``group_keys`` and ``run_limits`` (:func:`run_limits` with ``warn_downscale``).
    The same as :class:`EnvelopeAccumulator` fed the
    records one at a time."""
    acc = EnvelopeAccumulator(metrics, group_keys, warn_downscale)
    for r in records:
        acc.add(r)
    return acc.envelope(benchmark, partial=partial)


#: What each flag of an estimate means (the envelope's ``statistics.flags``).
FLAG_NOTES = {
    "n_0": "no observation: no value, no interval",
    "n_1": "one observation: the value is that observation, no interval",
    "constant_fallback": "all values equal (for a macro mean or difference: within some "
                         "group): that part's interval bounds the share of the population "
                         "that could differ (Wilson bound of 0 of n)",
    "constant_unbounded": "all values equal and no declared range: no interval",
    "few_clusters": "fewer than 20 clusters: small-sample corrections, coverage "
                    "approximate",
    "iid_floor": "the cluster-robust interval was narrower than the unclustered one; "
                 "the wider is reported",
    "one_cluster": "every observation in one cluster: no cluster-robust interval",
    "one_sample_group:<names>": "a macro mean's group with one observation (or one "
                                "cluster) counts with the largest variance its range "
                                "allows",
}


def statistics_block(metrics: Sequence[MetricSpec]) -> dict[str, Any]:
    """The envelope's ``statistics`` entry: how intervals were computed, the flags, the
    specs (docs/intervals.md has the rules and their coverage study)."""
    return {"confidence": 0.95, "n_resamples": 0, "seed": BOOTSTRAP_SEED,
            "interval": "closed-form, never of zero width: Wilson score for 0/1 values "
                        "(Korn-Graubard effective n when clustered); Student t with half "
                        "a pseudo-observation at each end of the declared range for "
                        "bounded scores (CR2 cluster-robust SE on Bell-McCaffrey df when "
                        "clustered, never narrower than unclustered); a Wilson bound for "
                        "constant data; macro means: Welch-Satterthwaite t over the "
                        "groups' standard errors; clipped to each metric's bounds; n = 1 "
                        "has no interval",
            "stderr": "the standard error behind the interval: sd / sqrt(n), CR2 when "
                      "clustered; for a Wilson-type interval its longer arm over z",
            "flags": dict(FLAG_NOTES),
            "clusters": {m.name: m.cluster for m in metrics if m.cluster},
            "metric_specs": [metric_spec_dict(m) for m in metrics]}


class ModelFacts:
    """One model's envelope entry folded one record at a time (:meth:`add`, then
    :meth:`block`, the same dict as :func:`model_block`).

    Per record it keeps, in typed columns, the state, each metric's counted value (or
    that there is none), each group value, each macro group and cluster (as codes), and
    counts response outcomes; never the record (about 40 bytes a record for two metrics
    and three groups). The interval code gets the values in record order, so the estimates
    equal those computed from the list of records."""

    def __init__(self, metrics: Sequence[MetricSpec], group_keys: Sequence[str]) -> None:
        self.metrics = tuple(metrics)
        self.keys = list(dict.fromkeys([*group_keys, *(k for m in metrics for k in m.by)]))
        self.n = 0
        self._states, self._state = ValueCodes(), Column("B")
        self._values = [Column("d") for _ in self.metrics]
        self._counted = [Column("B") for _ in self.metrics]
        self._groups = [(ValueCodes(), Column("i")) for _ in self.keys]
        self._macro = [(ValueCodes(), Column("i")) if m.macro_over else None
                       for m in self.metrics]
        self._clusters = [(ValueCodes(), Column("l")) if m.cluster else None
                          for m in self.metrics]
        self.outcomes: Counter[str] = Counter()
        self._failure = Column("B")

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
        self._failure.append(failure_code(r))
        self.n += 1

    def states(self) -> list[str]:
        """Each record's state, in record order."""
        names = self._states.values
        return [names[c] for c in self._state]

    def _estimate(self, rows: IntArray, i: int, macro: bool) -> dict[str, Any]:
        """The estimate of metric ``i`` over the records ``rows`` (indices, in order)
        that count for it; values, macro groups and clusters go to the interval code as
        arrays in record order, the labels as codes in order of first appearance (as
        ``as_codes`` numbers labels), so the numbers are those of the records."""
        spec = self.metrics[i]
        counted = _column(self._counted[i])[rows] != 0
        m, c = self._macro[i], self._clusters[i]
        # every record, each counted (rows then is 0..n-1: distinct indices in order):
        # the columns as they are, without a copy taken through the indices
        if rows.size == self.n and bool(counted.all()):
            del counted
            values = _column(self._values[i])
            groups = _column(m[1]) if m is not None else np.zeros(self.n, np.int32)
            clusters = _column(c[1]) if c is not None else None
        else:
            kept = rows[counted]
            values = _column(self._values[i])[kept]
            groups = _column(m[1])[kept] if m is not None else np.zeros(kept.size,
                                                                          np.int32)
            clusters = _column(c[1])[kept] if c is not None else None
        names = [str(v) for v in m[0].values] if m is not None else None
        return _estimate(spec, values, groups, clusters, macro, BOOTSTRAP_SEED, N_RESAMPLES,
                         names)

    def block(self) -> dict[str, Any]:
        """The envelope entry (see :func:`model_block`)."""
        groups: dict[str, dict[str, dict[str, Any]]] = {}
        for (codes, col), key in zip(self._groups, self.keys, strict=True):
            groups[key] = {value: {m.name: self._estimate(rows, i, m.macro_over != key)
                                   for i, m in enumerate(self.metrics)}
                           for value, rows in _rows_by_code(col, codes.values)}
        state = _column(self._state)
        counts = np.bincount(state, minlength=len(self._states.values))
        names = self._states.values
        all_rows = np.arange(self.n, dtype=np.intp)
        return {"metrics": {m.name: self._estimate(all_rows, i, True)
                            for i, m in enumerate(self.metrics)},
                "groups": groups,
                "states": {s: int(counts[names.index(s)]) if s in names else 0
                           for s in STATES},
                "response_outcomes": dict(sorted(self.outcomes.items())),
                "invalid_rate": _invalid_rate(self._unparsed_flags(state)),
                "model_failure_rate": self._failure_rate(),
                "n_records": self.n}

    def _failure_rate(self) -> dict[str, Any]:
        """Model failures ÷ records not left out for network, server or data errors
        (:func:`failure_code`), with its interval."""
        codes = _column(self._failure)
        return _invalid_rate((codes[codes != 2] == 1).astype(np.float64), "Model-failure rate")

    def _unparsed_flags(self, state: npt.NDArray[np.uint8]) -> FloatArray:
        """One flag per answered record (1.0: unparsed), in record order, from the
        state column (no list of states)."""
        names = self._states.values
        answered = np.array([n in ANSWERED for n in names], dtype=bool)
        unparsed = np.array([n == "unparsed" for n in names], dtype=np.float64)
        return unparsed[state][answered[state]] if names else np.zeros(0)


def _column(col: Column) -> npt.NDArray[Any]:
    """A copy of a typed column as a numpy array of its C type. A copy: the column may
    grow later."""
    return col.numpy()


def _rows_by_code(col: Column, values: Sequence[Any]
                  ) -> Iterator[tuple[Any, IntArray]]:
    """``(value, indices of the rows holding it)`` for each code of ``col`` (codes >= 0,
    ``values[code]`` their values), in order of code — the order in which the values
    were first seen."""
    codes = _column(col)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes[codes >= 0], minlength=len(values))
    start = int(np.count_nonzero(codes < 0))
    for c, n in enumerate(counts.tolist()):
        if n:
            yield values[c], order[start:start + n]
            start += n


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
