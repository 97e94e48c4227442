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
P-values should never be zero"); computed in :mod:`.signflip` in O(U × n_resamples) time
and bounded memory.

The smallest p-value the test can return is ``2 / 2^U'`` with U' the units whose
difference is not zero (at least ``2 / (n_resamples + 1)`` when Monte-Carlo): 0.0625 for
5 clusters, so a few clusters can never give p < 0.05. When it exceeds 0.01 (or
``1 - confidence`` if smaller) the result is flagged ``p_floor:<value>``.
"""

from __future__ import annotations

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
    constant_tolerance,
    fit_to_bounds,
)
from heritage_eval.stats.intervals import UNIT, macro_mean_estimate, mean_estimate
from heritage_eval.stats.signflip import p_floor, samples_p_value, sign_flip_p_value

__all__ = ["MIN_RESAMPLES", "P_FLOOR_LEVEL", "PairedComparison", "paired_difference",
           "sign_flip_p_value"]

#: Fewest Monte-Carlo sign-flip draws accepted.
MIN_RESAMPLES = 1000
#: A test whose smallest attainable p-value exceeds this (or 1 - confidence, if smaller)
#: is flagged ``p_floor:<value>``.
P_FLOOR_LEVEL = 0.01


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
    or none); ``flags`` those of the interval (:class:`~.estimate.Estimate`) and
    ``p_floor:<value>`` when the test cannot return a p-value below ``<value>``
    (:func:`paired_difference`).
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
    Welch–Satterthwaite over groups), clipped to the range; differences constant up to
    rounding (:func:`~.inputs.is_constant` on the range of ``d``) get the "none of n
    differ" bound as interval (flag ``constant_fallback``), never a zero-width one;
    identical ``a`` and ``b`` (every unit's mean difference zero up to that tolerance)
    give difference 0.0 (or the rounding noise's mean), that bound and p-value 1.0;
    n == 1 gives no interval (``n_1``); n == 0 gives all None with method "none".

    The p-value is the two-sided sign-flip permutation test (module docstring) of that
    statistic. Without clusters or groups it equals ``scipy.stats.permutation_test((d,),
    mean, permutation_type="samples")`` with ``rng=np.random.default_rng(seed)`` and
    ``n_resamples`` draws (:func:`~.signflip.samples_p_value`, the same signs, linear in
    n; n == 1 gives 1.0). Otherwise each pair's difference, or each cluster's
    differences together, are sign-flipped (a cluster label flips as one unit across
    groups, the conservative choice when clusters are not nested in groups). Flag
    ``p_floor:<value>`` (``{:.3g}``) when the smallest attainable p-value exceeds
    ``min(P_FLOOR_LEVEL, 1 - confidence)`` (module docstring).

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
    units: IntArray = np.arange(n, dtype=np.intp) if ccodes is None else ccodes
    n_units = n if ccodes is None else n_clusters
    w = np.bincount(units, weights=weights * d, minlength=n_units).astype(np.float64)
    # a unit whose weighted mean difference is zero up to rounding cannot move the test
    unit_weight = np.bincount(units, weights=weights, minlength=n_units)
    active = int(np.count_nonzero(np.abs(w) > constant_tolerance(d, dbounds) * unit_weight))
    rng = np.random.default_rng(seed)
    exact = 2**n_units <= n_resamples
    flags = list(est.flags)
    if active == 0:  # identical systems (up to rounding): no sign flip moves the mean
        p, draws = 1.0, 0
    else:
        if ccodes is None and gcodes is None:
            p = samples_p_value(d, n_resamples, rng)
        else:
            p = sign_flip_p_value(w, n_resamples, rng)
        draws = 0 if exact else n_resamples
        floor = p_floor(active, 0 if exact else n_resamples)
        if floor > min(P_FLOOR_LEVEL, 1.0 - confidence):
            flags.append(f"p_floor:{floor:.3g}")

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
        flags=tuple(flags),
    )
