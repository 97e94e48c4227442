"""The result type of every interval: :class:`Estimate`, and the flags it may carry.

Flags (``Estimate.flags``; docs/intervals.md explains each):

* ``n_0`` — no observation: value, stderr and interval are None.
* ``n_1`` — one observation: the value is that observation, there is no interval.
* ``constant_fallback`` — n >= 2 values all equal up to rounding (``max - min`` within
  1e-12 of the scale, :func:`~.inputs.is_constant`; an interval from the sample variance
  would have width 0 or the width of rounding noise): the interval bounds how much of
  the population can differ from the constant, by the Wilson bound of "0 of n differ"
  (see :mod:`.proportion`).
* ``constant_unbounded`` — as above but without a declared range: no interval.
* ``few_clusters`` — clustered with fewer than :data:`FEW_CLUSTERS` clusters: the
  interval uses small-sample corrections whose coverage is only approximate.
* ``iid_floor`` — the clustered interval came out narrower than the unclustered one;
  the wider (unclustered) interval is reported.
* ``one_cluster`` — all observations share one cluster: no cluster-robust interval.
* ``one_sample_group:<names>`` — a macro mean's group (named, comma-separated: the
  first 10, then ``+<k> more``) has one observation, or one cluster: it contributes the
  largest variance its range allows.

:class:`~.paired.PairedComparison` adds ``p_floor:<value>``: its sign-flip test cannot
give a p-value below ``<value>`` (few pairs or clusters; :mod:`.paired`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FEW_CLUSTERS", "Estimate"]

#: Fewer clusters than this are flagged ``few_clusters``.
FEW_CLUSTERS = 20


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its uncertainty. Never holds NaN: undefined parts are None.

    ``value`` is in the units of the input values (a 0/1 accuracy gives a proportion in
    [0, 1]); ``stderr``, ``ci_low`` and ``ci_high`` are in the same units, and the
    interval lies inside the declared range. ``n`` counts observations, ``n_clusters``
    the clusters (None when unclustered). ``stderr`` is the standard error the interval
    was built from: the interval's longer arm from the value over its critical value
    (s/sqrt(n) or CR2 for a centred t interval; for a Wilson or constant-bound interval
    the arm over z, so it is not 0 at 0/n). ``df``: degrees of freedom of a t interval (None for
    Wilson). ``flags``: conditions a reader must know (module docstring).
    ``n_resamples`` is kept for the summary schema and is always 0: no interval here is
    drawn at random.
    """

    value: float | None
    n: int
    stderr: float | None
    ci_low: float | None
    ci_high: float | None
    method: str
    confidence: float = 0.95
    n_resamples: int = 0
    n_clusters: int | None = None
    df: float | None = None
    flags: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with keys value, n, stderr, ci_low, ci_high, method,
        confidence, n_resamples, n_clusters, df, flags (a list of strings)."""
        return {"value": self.value, "n": self.n, "stderr": self.stderr,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "method": self.method,
                "confidence": self.confidence, "n_resamples": self.n_resamples,
                "n_clusters": self.n_clusters, "df": self.df, "flags": list(self.flags)}
