"""Statistics carried by every headline number: standard errors, bootstrap intervals,
paired comparisons.

* :func:`mean_estimate` — mean with SE (plain or cluster-robust) and percentile-bootstrap
  interval (plain or cluster bootstrap).
* :func:`macro_mean_estimate` — unweighted mean of group means (e.g. Ancient-Bench
  "Overall" over media) with a stratified bootstrap.
* :func:`paired_difference` — two systems on the same samples: mean difference, paired
  bootstrap interval, sign-flip permutation p-value.

Results are frozen dataclasses (:class:`Estimate`, :class:`PairedComparison`) that never
hold NaN (undefined parts are None) and are byte-identical for the same inputs and seed.
"""

from heritage_eval.stats.intervals import Estimate, macro_mean_estimate, mean_estimate
from heritage_eval.stats.paired import PairedComparison, paired_difference

__all__ = [
    "Estimate",
    "PairedComparison",
    "macro_mean_estimate",
    "mean_estimate",
    "paired_difference",
]
