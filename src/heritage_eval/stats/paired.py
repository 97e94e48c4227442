"""Paired comparison of two systems scored on the same samples.

Interval: the estimators of :mod:`heritage_eval.stats.intervals` applied to the
per-sample differences ``d_i = a_i - b_i``, whose range is ``[lo - hi, hi - lo]`` for
scores in ``[lo, hi]`` ([-1, 1] for fractions): the plain Student t on n - 1 df (CR2 on
Bell–McCaffrey df when clustered, Welch–Satterthwaite over groups for a macro
difference); identical systems get the "none of n differ" bound, not a zero-width
interval (docs/intervals.md).

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

import functools
import inspect
import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heritage_eval.stats.estimate import Estimate
from heritage_eval.stats.inputs import (
    Bounds,
    FloatArray,
    IntArray,
    Values,
    as_codes,
    as_values,
    check_bounds,
    check_confidence,
    fit_to_bounds,
    scipy_stats,
)
from heritage_eval.stats.intervals import UNIT, macro_mean_estimate, mean_estimate

__all__ = ["MIN_RESAMPLES", "PairedComparison", "paired_difference"]

#: Fewest Monte-Carlo sign-flip draws accepted.
MIN_RESAMPLES = 1000
# Largest number of sign entries drawn at once (rows x units), ~2 MB of float64.
_CHUNK = 250_000


@functools.cache
def rng_kw() -> str:
    """scipy >= 1.15 takes ``rng=``; older releases only ``random_state=``."""
    return ("rng" if "rng" in inspect.signature(scipy_stats().permutation_test).parameters
            else "random_state")


def check_resamples(n_resamples: int) -> None:
    """Raise ValueError unless n_resamples is an integer >= MIN_RESAMPLES."""
    if int(n_resamples) != n_resamples or n_resamples < MIN_RESAMPLES:
        raise ValueError(f"n_resamples must be an integer >= {MIN_RESAMPLES}, "
                         f"got {n_resamples!r}")


@dataclass(frozen=True)
class PairedComparison:
    """Difference a - b of two systems on the same samples. Never NaN: undefined is None.

    ``difference`` is in the units of the scores (for 0/1 accuracy, in [-1, 1]);
    ``ci_low``/``ci_high`` bound it at level ``confidence``; ``p_value`` in (0, 1] is
    two-sided; ``n`` counts pairs, ``n_clusters`` distinct cluster labels (None when
    unclustered); ``n_resamples`` the sign-flip draws behind the p-value (0 when exact
    or none); ``flags`` those of the interval (:class:`~.estimate.Estimate`).
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
    flags: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with keys difference, ci_low, ci_high, p_value, n, n_clusters,
        method, confidence, n_resamples, flags (a list)."""
        return {"difference": self.difference, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "p_value": self.p_value, "n": self.n,
                "n_clusters": self.n_clusters, "method": self.method,
                "confidence": self.confidence, "n_resamples": self.n_resamples,
                "flags": list(self.flags)}


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


def difference_bounds(bounds: Bounds) -> Bounds:
    """The range of ``a - b`` for scores in ``bounds = (lo, hi)``: ``(lo - hi, hi - lo)``
    (None stays None)."""
    return None if bounds is None else (bounds[0] - bounds[1], bounds[1] - bounds[0])


def paired_difference(
    a: Values,
    b: Values,
    clusters: Sequence[Hashable] | None = None,
    groups: Sequence[Hashable] | None = None,
    *,
    bounds: Bounds = UNIT,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> PairedComparison:
    """Compare two systems' scores ``a[i]``, ``b[i]`` (shape (n,), inside ``bounds``,
    default [0, 1]) on the same sample i.

    ``difference`` is the mean of ``d = a - b`` or, with ``groups``, the mean over groups
    of each group's mean difference (the macro difference). The interval is that of
    :func:`mean_estimate` / :func:`macro_mean_estimate` on ``d`` with the same
    ``clusters`` and ``groups``, the range ``difference_bounds(bounds)`` and
    ``adjust=False``: the plain Student t on n - 1 df (CR2 with clusters;
    Welch–Satterthwaite over groups), clipped to the range; identical
    ``a`` and ``b`` give difference 0.0, the "none of n differ" bound as interval
    (flag ``constant_fallback``) and p-value 1.0; n == 1 gives no interval (``n_1``);
    n == 0 gives all None with method "none".

    The p-value is the two-sided sign-flip permutation test (module docstring) of that
    statistic. Without clusters or groups it is ``scipy.stats.permutation_test((d,),
    mean, permutation_type="samples")`` with ``rng=np.random.default_rng(seed)`` and
    ``n_resamples`` draws (for n >= 2; n == 1 gives 1.0). Otherwise each pair's
    difference, or each cluster's differences together, are sign-flipped (a cluster
    label flips as one unit across groups, the conservative choice when clusters are
    not nested in groups).

    Raises ValueError for length mismatches, None/NaN/non-numeric scores (naming the
    position), scores outside ``bounds``, confidence outside (0, 1) or
    n_resamples < 1000.
    """
    xa = as_values(a, "a")
    xb = as_values(b, "b")
    if xa.size != xb.size:
        raise ValueError(f"a has {xa.size} scores but b has {xb.size}; they must be paired")
    check_confidence(confidence)
    check_resamples(n_resamples)
    bnd = check_bounds(bounds)
    xa, xb = fit_to_bounds(xa, bnd, "a"), fit_to_bounds(xb, bnd, "b")
    d = xa - xb
    n = int(d.size)
    ccodes, n_clusters = (None, 0) if clusters is None else as_codes(clusters, "clusters", n)
    gcodes, n_groups = (None, 0) if groups is None else as_codes(groups, "groups", n)
    if n == 0:
        return PairedComparison(None, None, None, None, 0, None, "none", confidence, 0,
                                ("n_0",))

    dbounds = difference_bounds(bnd)
    est: Estimate
    if groups is None:
        est = mean_estimate(d, clusters, bounds=dbounds, confidence=confidence, adjust=False)
    else:
        est = macro_mean_estimate(d, groups, clusters, bounds=dbounds, confidence=confidence,
                                  adjust=False)

    weights: FloatArray
    if gcodes is None:
        weights = np.full(n, 1.0 / n)
    else:
        sizes = np.bincount(gcodes, minlength=n_groups).astype(np.float64)
        weights = 1.0 / (n_groups * sizes[gcodes])
    rng = np.random.default_rng(seed)
    draws = 0
    if ccodes is None and gcodes is None and n >= 2:
        constant = bool(np.all(d == 0.0))
        p = 1.0 if constant else _scipy_p_value(d, n_resamples, rng)
        draws = 0 if constant or 2**n <= n_resamples else n_resamples
    else:
        units: IntArray = np.arange(n, dtype=np.intp) if ccodes is None else ccodes
        n_units = n if ccodes is None else n_clusters
        w = np.bincount(units, weights=weights * d, minlength=n_units).astype(np.float64)
        p = sign_flip_p_value(w, n_resamples, rng)
        draws = 0 if 2**n_units <= n_resamples or bool(np.all(w == 0.0)) else n_resamples

    flip = "cluster-sign-flip-permutation" if ccodes is not None else "sign-flip-permutation"
    method = f"paired-{est.method}+{flip}"
    return PairedComparison(
        difference=est.value,
        ci_low=est.ci_low,
        ci_high=est.ci_high,
        p_value=p if math.isfinite(p) else None,
        n=n,
        n_clusters=n_clusters if ccodes is not None else None,
        method=method,
        confidence=confidence,
        n_resamples=draws,
        flags=est.flags,
    )
