"""Means and macro means with a standard error and a 95 % interval that never
collapses: the public estimators (rules in docs/intervals.md).

* :func:`mean_estimate` — one sample's mean: Wilson for proportions (Korn–Graubard
  effective n when clustered), Student t / CR2 for bounded scores, a bound for constant
  data (:mod:`.single`).
* :func:`macro_mean_estimate` — the unweighted mean of group means: standard error
  ``sqrt(sum_g se_g²) / K`` over K groups with Welch–Satterthwaite df (Welch 1947,
  "The generalization of Student's problem when several different population variances
  are involved", Biometrika 34; Satterthwaite 1946, Biometrics Bulletin 2(6)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from heritage_eval.stats.estimate import Estimate
from heritage_eval.stats.inputs import (
    Bounds,
    FloatArray,
    IntArray,
    Labels,
    Values,
    as_codes,
    as_values,
    check_bounds,
    check_confidence,
    first_labels,
    fit_to_bounds,
    is_constant,
    seq_mean,
)
from heritage_eval.stats.proportion import t_quantile
from heritage_eval.stats.single import Part, adjusted_t, one_sample

__all__ = ["MAX_NAMED_GROUPS", "UNIT", "Estimate", "macro_mean_estimate", "mean_estimate",
           "one_sample_group_flag"]

#: The default declared range of a metric: a fraction.
UNIT: tuple[float, float] = (0.0, 1.0)
#: At most this many group names are listed in a ``one_sample_group:`` flag.
MAX_NAMED_GROUPS = 10


def one_sample_group_flag(names: Sequence[str]) -> str:
    """``one_sample_group:<names>``: the first :data:`MAX_NAMED_GROUPS` names
    comma-separated, then ``+<k> more`` for the k others (so that thousands of
    one-observation groups give a short flag). ``names`` non-empty."""
    shown = list(names[:MAX_NAMED_GROUPS])
    if len(names) > MAX_NAMED_GROUPS:
        shown.append(f"+{len(names) - MAX_NAMED_GROUPS} more")
    return "one_sample_group:" + ",".join(shown)


def _none(confidence: float, method: str = "none") -> Estimate:
    return Estimate(None, 0, None, None, None, method, confidence, 0, None, None, ("n_0",))


def _to_estimate(part: Part, n: int, n_clusters: int | None, confidence: float,
                 se: float | None = None) -> Estimate:
    low, high = part.low, part.high
    if low is not None and high is not None:  # rounding must not exclude the value
        low, high = min(low, part.value), max(high, part.value)
    return Estimate(part.value, n, part.se if se is None else se, low, high, part.method,
                    confidence, 0, n_clusters,
                    None if part.df is None or math.isinf(part.df) else part.df, part.flags)


def _prepare(values: Values, bounds: Bounds, confidence: float) -> tuple[FloatArray, Bounds]:
    check_confidence(confidence)
    b = check_bounds(bounds)
    return fit_to_bounds(as_values(values), b), b


def mean_estimate(
    values: Values,
    clusters: Labels | None = None,
    *,
    bounds: Bounds = UNIT,
    confidence: float = 0.95,
    n_resamples: int = 0,
    seed: int = 0,
    adjust: bool = True,
) -> Estimate:
    """Mean of ``values`` (shape (n,), inside ``bounds``) with SE and interval.

    ``bounds``: the metric's declared range (default [0, 1]; None: unbounded). Values
    at the ends of the range only (0/1 accuracy) get the Wilson interval, others the
    Student t interval clipped to the range; with ``clusters`` (one hashable label per
    value) the Korn–Graubard / CR2 versions, never narrower than the unclustered
    interval. Constant data (``max - min`` within 1e-12 of the scale:
    :func:`~.inputs.is_constant`) get the "none of n differ" bound. Methods "wilson",
    "wilson-korn-graubard", "t", "t-cr2", "constant-bound" (docs/intervals.md).

    Degenerate cases: n == 0 gives value, stderr and interval None (flag ``n_0``, method
    "none"); n == 1 gives the value and no interval (flag ``n_1``); one cluster gives no
    interval (``one_cluster``). ``n_resamples`` and ``seed`` are accepted for
    compatibility and unused: no interval is drawn at random. ``adjust=False`` replaces
    the adjusted t by the plain t clipped to the range (paired differences, whose
    spread is small against their range [-1, 1]: the coverage study found the
    pseudo-observations over-cover there).

    Raises ValueError for None/NaN/infinite/non-numeric values (naming the position),
    a value outside ``bounds``, malformed ``bounds``, a clusters length mismatch or
    confidence outside (0, 1).
    """
    del n_resamples, seed
    x, b = _prepare(values, bounds, confidence)
    codes, n_clusters = (None, 0) if clusters is None else as_codes(clusters, "clusters", x.size)
    if x.size == 0:
        return _none(confidence)
    part = one_sample(x, codes, n_clusters, b, confidence, adjust)
    return _to_estimate(part, int(x.size), n_clusters if codes is not None else None,
                        confidence)


def _group_part(xg: FloatArray, cg: IntArray | None, b: Bounds, confidence: float,
                adjust: bool = True) -> tuple[Part, int, bool]:
    """The part of one group, its cluster count, and whether it is a one-sample group
    (one observation, or one cluster): its variance is then the largest the range
    allows, ``(hi - lo)² / 4``, known rather than estimated (df inf)."""
    n_cl = 0
    codes = None
    if cg is not None:
        _, inv = np.unique(cg, return_inverse=True)
        codes = inv.astype(np.intp).reshape(-1)
        n_cl = int(codes.max()) + 1
    one = xg.size == 1 or (codes is not None and n_cl == 1)
    if one:
        value = seq_mean(xg)
        se = None if b is None else (b[1] - b[0]) / 2.0
        return Part(value, value, se, None, None, math.inf, "none"), n_cl, True
    if codes is None and b is not None and adjust and not is_constant(xg, b):
        # 0/1 groups too: Wilson's asymmetric arms do not add up; the adjusted t does
        return adjusted_t(xg, seq_mean(xg), b, confidence), n_cl, False
    return one_sample(xg, codes, n_cl, b, confidence, adjust), n_cl, False


def macro_mean_estimate(
    values: Values,
    groups: Labels,
    clusters: Labels | None = None,
    *,
    bounds: Bounds = UNIT,
    confidence: float = 0.95,
    n_resamples: int = 0,
    seed: int = 0,
    group_names: Sequence[str] | None = None,
    adjust: bool = True,
) -> Estimate:
    """Unweighted mean over groups of each group's mean, with SE and interval.

    E.g. Ancient-Bench "Overall" (mean of the 9 media) or HCSU "Avg. Acc" (mean of Bei
    and Tie). ``values``, ``groups`` and ``clusters`` have shape (n,); ``n`` in the
    result counts observations; units are those of the values; ``bounds`` as in
    :func:`mean_estimate`. Clusters are nested in groups: a label seen in two groups
    counts as two clusters, and ``n_clusters`` counts these (group, cluster) units.

    Each group's mean gets its own standard error: unclustered and not constant, that of
    the adjusted t interval (0/1 groups included; SE plus the shift of its center over
    t, on n_g - 1 df); clustered, the rules of :func:`mean_estimate` (CR2: its SE and
    df; Korn–Graubard Wilson: the longer arm over z, df inf); constant up to rounding
    (:func:`~.inputs.is_constant`), the longer arm of the constant bound over z. A group
    with one observation (or one cluster) contributes the largest variance its range
    allows, ``((hi - lo)/2)²`` (flag ``one_sample_group:<names>``, at most
    :data:`MAX_NAMED_GROUPS` names then ``+<k> more``; no interval without bounds).
    ``SE = sqrt(sum_g se_g²) / K``; the interval is ``value ± t_df SE`` with
    Welch–Satterthwaite ``df = (sum se_g²)² / sum(se_g⁴ / df_g)``, clipped to the range.
    One group: the :func:`mean_estimate` of that group. Flags of the groups
    (``few_clusters``, ``iid_floor``, ``constant_fallback``) are carried over.
    ``group_names``: display names when ``groups`` are integer codes (``group_names[c]``
    names code c in flags); otherwise the labels themselves are used. ``adjust`` as in
    :func:`mean_estimate`.
    Methods "stratified-welch-t" and "stratified-cluster-welch-t".

    Raises ValueError as :func:`mean_estimate` does, and for a groups length mismatch.
    """
    del n_resamples, seed
    x, b = _prepare(values, bounds, confidence)
    gcodes, k = as_codes(groups, "groups", x.size)
    ccodes = None if clusters is None else as_codes(clusters, "clusters", x.size)[0]
    method = "stratified-cluster-welch-t" if ccodes is not None else "stratified-welch-t"
    if x.size == 0:
        return _none(confidence, method)
    if k == 1:
        return mean_estimate(x, ccodes, bounds=b, confidence=confidence, adjust=adjust)
    labels = first_labels(groups, gcodes, k)
    parts: list[Part] = []
    one_names: list[str] = []
    units = 0
    for g in range(k):
        mask = gcodes == g
        part, n_cl, one = _group_part(x[mask], None if ccodes is None else ccodes[mask], b,
                                      confidence, adjust)
        parts.append(part)
        units += n_cl
        if one:
            lab = labels[g]
            name = (group_names[lab] if group_names is not None and isinstance(lab, int)
                    and 0 <= lab < len(group_names) else str(lab))
            one_names.append(name)
    value = sum(p.value for p in parts) / k
    flags = [f for p in parts for f in p.flags if not f.startswith("n_")]
    if one_names:
        flags.append(one_sample_group_flag(one_names))
    n_clusters = units if ccodes is not None else None
    ses = [p.se for p in parts]
    if any(s is None for s in ses):  # unbounded one-sample group, or no interval
        return Estimate(value, int(x.size), None, None, None, method, confidence, 0,
                        n_clusters, None, tuple(dict.fromkeys(flags)))
    var = [float(s) ** 2 for s in ses if s is not None]
    total = math.fsum(var)
    se = math.sqrt(total) / k
    if total == 0.0:  # every group constant and unbounded
        return Estimate(value, int(x.size), 0.0, None, None, method, confidence, 0,
                        n_clusters, None, tuple(dict.fromkeys(flags)))
    denom = math.fsum(v * v / p.df for v, p in zip(var, parts, strict=True)
                      if p.df is not None and not math.isinf(p.df))
    df = total * total / denom if denom > 0.0 else math.inf
    half = t_quantile(confidence, df) * se
    low, high = value - half, value + half
    if b is not None:
        low, high = max(low, b[0]), min(high, b[1])
    return Estimate(value, int(x.size), se, min(low, value), max(high, value), method,
                    confidence, 0, n_clusters, None if math.isinf(df) else df,
                    tuple(dict.fromkeys(flags)))
