"""mean_estimate / macro_mean_estimate: every expected value is worked out in a comment
from the published formula (Wilson 1927; Bell & McCaffrey 2002; Welch–Satterthwaite),
or recomputed with scipy.stats.t / an explicit matrix computation as the reference."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats

from heritage_eval.stats import Estimate, macro_mean_estimate, mean_estimate
from heritage_eval.stats.cr2 import mean_variance
from heritage_eval.stats.proportion import rare_outcome_df

Z = float(scipy.stats.norm.ppf(0.975))


def wilson(x: int, n: float) -> tuple[float, float]:
    """Wilson (1927) score interval written out from its formula (the reference)."""
    p = x / n
    center = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return center - half, center + half


def test_wilson_at_zero_and_all_and_inside() -> None:
    # 0/20: [0, z²/(20 + z²)] = [0, 3.8415/23.8415] = [0, 0.16113] (the example).
    e = mean_estimate([0] * 20)
    assert (e.value, e.ci_low) == (0.0, 0.0)
    assert e.ci_high == pytest.approx(Z * Z / (20 + Z * Z)) and e.ci_high == pytest.approx(
        0.16113, abs=1e-5)
    assert e.method == "wilson" and e.flags == ()
    e = mean_estimate([1] * 20)
    assert e.ci_low == pytest.approx(20 / (20 + Z * Z)) and e.ci_high == 1.0
    e = mean_estimate([1] * 7 + [0] * 13)
    lo, hi = wilson(7, 20)
    assert (e.ci_low, e.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    # SE for combining: the longer arm from 0.35 over z.
    assert e.stderr == pytest.approx(max(0.35 - lo, hi - 0.35) / Z)


def test_n_one_and_n_zero() -> None:
    e = mean_estimate([0.5])
    assert (e.value, e.ci_low, e.ci_high, e.stderr, e.flags) == (0.5, None, None, None,
                                                                 ("n_1",))
    e = mean_estimate([], clusters=[])
    assert (e.value, e.n, e.ci_low, e.flags, e.method) == (None, 0, None, ("n_0",), "none")
    m = macro_mean_estimate([1.0], ["a"])
    assert m.ci_low is None and m.flags == ("n_1",)


def test_adjusted_t_by_hand_and_plain_t_against_scipy() -> None:
    # x = [.2, .5, .9, .4] in [0, 1]: half a pseudo-observation at 0 and at 1:
    # m~ = (2.0 + .5)/5 = .5; v~ = (sum (x - .5)² + (.25 + .25)/2)/4
    #    = (.09 + 0 + .16 + .01 + .25)/4 = .1275; se = sqrt(.1275/5); t_3.
    x = [0.2, 0.5, 0.9, 0.4]
    se = math.sqrt(0.1275 / 5)
    t3 = float(scipy.stats.t.ppf(0.975, 3))
    e = mean_estimate(x)
    assert e.method == "t-adjusted" and e.df == 3.0 and e.value == pytest.approx(0.5)
    assert e.ci_low == pytest.approx(max(0.0, 0.5 - t3 * se))
    assert e.ci_high == pytest.approx(min(1.0, 0.5 + t3 * se))
    # Without a declared range: the textbook t interval (reference: scipy.stats.t).
    y = [3.0, 7.5, 1.25, 9.0, 4.0]
    e = mean_estimate(y, bounds=None)
    ref = scipy.stats.t.interval(0.95, 4, loc=np.mean(y), scale=scipy.stats.sem(y))
    assert (e.ci_low, e.ci_high) == (pytest.approx(ref[0]), pytest.approx(ref[1]))
    assert e.method == "t" and e.stderr == pytest.approx(scipy.stats.sem(y))


def test_bounds_rescale_clip_and_refuse() -> None:
    # Scores on 0-10 are the 0-1 scores times 10: the interval scales with them.
    x = [0.2, 0.5, 0.9, 0.4, 1.0, 0.0, 0.35]
    a = mean_estimate(x)
    b = mean_estimate([10 * v for v in x], bounds=(0.0, 10.0))
    assert b.ci_low == pytest.approx(10 * a.ci_low) and b.ci_high == pytest.approx(  # type: ignore[operator]
        10 * a.ci_high)  # type: ignore[operator]
    assert mean_estimate([1, 10, 10], bounds=(0, 10)).ci_high == 10.0  # clipped
    with pytest.raises(ValueError, match=r"values\[1\] = 1.5 lies outside"):
        mean_estimate([0.5, 1.5])
    assert mean_estimate([1.0 + 1e-12, 0.0]).value == pytest.approx(0.5)  # rounding
    with pytest.raises(ValueError, match="low < high"):
        mean_estimate([0.5], bounds=(1.0, 0.0))


def test_constant_data_never_collapse() -> None:
    # Ten values all .7 on [0, 1]: q = z²/(10 + z²) = .27753; [.7 - .7q, .7 + .3q].
    q = Z * Z / (10 + Z * Z)
    e = mean_estimate([0.7] * 10)
    assert e.value == 0.7 and e.flags == ("constant_fallback",)
    assert (e.ci_low, e.ci_high) == (pytest.approx(0.7 - 0.7 * q), pytest.approx(0.7 + 0.3 * q))
    u = mean_estimate([3.0] * 4, bounds=None)
    assert u.ci_low is None and u.flags == ("constant_unbounded",)


def test_cr2_by_hand_unequal_clusters() -> None:
    # x = [1, 0 | 1 | 0, 0, 1], N = 6, mean .5. T_a = .5 - .5 = 0, T_b = .5,
    # T_c = -.5 - .5 + .5 = -.5. V = (0/(1-2/6) + .25/(1-1/6) + .25/(1-3/6)) / 36
    #   = (.3 + .5) / 36 = .8/36.
    x = np.array([1, 0, 1, 0, 0, 1], dtype=float)
    codes = np.array([0, 0, 1, 2, 2, 2])
    mv = mean_variance(x, codes, 3)
    assert mv.variance == pytest.approx(0.8 / 36)
    # Bell–McCaffrey df against the matrix definition tr(B)²/tr(B²), B = M W M.
    n = 6
    m = np.eye(n) - np.ones((n, n)) / n
    w = np.zeros((n, n))
    for g in range(3):
        a = (codes == g).astype(float)
        w += np.outer(a, a) / (n * n * (1 - a.sum() / n))
    b = m @ w @ m
    assert mv.df == pytest.approx(np.trace(b) ** 2 / np.trace(b @ b))
    assert mv.df is not None and mv.df < 2.0  # unequal sizes: below G - 1


def test_cr2_equal_sizes_is_cr1_and_singletons_are_textbook() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(24)
    codes = np.repeat(np.arange(6), 4)
    t = np.bincount(codes, weights=x - x.mean())
    cr1 = 6 / 5 * float(t @ t) / 24**2  # Cameron & Miller CR1 for a mean
    mv = mean_variance(x, codes, 6)
    assert mv.variance == pytest.approx(cr1) and mv.df == pytest.approx(5.0)
    single = mean_variance(x, np.arange(24), 24)
    assert single.variance == pytest.approx(np.var(x, ddof=1) / 24)
    assert single.df == pytest.approx(23.0)


def test_clustered_t_and_flags() -> None:
    # Six clusters of 4 scores whose clusters differ: CR2 wider than the i.i.d. interval.
    x = [0.9, 0.8, 0.85, 0.95, 0.2, 0.3, 0.25, 0.1, 0.6, 0.5, 0.55, 0.65,
         0.7, 0.75, 0.8, 0.9, 0.3, 0.2, 0.4, 0.35, 0.5, 0.45, 0.6, 0.55]
    c = [i // 4 for i in range(24)]
    e = mean_estimate(x, c)
    mv = mean_variance(np.asarray(x), np.asarray(c), 6)
    assert mv.variance is not None and mv.df is not None
    half = float(scipy.stats.t.ppf(0.975, mv.df)) * math.sqrt(mv.variance)
    assert e.method == "t-cr2" and e.n_clusters == 6 and e.df == pytest.approx(5.0)
    assert (e.ci_low, e.ci_high) == (pytest.approx(e.value - half),  # type: ignore[operator]
                                     pytest.approx(e.value + half))  # type: ignore[operator]
    assert e.flags == ("few_clusters",)
    # Clusters [.2, .8] each: totals 0, CR2 variance 0 -> the i.i.d. interval is reported.
    f = mean_estimate([0.2, 0.8] * 25, [i // 2 for i in range(50)])
    g = mean_estimate([0.2, 0.8] * 25)
    assert "iid_floor" in f.flags and (f.ci_low, f.ci_high) == (g.ci_low, g.ci_high)
    assert mean_estimate([0.2, 0.4], ["k", "k"]).flags == ("one_cluster",)


def test_korn_graubard_by_hand() -> None:
    # 4 clusters of 5: ones 5, 1, 0, 2 -> p = 8/20 = .4. Equal sizes, so CR2 = CR1:
    # T = 5-2, 1-2, 0-2, 2-2 = 3, -1, -2, 0; sum T² = 14; V = 4/3 * 14/400 = .046667.
    # n_eff = min(20, .24/V) * (t_19/t_3)² (df = G - 1 = 3 for equal sizes; the rare-outcome
    # bound 3 m_eff = 3 * .4 * min(20, .24/V = 5.14) = 6.2 exceeds 3, so it does not bind).
    x = [1] * 5 + [1, 0, 0, 0, 0] + [0] * 5 + [1, 1, 0, 0, 0]
    c = [i // 5 for i in range(20)]
    v = 4 / 3 * 14 / 400
    factor = (scipy.stats.t.ppf(0.975, 19) / scipy.stats.t.ppf(0.975, 3)) ** 2
    n_eff = min(20, 0.24 / v) * factor
    e = mean_estimate(x, c)
    p = 0.4
    center = (p + Z * Z / (2 * n_eff)) / (1 + Z * Z / n_eff)
    half = Z / (1 + Z * Z / n_eff) * math.sqrt(p * (1 - p) / n_eff + Z * Z / (4 * n_eff**2))
    lo, hi = center - half, center + half
    assert e.method == "wilson-korn-graubard"
    assert (e.ci_low, e.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    # 0/n clustered: n_eff = G * (t_{n-1}/t_df)², never n.
    z = mean_estimate([0] * 20, c)
    assert z.ci_high == pytest.approx(Z * Z / (4 * factor + Z * Z))


def test_korn_graubard_rare_outcome_df_by_hand() -> None:
    # 20 clusters of 10, one 1 in each of clusters 0, 1, 2: p = 3/200 = .015. Equal sizes,
    # so CR2 = CR1 and the Bell–McCaffrey df is G - 1 = 19. Cluster residual totals:
    # T = 1 - 10*.015 = .85 (3 clusters), -.15 (17 clusters); sum T² = 3*.7225 + 17*.0225
    # = 2.55; V = 20/19 * 2.55/200² = 6.7105e-5; p(1-p)/V = .014775/V = 220.2 > n, so the
    # design effect is capped: min(n, .) = 200. Effective number of the rarer outcome
    # m_eff = .015 * 200 = 3, so df = min(19, 3*3) = 9 (the rare-outcome bound), and
    # n_eff = 200 * (t_199/t_9)², then Wilson (the module's `wilson` reference above).
    x = np.zeros(200)
    x[[0, 10, 20]] = 1.0
    c = [i // 10 for i in range(200)]
    v = 20 / 19 * 2.55 / 200**2
    assert mean_variance(x, np.array(c), 20).variance == pytest.approx(v)
    assert 0.015 * 0.985 / v > 200
    factor = (scipy.stats.t.ppf(0.975, 199) / scipy.stats.t.ppf(0.975, 9)) ** 2
    n_eff = 200 * factor
    p = 0.015
    center = (p + Z * Z / (2 * n_eff)) / (1 + Z * Z / n_eff)
    half = Z / (1 + Z * Z / n_eff) * math.sqrt(p * (1 - p) / n_eff + Z * Z / (4 * n_eff**2))
    e = mean_estimate(x, c)
    assert e.method == "wilson-korn-graubard" and "iid_floor" not in e.flags
    assert (e.ci_low, e.ci_high) == (pytest.approx(center - half), pytest.approx(center + half))
    # Hand check of the magnitude: t_9 = 2.2622, t_199 = 1.9720 -> factor .7599,
    # n_eff = 151.98; the i.i.d. Wilson upper bound at 3/200 would be .0431.
    assert n_eff == pytest.approx(151.98, abs=0.05)
    assert e.ci_high is not None and e.ci_high > 0.045
    assert rare_outcome_df(0.015, v, 200, 19.0) == pytest.approx(9.0)
    assert rare_outcome_df(0.985, v, 200, 19.0) == pytest.approx(9.0)  # rarer outcome: 0
    assert rare_outcome_df(0.0, 0.0, 200, 19.0) == 19.0  # 0/n: left to the 0/n rule
    assert rare_outcome_df(0.001, 1.0, 200, 19.0) == 1.0  # never below 1


def test_macro_welch_satterthwaite_by_hand() -> None:
    # Group a (3 values, bounds None): mean 2, s² = 1, se² = 1/3, df 2.
    # Group b (4 values): mean 5, s² = 10/3 (deviations -2,-1,1,2), se² = 10/12, df 3.
    # Macro = 3.5; SE = sqrt(1/3 + 5/6)/2; WS df = (7/6)² / ((1/3)²/2 + (5/6)²/3).
    e = macro_mean_estimate([1, 2, 3, 3, 4, 6, 7], list("aaabbbb"), bounds=None)
    se = math.sqrt(1 / 3 + 5 / 6) / 2
    df = (7 / 6) ** 2 / ((1 / 3) ** 2 / 2 + (5 / 6) ** 2 / 3)
    half = float(scipy.stats.t.ppf(0.975, df)) * se
    assert e.value == pytest.approx(3.5) and e.stderr == pytest.approx(se)
    assert e.df == pytest.approx(df) and e.method == "stratified-welch-t"
    assert (e.ci_low, e.ci_high) == (pytest.approx(3.5 - half), pytest.approx(3.5 + half))


def test_macro_one_sample_group_counts_with_largest_variance() -> None:
    # Group x: one value .9 -> variance (1/2)² = .25, df inf. Group y (bounds None would
    # refuse) on [0, 1]: [.2, .4, .6] -> adjusted t: m~ = (1.2+.5)/4 = .425,
    # v~ = (.050625 + .000625 + .030625 + (.180625 + .330625)/2)/3 = .11229, se² = v~/4,
    # plus the centre's shift |.4 - .425| / t_2 added to its SE.
    e = macro_mean_estimate([0.9, 0.2, 0.4, 0.6], [7, 3, 3, 3], group_names=[
        "g0", "g1", "g2", "y", "g4", "g5", "g6", "x"])
    v = (0.050625 + 0.000625 + 0.030625 + (0.180625 + 0.330625) / 2) / 3
    t2 = float(scipy.stats.t.ppf(0.975, 2))
    se_y = math.sqrt(v / 4) + 0.025 / t2
    assert e.value == pytest.approx(0.65)
    assert e.stderr == pytest.approx(math.sqrt(0.25 + se_y**2) / 2)
    assert e.flags == ("one_sample_group:x",)
    assert e.ci_low is not None and e.ci_high is not None and e.ci_high - e.ci_low > 0.4
    # Labels that are not codes name themselves.
    assert macro_mean_estimate([1, 0, 1], ["Seal", "Bronze", "Bronze"]).flags == (
        "one_sample_group:Seal",)


def test_macro_single_group_is_the_mean_estimate() -> None:
    x = [1, 0, 1, 1, 0, 1]
    assert macro_mean_estimate(x, ["g"] * 6) == mean_estimate(x)


def test_validation() -> None:
    with pytest.raises(ValueError, match=r"values\[1\] is None"):
        mean_estimate([1.0, None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="nan"):
        mean_estimate([1.0, float("nan")])
    with pytest.raises(ValueError, match="clusters has 1 entries"):
        mean_estimate([1.0, 0.0], clusters=["a"])
    with pytest.raises(ValueError, match="groups has 1 entries"):
        macro_mean_estimate([1.0, 0.0], ["a"])
    with pytest.raises(ValueError, match="confidence"):
        mean_estimate([1.0, 0.0], confidence=1.0)


def test_json_ready_and_deterministic() -> None:
    e = mean_estimate([0.1, 0.5, 0.9], ["a", "b", "b"])
    d = e.to_dict()
    assert list(d) == ["value", "n", "stderr", "ci_low", "ci_high", "method", "confidence",
                       "n_resamples", "n_clusters", "df", "flags"]
    assert d["flags"] == ["few_clusters"] or "few_clusters" in d["flags"]
    json.dumps(d, allow_nan=False)
    assert mean_estimate([0.1, 0.5, 0.9], ["a", "b", "b"], seed=5) == e
    assert isinstance(e, Estimate)
