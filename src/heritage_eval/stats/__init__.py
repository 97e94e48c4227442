"""Statistics carried by every headline number: standard errors, intervals that never
collapse, paired comparisons (rules and sources in docs/intervals.md).

* :func:`mean_estimate` — mean with SE and interval: Wilson for proportions
  (Korn–Graubard effective n when clustered), Student t / CR2 for bounded scores, a
  bound for constant data; n == 1 has no interval.
* :func:`macro_mean_estimate` — unweighted mean of group means (e.g. Ancient-Bench
  "Overall" over media): Welch–Satterthwaite t over the groups' standard errors.
* :func:`paired_difference` — two systems on the same samples: mean difference with
  the same interval machinery on the differences, sign-flip permutation p-value.

Results are frozen dataclasses (:class:`Estimate`, :class:`PairedComparison`) that never
hold NaN (undefined parts are None), carry ``flags`` naming the conditions a reader
must know (``n_1``, ``few_clusters``, ``one_sample_group:<names>`` …), and are
deterministic (no random draw behind any interval).
"""

from heritage_eval.stats.estimate import Estimate
from heritage_eval.stats.intervals import macro_mean_estimate, mean_estimate
from heritage_eval.stats.paired import PairedComparison, paired_difference

__all__ = [
    "Estimate",
    "PairedComparison",
    "macro_mean_estimate",
    "mean_estimate",
    "paired_difference",
]
