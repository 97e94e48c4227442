"""Paired comparison of two systems scored on the same samples.

Interval: paired bootstrap of the mean difference (resample pairs, whole clusters, or
within groups), i.e. the estimators of :mod:`heritage_eval.stats.intervals` applied to the
per-sample differences ``d_i = a_i - b_i``; Efron & Tibshirani (1993), ch. 13.

p-value: two-sided paired permutation (sign-flip) test. Under the null hypothesis each
pair's difference, or each cluster's vector of differences, is symmetric about zero, so
flipping its sign leaves the distribution unchanged (Fisher 1935, "The Design of
Experiments", sec. 21; for clusters Canay, Romano & Shaikh 2017, "Randomization tests
under an approximate symmetry assumption", Econometrica 85(3)). Two-sided p-value as in
``scipy.stats.permutation_test``: ``min(1, 2 * min(P(T* <= t), P(T* >= t)))``, exact over
all 2^U sign vectors when ``2^U <= n_resamples`` (U = pairs or clusters), otherwise
Monte-Carlo with ``(count + 1) / (n_resamples + 1)`` (Phipson & Smyth 2010, "Permutation
P-values should never be zero").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from heritage_eval.stats.intervals import (
    _CHUNK,
    Estimate,
    FloatArray,
    IntArray,
    Values,
    as_codes,
    as_values,
    check_options,
    macro_mean_estimate,
    mean_estimate,
    rng_kw,
    scipy_stats,
)

__all__ = ["PairedComparison", "paired_difference"]


@dataclass(frozen=True)
class PairedComparison:
    """Difference a - b of two systems on the same samples. Never NaN: undefined is None.

    ``difference`` is in the units of the scores (for 0/1 accuracy, in [-1, 1]);
    ``ci_low``/``ci_high`` bound it at level ``confidence``; ``p_value`` in (0, 1] is
    two-sided; ``n`` counts pairs, ``n_clusters`` distinct cluster labels (None when
    unclustered), ``n_resamples`` the bootstrap resamples (0 when none were drawn).
    """

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n: int
    n_clusters: int | None
    method: str
    confidence: float = 0.95
    n_resamples: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with keys difference, ci_low, ci_high, p_value, n, n_clusters,
        method, confidence, n_resamples."""
        return asdict(self)


def _mean_stat(x: FloatArray, axis: int = -1) -> FloatArray:
    return np.asarray(np.mean(x, axis=axis))


def _two_sided(null: FloatArray, observed: float, adjustment: int) -> float:
    """scipy.stats.permutation_test's two-sided p-value, with its relative tie tolerance."""
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    total = null.size + adjustment
    less = (int(np.count_nonzero(null <= observed + gamma)) + adjustment) / total
    greater = (int(np.count_nonzero(null >= observed - gamma)) + adjustment) / total
    return float(min(1.0, 2.0 * min(less, greater)))


def sign_flip_p_value(
    weighted_unit_sums: FloatArray, n_resamples: int, rng: np.random.Generator
) -> float:
    """Two-sided sign-flip p-value of the statistic ``T(s) = sum_u s_u w_u``, s in {-1, 1}^U.

    ``weighted_unit_sums`` (shape (U,)) holds each unit's contribution to the statistic
    at s = 1 (e.g. a cluster's sum of differences over N). Exact when 2^U <= n_resamples
    (every sign vector, identity included, no adjustment), else Monte-Carlo with +1.
    """
    w = weighted_unit_sums
    observed = float(w.sum())
    k = w.size
    if k == 0 or bool(np.all(w == 0.0)):
        return 1.0
    if 2**k <= n_resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=k)), dtype=np.float64)
        return _two_sided(signs @ w, observed, 0)
    null = np.empty(n_resamples, dtype=np.float64)
    rows = max(1, _CHUNK // k)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        flips = rng.integers(0, 2, size=(stop - start, k)).astype(np.float64) * 2.0 - 1.0
        null[start:stop] = flips @ w
    return _two_sided(null, observed, 1)


def _scipy_p_value(d: FloatArray, n_resamples: int, rng: np.random.Generator) -> float:
    """scipy.stats.permutation_test(permutation_type='samples') on the differences."""
    batch = None if d.size * n_resamples <= _CHUNK else max(1, _CHUNK // (2 * d.size))
    res = scipy_stats().permutation_test(
        (d,), _mean_stat, permutation_type="samples", vectorized=True,
        n_resamples=n_resamples, batch=batch, alternative="two-sided", **{rng_kw(): rng},
    )
    return float(res.pvalue)


def paired_difference(
    a: Values,
    b: Values,
    clusters: Sequence[Hashable] | None = None,
    groups: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> PairedComparison:
    """Compare two systems' scores ``a[i]``, ``b[i]`` (shape (n,)) on the same sample i.

    ``difference`` is the mean of ``d = a - b`` or, with ``groups``, the mean over groups
    of each group's mean difference (the macro difference). The interval is the
    percentile bootstrap of that statistic from :func:`mean_estimate` /
    :func:`macro_mean_estimate` on ``d`` with the same ``clusters``, ``groups`` and
    ``seed`` (resampling pairs, whole clusters, or within groups).

    The p-value is the two-sided sign-flip permutation test (module docstring) of that
    statistic. Without clusters or groups it is ``scipy.stats.permutation_test((d,),
    mean, permutation_type="samples")`` with ``rng=np.random.default_rng(seed)`` (for
    n >= 2; n == 1 gives 1.0). Otherwise each pair's difference, or each cluster's
    differences together, are sign-flipped (a cluster label flips as one unit across
    groups, the conservative choice when clusters are not nested in groups). Identical
    ``a`` and ``b`` give difference 0.0, interval [0, 0] and p-value 1.0; n == 0 gives
    all None with method "none".

    Raises ValueError for length mismatches, None/NaN/non-numeric scores (naming the
    position), confidence outside (0, 1) or n_resamples < 1000.
    """
    xa = as_values(a, "a")
    xb = as_values(b, "b")
    if xa.size != xb.size:
        raise ValueError(f"a has {xa.size} scores but b has {xb.size}; they must be paired")
    check_options(confidence, n_resamples)
    d = xa - xb
    n = int(d.size)
    ccodes, n_clusters = (None, 0) if clusters is None else as_codes(clusters, "clusters", n)
    gcodes, n_groups = (None, 0) if groups is None else as_codes(groups, "groups", n)
    if n == 0:
        return PairedComparison(None, None, None, None, 0, None, "none", confidence, 0)

    est: Estimate
    if groups is None:
        est = mean_estimate(d, clusters, confidence=confidence, n_resamples=n_resamples,
                            seed=seed)
    else:
        est = macro_mean_estimate(d, groups, clusters, confidence=confidence,
                                  n_resamples=n_resamples, seed=seed)

    weights: FloatArray
    if gcodes is None:
        weights = np.full(n, 1.0 / n)
    else:
        sizes = np.bincount(gcodes, minlength=n_groups).astype(np.float64)
        weights = 1.0 / (n_groups * sizes[gcodes])
    rng = np.random.default_rng(seed)
    if ccodes is None and gcodes is None and n >= 2:
        p = 1.0 if bool(np.all(d == 0.0)) else _scipy_p_value(d, n_resamples, rng)
    else:
        units: IntArray = np.arange(n, dtype=np.intp) if ccodes is None else ccodes
        n_units = n if ccodes is None else n_clusters
        w = np.bincount(units, weights=weights * d, minlength=n_units).astype(np.float64)
        p = sign_flip_p_value(w, n_resamples, rng)

    boot = {"bootstrap-percentile": "paired-bootstrap",
            "cluster-bootstrap-percentile": "paired-cluster-bootstrap",
            "stratified-bootstrap-percentile": "paired-stratified-bootstrap",
            "stratified-cluster-bootstrap-percentile": "paired-stratified-cluster-bootstrap"}
    flip = "cluster-sign-flip-permutation" if ccodes is not None else "sign-flip-permutation"
    method = f"{boot[est.method]}+{flip}"
    return PairedComparison(
        difference=est.value,
        ci_low=est.ci_low,
        ci_high=est.ci_high,
        p_value=p if math.isfinite(p) else None,
        n=n,
        n_clusters=n_clusters if ccodes is not None else None,
        method=method,
        confidence=confidence,
        n_resamples=est.n_resamples,
    )
