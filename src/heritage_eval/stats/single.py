"""The interval of one sample's mean (n >= 2), by the kind of data (docs/intervals.md).

* Every value at an end of the declared range (0/1 accuracy): Wilson score interval;
  clustered, Wilson on the Korn–Graubard effective sample size (:mod:`.proportion`).
* Other values, not all equal: Student t on n - 1 df after adding half a
  pseudo-observation at each end of the declared range (a Jeffreys-style adjustment,
  as Agresti & Coull add pseudo-counts to a proportion): with ``u`` the values rescaled
  to [0, 1], ``m~ = (sum u + 1/2)/(n + 1)``, ``v~ = (sum (u - m~)² + (m~² + (1-m~)²)/2)/n``,
  interval ``m~ ± t_{n-1} sqrt(v~/(n + 1))`` mapped back and clipped to the range. The
  coverage study chose it over the plain t interval, which under-covers skewed scores
  with mass at a bound (docs/intervals.md). Without a declared range: plain t.
  Clustered: the CR2 standard error on Bell–McCaffrey df (:mod:`.cr2`), clipped.
* All values equal up to rounding (:func:`~.inputs.is_constant`: ``max - min`` at most
  1e-12 of the scale), not all at an end of the range: the "none of n differ" bound
  (``constant_fallback``); without a declared range, no interval
  (``constant_unbounded``).
* Clustered: the unclustered interval is computed too; when it is wider it is reported
  instead (``iid_floor``); fewer than 20 clusters add ``few_clusters``; one cluster
  gives no interval (``one_cluster``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from heritage_eval.stats.cr2 import mean_variance
from heritage_eval.stats.estimate import FEW_CLUSTERS
from heritage_eval.stats.inputs import Bounds, FloatArray, IntArray, is_constant, seq_mean
from heritage_eval.stats.proportion import (
    constant_interval,
    df_factor,
    kg_effective_n,
    t_quantile,
    wilson_interval,
    z_quantile,
)

__all__ = ["Part", "one_sample"]


@dataclass(frozen=True)
class Part:
    """One sample's estimate. ``low``/``high`` None: no interval. ``se``/``df``: the
    standard error and df to combine it in a macro mean: the interval's longer arm from
    the value over its critical value (t_df; z with ``df`` inf for a Wilson-type
    interval); ``center``: the center of
    the interval before clipping (the value, or the adjusted mean it is built around)."""

    value: float
    center: float
    se: float | None
    low: float | None
    high: float | None
    df: float | None
    method: str
    flags: tuple[str, ...] = ()

    @property
    def width(self) -> float:
        """``high - low`` (inf without an interval)."""
        return math.inf if self.low is None or self.high is None else self.high - self.low


def _clip(low: float, high: float, bounds: Bounds) -> tuple[float, float]:
    if bounds is None:
        return low, high
    return max(low, bounds[0]), min(high, bounds[1])


def _wilson_part(value: float, p: float, n_eff: float, bounds: tuple[float, float],
                 confidence: float, method: str, flags: tuple[str, ...] = ()) -> Part:
    """Wilson interval of the rescaled mean ``p`` mapped back onto ``bounds``."""
    lo, hi = bounds
    span = hi - lo
    if p <= 0.0 or p >= 1.0:  # the "none of n differ" bound is Wilson's 0/n
        low, high = constant_interval(value, bounds, n_eff, confidence)
    else:
        wl, wh = wilson_interval(p, n_eff, confidence)
        low, high = lo + span * wl, lo + span * wh
    return Part(value, (low + high) / 2.0, _arm_se(value, low, high, confidence), low, high,
                math.inf, method, flags)


def _arm_se(value: float, low: float, high: float, confidence: float) -> float:
    """The standard error a Wilson-type interval implies for combining: its longer arm
    from the value over z (the conservative side of an asymmetric interval)."""
    return max(value - low, high - value) / z_quantile(confidence)


def _constant_part(value: float, bounds: tuple[float, float], n_eff: float,
                   confidence: float) -> Part:
    low, high = constant_interval(value, bounds, n_eff, confidence)
    se = _arm_se(value, low, high, confidence)
    return Part(value, (low + high) / 2.0, se, low, high, math.inf, "constant-bound",
                ("constant_fallback",))


def _t_part(value: float, center: float, se: float, df: float, bounds: Bounds,
            confidence: float, method: str) -> Part:
    crit = t_quantile(confidence, df)
    low, high = _clip(center - crit * se, center + crit * se, bounds)
    # for combining: the longer arm from the value over t (se itself when centered)
    return Part(value, center, se + abs(value - center) / crit, low, high, df, method)


def adjusted_t(x: FloatArray, value: float, bounds: tuple[float, float],
               confidence: float) -> Part:
    """The t interval with half a pseudo-observation at each end of ``bounds``
    (module docstring); ``x`` not constant, n >= 2."""
    lo, hi = bounds
    span = hi - lo
    n = x.size
    u = (x - lo) / span
    m = (float(np.sum(u)) + 0.5) / (n + 1)
    v = (float(np.sum((u - m) ** 2)) + 0.5 * (m * m + (1.0 - m) ** 2)) / n
    return _t_part(value, lo + span * m, span * math.sqrt(v / (n + 1)), float(n - 1),
                   bounds, confidence, "t-adjusted")


def _iid(x: FloatArray, value: float, bounds: Bounds, confidence: float,
         adjust: bool = True) -> Part:
    """The unclustered interval of ``x`` (n >= 2); ``adjust=False``: the plain t
    clipped to the range instead of the adjusted t."""
    n = x.size
    constant = is_constant(x, bounds)
    if bounds is not None and bool(np.all((x == bounds[0]) | (x == bounds[1]))):
        p = (value - bounds[0]) / (bounds[1] - bounds[0])
        return _wilson_part(value, min(max(p, 0.0), 1.0), float(n), bounds, confidence,
                            "wilson")
    if constant:
        if bounds is None:
            return Part(value, value, 0.0, None, None, None, "t", ("constant_unbounded",))
        return _constant_part(value, bounds, float(n), confidence)
    if bounds is not None and adjust:
        return adjusted_t(x, value, bounds, confidence)
    mv = mean_variance(x)
    assert mv.variance is not None and mv.df is not None
    return _t_part(value, value, math.sqrt(mv.variance), mv.df, bounds, confidence, "t")


def _clustered(x: FloatArray, value: float, codes: IntArray, n_clusters: int,
               bounds: Bounds, confidence: float) -> Part:
    """The cluster-robust interval of ``x`` (n >= 2, n_clusters >= 2), before the
    i.i.d. floor."""
    n = x.size
    binary = bounds is not None and bool(np.all((x == bounds[0]) | (x == bounds[1])))
    constant = is_constant(x, bounds)
    if binary or (constant and bounds is not None):
        assert bounds is not None
        span = bounds[1] - bounds[0]
        p = min(max((value - bounds[0]) / span, 0.0), 1.0)
        mv = mean_variance((x - bounds[0]) / span, codes, n_clusters)
        df = mv.df if mv.df is not None else float(n_clusters - 1)
        if binary:
            n_eff = kg_effective_n(p, mv.variance or 0.0, n, n_clusters, df, confidence)
            return _wilson_part(value, p, n_eff, bounds, confidence, "wilson-korn-graubard")
        return _constant_part(value, bounds, n_clusters * df_factor(n, df, confidence),
                              confidence)
    if constant:
        return Part(value, value, 0.0, None, None, None, "t-cr2", ("constant_unbounded",))
    mv = mean_variance(x, codes, n_clusters)
    assert mv.variance is not None and mv.df is not None
    return _t_part(value, value, math.sqrt(mv.variance), mv.df, bounds, confidence, "t-cr2")


def one_sample(x: FloatArray, codes: IntArray | None, n_clusters: int, bounds: Bounds,
               confidence: float, adjust: bool = True) -> Part:
    """The estimate of the mean of ``x`` (shape (n,), n >= 1, values inside ``bounds``)
    with cluster ``codes`` (0..n_clusters-1) or None (module docstring); ``adjust``:
    whether non-constant, non-0/1 values get the adjusted t (else the plain t)."""
    value = float(x[0]) if bool(np.all(x == x[0])) else seq_mean(x)
    if x.size == 1:
        return Part(value, value, None, None, None, None, "none", ("n_1",))
    iid = _iid(x, value, bounds, confidence, adjust)
    if codes is None:
        return iid
    if n_clusters < 2:
        method = "wilson-korn-graubard" if iid.method == "wilson" else "t-cr2"
        return Part(value, value, None, None, None, None, method, ("one_cluster",))
    part = _clustered(x, value, codes, n_clusters, bounds, confidence)
    flags = list(part.flags)
    if n_clusters < FEW_CLUSTERS:
        flags.append("few_clusters")
    if iid.width > part.width:
        part = replace(part, center=iid.center, se=iid.se, low=iid.low, high=iid.high,
                       df=iid.df)
        flags.append("iid_floor")
    return replace(part, flags=tuple(dict.fromkeys(flags)))
