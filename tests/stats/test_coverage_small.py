"""A reduced coverage study (bench/bench_coverage.py is the full one): simulations with a
known true mean, seeded so the counts are fixed numbers, assert that the 95 % intervals
cover at least 90 % and the sign-flip test's type-I error stays near 5 %. The binomial
case is exact (every outcome weighted by its binomial probability)."""

from __future__ import annotations

import numpy as np
import scipy.stats

from heritage_eval.stats import macro_mean_estimate, mean_estimate, paired_difference

REPS = 300


def _covers(lo: float | None, hi: float | None, truth: float) -> bool:
    return lo is not None and hi is not None and lo <= truth <= hi


def test_binomial_exact_coverage() -> None:
    # Exact: sum over x of P(X = x) [Wilson(x/n) covers p]. Wilson at n = 30, p = .5
    # covers 95.7 %; n = 5 covers >= 90 % (the small-case goal).
    for n, p in ((30, 0.5), (200, 0.02), (5, 0.5), (30, 0.2)):
        pmf = scipy.stats.binom.pmf(np.arange(n + 1), n, p)
        cover = 0.0
        for x in range(n + 1):
            e = mean_estimate([1.0] * x + [0.0] * (n - x))
            cover += float(pmf[x]) * _covers(e.ci_low, e.ci_high, p)
        assert cover >= 0.90, (n, p, cover)
        if n >= 30:
            assert cover <= 0.975, (n, p, cover)


def test_skewed_scores_coverage() -> None:
    # NED-like: mass .2 at 0, .3 at 1, Beta(2, 2) otherwise (mean .55); and a skewed one
    # with mass .6 at 0 (mean .05 + .35 * .2 = .12).
    rng = np.random.default_rng(11)
    for p0, p1, a, b in ((0.2, 0.3, 2, 2), (0.6, 0.05, 1, 4)):
        truth = p1 + (1 - p0 - p1) * a / (a + b)
        for n in (5, 30):
            hits = 0
            for _ in range(REPS):
                u = rng.random(n)
                x = rng.beta(a, b, n)
                x[u < p0] = 0.0
                x[(u >= p0) & (u < p0 + p1)] = 1.0
                e = mean_estimate(x)
                hits += _covers(e.ci_low, e.ci_high, truth)
            assert hits / REPS >= 0.90, (p0, n, hits / REPS)


def test_clustered_binary_and_macro_coverage() -> None:
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(REPS):  # 20 clusters, ICC .3, p = .5, unequal sizes
        sizes = 1 + rng.poisson(9, 20)
        s = (1 - 0.3) / 0.3
        pg = rng.beta(0.5 * s, 0.5 * s, 20)
        codes = np.repeat(np.arange(20), sizes)
        x = (rng.random(codes.size) < pg[codes]).astype(float)
        e = mean_estimate(x, codes)
        hits += _covers(e.ci_low, e.ci_high, 0.5)
    assert hits / REPS >= 0.90
    hits = 0
    labels = np.repeat(np.arange(3), [3, 10, 50])
    ps = np.array([0.9, 0.6, 0.75])
    for _ in range(REPS):  # macro over unequal groups
        x = (rng.random(labels.size) < ps[labels]).astype(float)
        e = macro_mean_estimate(x, labels)
        hits += _covers(e.ci_low, e.ci_high, float(ps.mean()))
    assert hits / REPS >= 0.90


def test_sign_flip_type_one_error() -> None:
    # Null: both systems draw from the same per-sample success probability, so each
    # difference is symmetric about 0. 300 sets: the rejection rate's sd is ~1.3 %, so
    # 8 % bounds a 5 % test with room; the coverage of 0 must be >= 90 %.
    rng = np.random.default_rng(13)
    rejections, covered = 0, 0
    for _ in range(REPS):
        q = rng.beta(2, 2, 30)
        a = (rng.random(30) < q).astype(float)
        b = (rng.random(30) < q).astype(float)
        r = paired_difference(a, b, n_resamples=1000, seed=int(rng.integers(2**31)))
        rejections += r.p_value is not None and r.p_value <= 0.05
        covered += _covers(r.ci_low, r.ci_high, 0.0)
    assert rejections / REPS <= 0.08
    assert covered / REPS >= 0.90
