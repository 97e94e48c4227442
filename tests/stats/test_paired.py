"""paired_difference: expected values enumerated by hand in comments, or recomputed with
scipy.stats.permutation_test / scipy.stats.t (the reference implementations)."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest
import scipy.stats

from heritage_eval.stats import (
    PairedComparison,
    macro_mean_estimate,
    mean_estimate,
    paired_difference,
)

Z = float(scipy.stats.norm.ppf(0.975))

RNG_KW = "rng" if "rng" in inspect.signature(scipy.stats.permutation_test).parameters else (
    "random_state"
)


def _scipy_p(d: list[float], seed: int = 0, n_resamples: int = 2000) -> float:
    """Reference: scipy's paired (sign-flip) permutation test of the mean difference."""
    res = scipy.stats.permutation_test(
        (np.asarray(d, dtype=float),), lambda x, axis=-1: np.mean(x, axis=axis),
        permutation_type="samples", vectorized=True, n_resamples=n_resamples,
        alternative="two-sided", **{RNG_KW: np.random.default_rng(seed)},
    )
    return float(res.pvalue)


def test_difference_by_hand() -> None:
    # a = [1,0,1,1,0,1] (mean 4/6), b = [0,0,1,0,1,0] (mean 2/6): d = [1,0,0,1,-1,1],
    # mean difference 2/6 = 1/3.
    r = paired_difference([1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 1, 0])
    assert r.difference == pytest.approx(1 / 3)
    assert r.n == 6 and r.n_clusters is None
    assert r.method == "paired-t+sign-flip-permutation"
    # Plain Student t on the differences (reference: scipy.stats.t.interval with the
    # standard error of the mean), clipped to the differences' range [-1, 1].
    d = [1, 0, 0, 1, -1, 1]
    lo, hi = scipy.stats.t.interval(0.95, 5, loc=np.mean(d), scale=scipy.stats.sem(d))
    assert r.ci_low == pytest.approx(max(-1.0, lo)) and r.ci_high == pytest.approx(min(1.0, hi))


def test_exact_p_value_all_positive_differences() -> None:
    # d = [1,1,1,1,1]: 2^5 = 32 <= 2000 sign vectors, enumerated exactly. Only the
    # identity reaches mean 1, so P(T* >= 1) = 1/32 and two-sided p = 2/32 = 0.0625.
    r = paired_difference([1] * 5, [0] * 5)
    assert r.p_value == pytest.approx(0.0625)
    assert r.p_value == pytest.approx(_scipy_p([1.0] * 5))
    # Constant difference 1 = the top of [-1, 1]: Wilson's 5/5 on the rescaled scale,
    # [-1 + 2 * 5/(5 + z²), 1], never [1, 1].
    assert (r.difference, r.ci_high) == (1.0, 1.0)
    assert r.ci_low == pytest.approx(-1 + 2 * 5 / (5 + Z * Z))


def test_exact_p_value_matches_scipy_on_mixed_differences() -> None:
    # n = 8: 256 sign vectors, exact. Reference value from scipy.stats.permutation_test.
    a = [0.9, 0.8, 0.4, 1.0, 0.85, 0.7, 0.2, 0.6]
    b = [0.4, -0.2, 0.65, -1.0, 0.1, -0.8, 1.2, 0.1]
    d = [x - y for x, y in zip(a, b, strict=True)]
    r = paired_difference(a, b, bounds=(-1.0, 1.2))
    assert r.p_value == pytest.approx(_scipy_p(d), abs=1e-15)
    # Singleton clusters run the numpy sign-flip path: same exact enumeration, same p.
    rc = paired_difference(a, b, clusters=list(range(8)), bounds=(-1.0, 1.2))
    assert rc.p_value == pytest.approx(r.p_value, abs=1e-15)
    assert rc.method == "paired-t-cr2+cluster-sign-flip-permutation"


def test_monte_carlo_p_value_matches_scipy_within_sampling_error() -> None:
    # n = 20: 2^20 > 2000, so both scipy and the numpy sign-flip are Monte-Carlo with the
    # (count + 1)/(B + 1) convention; the numpy path (singleton clusters) draws other
    # signs, so agreement is within Monte-Carlo error (sd <= sqrt(.25/2000) ~ .011).
    rng = np.random.default_rng(8)
    a = rng.random(20).round(2).tolist()
    b = (np.asarray(a) - 0.1 + rng.normal(0, 0.3, 20)).round(2).tolist()
    d = [x - y for x, y in zip(a, b, strict=True)]
    r = paired_difference(a, b, seed=4, bounds=None)
    assert r.p_value == pytest.approx(_scipy_p(d, seed=4), abs=1e-15)
    rc = paired_difference(a, b, clusters=list(range(20)), seed=4, bounds=None)
    assert rc.p_value is not None and r.p_value is not None
    assert rc.p_value == pytest.approx(r.p_value, abs=0.05)
    assert rc.p_value >= 1 / 2001


@pytest.mark.filterwarnings("error")
def test_identical_inputs() -> None:
    # d = 0 everywhere: difference 0, every sign flip gives 0 -> p = 1. The interval is
    # not [0, 0]: the share q of samples on which the systems could differ is "0 of 5"
    # with Wilson bound q <= z²/(5 + z²), and |mean d| <= q * 1.
    a = [1, 0, 1, 1, 0]
    q = Z * Z / (5 + Z * Z)
    r = paired_difference(a, a)
    assert (r.difference, r.p_value, r.flags) == (0.0, 1.0, ("constant_fallback",))
    assert (r.ci_low, r.ci_high) == (pytest.approx(-q), pytest.approx(q))
    for r in (paired_difference(a, a, clusters=[1, 1, 2, 2, 3]),
              paired_difference(a, a, groups=list("xxyyy"))):
        assert (r.difference, r.p_value) == (0.0, 1.0)
        assert r.ci_low is not None and r.ci_high is not None
        assert r.ci_low < 0.0 < r.ci_high


def test_clustered_sign_flip_enumerated_by_hand() -> None:
    # d by cluster: X [1, 1], Y [1, 0], Z [0, 1]; cluster sums S = (2, 1, 1), N = 6,
    # observed T = 4/6. The 8 sign vectors give N*T* = 4, 2, 2, 0, 0, -2, -2, -4:
    # P(T* >= 4/6) = 1/8, P(T* <= 4/6) = 1, p = 2/8 = 0.25.
    # Unclustered, d = [1,1,1,0,0,1]: T* reaches 4/6 only when all 4 nonzero are positive:
    # 2^2 of the 64 vectors (the zeros' signs are free) -> 1/16, p = 2/16 = 0.125.
    a = [1, 1, 1, 0, 0, 1]
    b = [0, 0, 0, 0, 0, 0]
    clusters = ["X", "X", "Y", "Y", "Z", "Z"]
    rc = paired_difference(a, b, clusters=clusters)
    assert rc.difference == pytest.approx(4 / 6)
    assert rc.p_value == pytest.approx(0.25)
    assert rc.n_clusters == 3
    assert paired_difference(a, b).p_value == pytest.approx(0.125)


def test_grouped_macro_difference_and_p_value_by_hand() -> None:
    # Group G1 d = [1,0,0,1] (mean .5), G2 d = [1,1] (mean 1): macro difference .75
    # (pooled would be 4/6). Statistic weights 1/(G*n_g): G1 1/8, G2 1/4, so the unit
    # contributions are 1/8, 0, 0, 1/8, 1/4, 1/4. Only all four nonzero positive reach .75:
    # 2^2 of 64 vectors -> 1/16; two-sided p = 1/8.
    a = [1, 0, 0, 1, 1, 1]
    b = [0, 0, 0, 0, 0, 0]
    r = paired_difference(a, b, groups=["G1"] * 4 + ["G2"] * 2)
    assert r.difference == pytest.approx(0.75)
    assert r.p_value == pytest.approx(0.125)
    assert r.method == "paired-stratified-welch-t+sign-flip-permutation"
    assert r.ci_low is not None and r.ci_high is not None
    assert r.ci_low <= 0.75 <= r.ci_high


def test_interval_is_that_of_the_differences_on_their_range() -> None:
    # Documented property: the interval is mean_estimate(a - b) on [lo - hi, hi - lo].
    a = [0.9, 0.8, 0.4, 1.0, 0.85, 0.7, 0.2, 0.6, 0.3, 0.95]
    b = [0.5, 0.8, 0.6, 0.7, 0.85, 0.2, 0.1, 0.65, 0.3, 0.5]
    d = [x - y for x, y in zip(a, b, strict=True)]
    r = paired_difference(a, b, seed=9)
    est = mean_estimate(d, bounds=(-1.0, 1.0), adjust=False)
    assert (r.difference, r.ci_low, r.ci_high) == (est.value, est.ci_low, est.ci_high)
    g = list("xxxxxyyyyy")
    rg = paired_difference(a, b, groups=g)
    eg = macro_mean_estimate(d, g, bounds=(-1.0, 1.0), adjust=False)
    assert (rg.ci_low, rg.ci_high) == (eg.ci_low, eg.ci_high)
    # Scores on 0-10 declare it; the differences then live on [-10, 10].
    r10 = paired_difference([10 * x for x in a], [10 * x for x in b], bounds=(0.0, 10.0))
    assert r10.ci_low == pytest.approx(10 * r.ci_low)  # type: ignore[operator]
    with pytest.raises(ValueError, match=r"a\[0\] = 9.0 lies outside"):
        paired_difference([10 * x for x in a], [10 * x for x in b])


def test_degenerate_and_validation() -> None:
    assert paired_difference([], []) == PairedComparison(
        None, None, None, None, 0, None, "none", 0.95, 0, ("n_0",))
    one = paired_difference([1], [0])  # one pair: sign flips {+1, -1} -> p = 1 = 2/2^1,
    # the smallest p it can give (flag p_floor:1)
    assert (one.difference, one.p_value, one.ci_low, one.flags) == (
        1.0, 1.0, None, ("n_1", "p_floor:1"))
    with pytest.raises(ValueError, match="a has 3 scores but b has 2"):
        paired_difference([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match=r"b\[1\] is None"):
        paired_difference([1, 0], [1, None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="clusters has 1 entries"):
        paired_difference([1, 0], [1, 1], clusters=["c"])
    with pytest.raises(ValueError, match="groups has 3 entries"):
        paired_difference([1, 0], [1, 1], groups=["g", "g", "h"])


def test_deterministic_and_json_ready() -> None:
    rng = np.random.default_rng(5)
    a = rng.random(40).tolist()
    b = rng.random(40).tolist()
    c = [i // 4 for i in range(40)]
    r1 = paired_difference(a, b, clusters=c, seed=1)
    assert r1 == paired_difference(a, b, clusters=c, seed=1)
    r2 = paired_difference(a, b, clusters=c, seed=2)
    # The interval is closed-form (seed-free); only the Monte-Carlo p-value may move.
    assert (r2.ci_low, r2.ci_high) == (r1.ci_low, r1.ci_high)
    d = r1.to_dict()
    assert list(d) == ["difference", "ci_low", "ci_high", "p_value", "n", "n_clusters",
                       "method", "confidence", "n_resamples", "flags"]
    # 10 clusters: flagged; 2^10 = 1024 <= 2000 sign vectors, enumerated (no draws).
    assert d["flags"][0] == "few_clusters" and d["n_resamples"] == 0
    assert json.dumps(d, allow_nan=False) == json.dumps(r1.to_dict(), allow_nan=False)


def test_performance_sanity_10000_pairs_in_500_clusters() -> None:
    # Not a timing assertion: 10,000 pairs in 500 clusters and 9 groups, 2000 sign flips.
    rng = np.random.default_rng(11)
    a = (rng.random(10_000) < 0.62).astype(float)
    b = (rng.random(10_000) < 0.58).astype(float)
    clusters = np.repeat(np.arange(500), 20).tolist()
    groups = [c % 9 for c in clusters]
    for r in (paired_difference(a, b, clusters), paired_difference(a, b, clusters, groups)):
        assert r.n == 10_000 and r.n_clusters == 500
        assert r.p_value is not None and 0.0 < r.p_value <= 1.0
        assert r.ci_low is not None and r.ci_high is not None and r.difference is not None
        assert r.ci_low < r.difference < r.ci_high
