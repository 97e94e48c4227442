"""The ``summary.json`` envelope: per model, every metric with value, n, standard error
and a 95 % interval, overall and per group (schema ``heritage-eval/summary/1``).

Computed from the sample records alone (:class:`~heritage_eval.core.record.SampleRecord`)
and the benchmark's :class:`~heritage_eval.core.benchmark.MetricSpec` list, so that every
benchmark gets the same statistics (:mod:`heritage_eval.stats`). Bootstrap intervals are
seeded (:data:`BOOTSTRAP_SEED`, :data:`N_RESAMPLES`): the same records give the same
summary byte for byte.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

from heritage_eval.core.benchmark import MetricSpec
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


def estimate(records: Sequence[SampleRecord], spec: MetricSpec, *, macro: bool = True,
             seed: int = BOOTSTRAP_SEED, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """Value, n, stderr and interval of ``spec`` over ``records`` (JSON-ready dict).

    With ``macro`` and ``spec.macro_over`` set, the value is the unweighted mean of the
    group means, resampled within each group; otherwise the pooled mean. Samples that
    share ``spec.cluster`` are resampled together."""
    pairs = metric_values(records, spec)
    values = [v for _, v in pairs]
    clusters = [cluster_of(r, spec.cluster) for r, _ in pairs] if spec.cluster else None
    if macro and spec.macro_over:
        groups = [r.groups.get(spec.macro_over, "") for r, _ in pairs]
        est = macro_mean_estimate(values, groups, clusters, seed=seed,
                                  n_resamples=n_resamples)
    else:
        est = mean_estimate(values, clusters, seed=seed, n_resamples=n_resamples)
    return {"label": spec.label, **est.to_dict()}


def state_counts(records: Sequence[SampleRecord]) -> dict[str, int]:
    """Records per state, every state present (0 when none)."""
    counts = Counter(r.state.value for r in records)
    return {s: counts.get(s, 0) for s in STATES}


def response_outcomes(records: Sequence[SampleRecord]) -> dict[str, int]:
    """How the scored turns' responses ended: counts of each ``finish_reason``
    (``finish:stop``, ``finish:length`` = truncated …), each failure kind
    (``failure:content_filter``, ``failure:reasoning_only`` …) and ``cached``."""
    counts: Counter[str] = Counter()
    for r in records:
        turn = r.scored_turn
        resp = turn.response if turn is not None else None
        if resp is None:
            continue
        if resp.finish_reason:
            counts[f"finish:{resp.finish_reason}"] += 1
        if resp.failure:
            counts[f"failure:{resp.failure}"] += 1
        if resp.cached:
            counts["cached"] += 1
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
    truncated = 0
    factors: list[float] = []
    for r in records:
        turn = r.scored_turn
        if turn is not None and turn.response is not None \
                and turn.response.finish_reason == "length":
            truncated += 1
        factor = downscale_factor(r)
        if factor is not None:
            factors.append(factor)
    return {"truncated": truncated,
            "downscaled": sum(1 for f in factors if f > warn_downscale),
            "n_records": len(records), "warn_downscale": warn_downscale,
            "max_downscale": round(max(factors), 3) if factors else None}


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
    flags = [1.0 if r.state.value == "unparsed" else 0.0 for r in records
             if r.state.value in ("scored", "unparsed")]
    est = mean_estimate(flags, None, seed=BOOTSTRAP_SEED, n_resamples=N_RESAMPLES)
    return {"label": "Invalid rate", **est.to_dict()}


def model_block(records: Sequence[SampleRecord], metrics: Sequence[MetricSpec],
                group_keys: Sequence[str]) -> dict[str, Any]:
    """The envelope entry of one model: ``metrics`` (headline), ``groups`` (group key ->
    group value -> metric -> estimate), ``states`` and ``invalid_rate``."""
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    keys = list(dict.fromkeys([*group_keys, *(k for m in metrics for k in m.by)]))
    for key in keys:
        by_value: dict[str, list[SampleRecord]] = defaultdict(list)
        for r in records:
            if key in r.groups:
                by_value[r.groups[key]].append(r)
        groups[key] = {value: {m.name: estimate(rs, m, macro=m.macro_over != key)
                               for m in metrics}
                       for value, rs in by_value.items()}
    return {"metrics": {m.name: estimate(records, m) for m in metrics},
            "groups": groups, "states": state_counts(records),
            "response_outcomes": response_outcomes(records),
            "invalid_rate": invalid_rate(records), "n_records": len(records)}


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
    ``group_keys`` and ``run_limits`` (:func:`run_limits` with ``warn_downscale``)."""
    by_model: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_model[r.model].append(r)
    return {
        "schema": SUMMARY_SCHEMA, "benchmark": benchmark, "partial": partial,
        "models": {m: model_block(rs, metrics, group_keys) for m, rs in by_model.items()},
        "statistics": {"confidence": 0.95, "n_resamples": N_RESAMPLES,
                       "seed": BOOTSTRAP_SEED,
                       "interval": "percentile bootstrap; clustered metrics resample "
                                   "whole clusters, macro means resample within groups",
                       "stderr": "sample sd / sqrt(n); cluster-robust when clustered",
                       "clusters": {m.name: m.cluster for m in metrics if m.cluster},
                       "metric_specs": [metric_spec_dict(m) for m in metrics]},
        "group_keys": list(group_keys),
        "run_limits": run_limits(records, warn_downscale),
    }
