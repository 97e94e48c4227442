"""Intervals for proportions and for constant data: Wilson score, Korn–Graubard
effective sample size, and the "none of n differ" bound.

* Wilson (1927), "Probable inference, the law of succession, and statistical
  inference", JASA 22: the set of p whose score test does not reject ``p_hat``:
  ``(p_hat + z²/2n ± z sqrt(p_hat(1-p_hat)/n + z²/4n²)) / (1 + z²/n)``. At 0/n it is
  ``[0, z²/(n + z²)]``, never of width 0.
* Korn & Graubard (1998), "Confidence intervals for proportions with small expected
  number of positive counts estimated from survey data", Survey Methodology 24(2):
  a clustered proportion uses the effective sample size ``n_eff = p_hat(1-p_hat)/SE²``
  (SE the cluster-robust standard error; at most n), multiplied by
  ``(t_{n-1} / t_df)²`` so that the interval's width reflects the df of the
  cluster-robust variance. Wilson, not Korn & Graubard's Clopper–Pearson, is the
  interval on n_eff (Dean & Pagano 2015, "Evaluating confidence interval methods for
  binomial proportions in clustered surveys", J. Survey Stat. Methodol., compare
  both); the coverage study (bench/bench_coverage.py) found Clopper–Pearson over 99 %
  at 5 clusters.
* Rare outcomes: df is at most ``3 m_eff`` (at least 1), with
  ``m_eff = min(p_hat, 1-p_hat) * min(n, p_hat(1-p_hat)/SE²)`` the effective number of
  the rarer outcome. The cluster-robust variance of a rare proportion is a sum of the
  contributions of the few clusters that hold the rarer outcome; if each is a
  one-df term, Satterthwaite (1946) gives ``df = (sum v_g)² / sum(v_g²/3)`` (3 = the
  second moment of a chi-square on 1 df), which is ``3 m`` for m equal contributions,
  and ``m_eff`` is m when each such cluster holds one of them. The Bell–McCaffrey df
  (from the cluster sizes alone) cannot see this. Chosen by the coverage study: with
  20 clusters, p = 0.05 and intra-cluster correlation 0.5 the effective-n Wilson
  interval covered 88 % without the bound (docs/intervals.md).
* Constant data (every value equals c, in a declared range [lo, hi]): the fraction q of
  the population that differs from c is a proportion observed as 0 of n, so with the
  Wilson bound ``q <= q_u = z²/(n + z²)`` the mean lies in
  ``[c - q_u (c - lo), c + q_u (hi - c)]``. At c = lo or c = hi this is exactly the
  Wilson interval of 0/n or n/n.
"""

from __future__ import annotations

import functools
import math

from heritage_eval.stats.student_t import normal_quantile, student_t_quantile

__all__ = ["constant_interval", "kg_effective_n", "rare_outcome_df", "t_quantile",
           "wilson_interval", "z_quantile"]


@functools.lru_cache(maxsize=4096)
def t_quantile(confidence: float, df: float) -> float:
    """Two-sided critical value ``t_{df, (1+confidence)/2}`` (the normal one for an
    infinite df). ``df`` > 0; computed without scipy (:mod:`.student_t`)."""
    if math.isinf(df):
        return z_quantile(confidence)
    return student_t_quantile(0.5 + confidence / 2.0, df)


@functools.lru_cache(maxsize=64)
def z_quantile(confidence: float) -> float:
    """Two-sided normal critical value ``z_{(1+confidence)/2}`` (1.959964 at 0.95)."""
    return normal_quantile(0.5 + confidence / 2.0)


def wilson_interval(p_hat: float, n_eff: float, confidence: float) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p_hat`` in [0, 1] from ``n_eff`` > 0
    (effective) observations; ``(low, high)`` in [0, 1], low = 0 exactly at p_hat = 0 and
    high = 1 exactly at p_hat = 1 (module docstring)."""
    z = z_quantile(confidence)
    z2n = z * z / n_eff
    center = (p_hat + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p_hat * (1.0 - p_hat) / n_eff + z2n / (4.0 * n_eff))
    low = 0.0 if p_hat <= 0.0 else max(0.0, center - half)
    high = 1.0 if p_hat >= 1.0 else min(1.0, center + half)
    return low, high


def zero_of_n_upper(n_eff: float, confidence: float) -> float:
    """Wilson upper bound ``z²/(n_eff + z²)`` of a proportion observed as 0 of n_eff."""
    z2 = z_quantile(confidence) ** 2
    return z2 / (n_eff + z2)


def constant_interval(c: float, bounds: tuple[float, float], n_eff: float,
                      confidence: float) -> tuple[float, float]:
    """Interval for the mean of data whose ``n_eff`` (effective) values all equal ``c``
    inside ``bounds = (lo, hi)``: ``[c - q_u (c - lo), c + q_u (hi - c)]`` with
    ``q_u`` the Wilson upper bound of 0 of n_eff (module docstring)."""
    lo, hi = bounds
    q = zero_of_n_upper(n_eff, confidence)
    return c - q * (c - lo), c + q * (hi - c)


def df_factor(n: int, df: float, confidence: float) -> float:
    """``(t_{n-1} / t_df)²``: the Korn–Graubard degrees-of-freedom factor (<= 1 when
    df <= n - 1); 1.0 for n < 2."""
    if n < 2:
        return 1.0
    return (t_quantile(confidence, float(n - 1)) / t_quantile(confidence, df)) ** 2


def rare_outcome_df(p_hat: float, variance: float, n: int, df: float) -> float:
    """The df of a clustered proportion's variance, at most ``3 m_eff`` (and at least 1;
    never above ``df``) with ``m_eff = min(p_hat, 1-p_hat) * min(n, p_hat(1-p_hat)/
    variance)`` the effective number of the rarer outcome (module docstring). ``df``
    unchanged when p_hat is 0 or 1 or the variance is 0."""
    if not (0.0 < p_hat < 1.0 and variance > 0.0):
        return df
    m_eff = min(p_hat, 1.0 - p_hat) * min(float(n), p_hat * (1.0 - p_hat) / variance)
    return min(df, max(1.0, 3.0 * m_eff))


def kg_effective_n(p_hat: float, variance: float, n: int, n_clusters: int, df: float,
                   confidence: float) -> float:
    """Korn–Graubard effective sample size of a clustered proportion.

    ``p_hat`` in [0, 1]; ``variance``: the cluster-robust variance of p_hat; ``n``
    observations in ``n_clusters`` clusters; ``df``: the variance's degrees of freedom
    (Bell–McCaffrey). ``n_eff = min(n, p_hat(1-p_hat)/variance) * (t_{n-1}/t_df')²``
    with ``df' = min(df, max(1, 3 m_eff))`` (:func:`rare_outcome_df`). When p_hat is 0
    or 1 (or the variance is 0) the design effect cannot be estimated: the conservative
    choice ``n_eff = n_clusters * (t_{n-1}/t_df)²`` (each cluster counted once), picked
    by the coverage study (bench/bench_coverage.py).
    """
    if 0.0 < p_hat < 1.0 and variance > 0.0:
        factor = df_factor(n, rare_outcome_df(p_hat, variance, n, df), confidence)
        return min(float(n), p_hat * (1.0 - p_hat) / variance) * factor
    return float(n_clusters) * df_factor(n, df, confidence)
