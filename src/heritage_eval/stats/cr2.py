"""Variance of a mean, plain or cluster-robust (CR2), with its degrees of freedom.

For a mean, i.e. a regression on an intercept alone (X'X = N, hat-matrix block of
cluster g ``H_gg = (n_g/N) J``), the bias-reduced linearisation ("CR2") variance of
Bell & McCaffrey (2002), "Bias reduction in standard errors for linear regression with
multi-stage samples", Survey Methodology 28(2), is

    V = sum_g T_g² / (1 - n_g/N) / N²,    T_g = sum_{i in g} (x_i - mean)

(``(I - H_gg)^{-1/2}`` scales the cluster's residual total by ``(1 - n_g/N)^{-1/2}``).
With one observation per cluster it is the textbook ``s²/N``; with equal cluster sizes
it equals the CR1 variance ``G/(G-1) sum_g T_g² / N²`` (Cameron & Miller 2015).

Degrees of freedom: the Bell–McCaffrey Satterthwaite approximation under i.i.d. errors,
``df = tr(B)² / tr(B²)`` with ``B = M W M`` (Imbens & Kolesár 2016, "Robust standard
errors in small samples: some practical advice", REStat 98(4), who recommend it for
few or unequal clusters). For the mean, with ``c_g = 1/(N²(1 - n_g/N))``:
``tr(B) = 1/N`` and ``tr(B²) = sum c_g² n_g² - 2 sum c_g² n_g³/N + (sum c_g n_g²)²/N²``.
It equals G - 1 for equal cluster sizes (n - 1 unclustered) and is smaller otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from heritage_eval.stats.inputs import FloatArray, IntArray

__all__ = ["MeanVariance", "mean_variance"]


@dataclass(frozen=True)
class MeanVariance:
    """``variance`` of the mean (units²; None when undefined: n < 2, or one cluster)
    and its degrees of freedom ``df`` (None with it)."""

    variance: float | None
    df: float | None


def mean_variance(x: FloatArray, codes: IntArray | None = None,
                  n_clusters: int = 0) -> MeanVariance:
    """Variance of the mean of ``x`` (shape (n,)): ``s²/n`` on n - 1 df without
    ``codes``; with ``codes`` (cluster code 0..n_clusters-1 per value) the CR2 variance
    on Bell–McCaffrey df (module docstring). Undefined (None, None) for n < 2 or a
    single cluster."""
    n = x.size
    if codes is None:
        if n < 2:
            return MeanVariance(None, None)
        return MeanVariance(float(np.var(x, ddof=1)) / n, float(n - 1))
    if n_clusters < 2:
        return MeanVariance(None, None)
    resid = x - float(np.mean(x))
    totals = np.bincount(codes, weights=resid, minlength=n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    keep = 1.0 - sizes / n
    variance = float(np.sum(totals * totals / keep)) / (n * n)
    c = 1.0 / (n * n * keep)
    tr_b = 1.0 / n
    tr_b2 = (float(np.sum(c * c * sizes * sizes)) - 2.0 * float(np.sum(c * c * sizes ** 3)) / n
             + float(np.sum(c * sizes * sizes)) ** 2 / (n * n))
    df = tr_b * tr_b / tr_b2 if tr_b2 > 0.0 else float(n_clusters - 1)
    df = min(max(df, 1.0), float(n_clusters - 1)) if math.isfinite(df) else 1.0
    return MeanVariance(max(variance, 0.0), df)
