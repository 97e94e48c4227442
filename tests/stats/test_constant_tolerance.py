"""Data constant up to rounding are constant (docs/intervals.md, "Constant data"): the
reviewer's examples worked out by hand, and generated c + noise (|noise| <= 1e-13)
compared with the exactly constant data through every path that uses the rule
(single, clustered, macro groups, paired). Also the cap on ``one_sample_group`` names."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings

from heritage_eval.stats import Estimate, macro_mean_estimate, mean_estimate, paired_difference
from heritage_eval.stats.inputs import constant_tolerance, is_constant

Z = float(scipy.stats.norm.ppf(0.975))
BOUNDS: list[tuple[float, float] | None] = [(0.0, 1.0), (0.0, 10.0), (-1.0, 1.0), None]


def test_reviewer_examples_by_hand() -> None:
    # 0.4 - 0.3 = 0.10000000000000003 and 0.6 - 0.5 = 0.09999999999999998: both 0.1 up
    # to rounding. Constant 0.1 on the differences' range [-1, 1], n = 2: q = z²/(2 + z²),
    # interval [.1 - q(.1 + 1), .1 + q(1 - .1)] (the "none of n differ" bound).
    q = Z * Z / (2 + Z * Z)
    r = paired_difference([0.4, 0.6], [0.3, 0.5])
    assert r.flags == ("constant_fallback", "p_floor:0.5")  # 2 pairs: p >= 2/2^2
    assert r.ci_low == pytest.approx(0.1 - 1.1 * q) and r.ci_high == pytest.approx(0.1 + 0.9 * q)
    # [0.3, 0.1 + 0.2] without a range: constant, so no interval, as for [7.3] * 3.
    e = mean_estimate([0.3, 0.1 + 0.2], bounds=None)
    assert (e.ci_low, e.ci_high, e.flags) == (None, None, ("constant_unbounded",))
    assert mean_estimate([7.3] * 3, bounds=None).flags == ("constant_unbounded",)


def test_tolerance_edges() -> None:
    x = np.array([0.5, 0.5 + 1e-12])
    assert constant_tolerance(x, (0.0, 1.0)) == 1e-12 and is_constant(x, (0.0, 1.0))
    assert not is_constant(np.array([0.5, 0.5 + 3e-12]), (0.0, 1.0))
    # on [0, 10] the scale is 10; unbounded it is max(1, max |x|) = 1000 here
    assert is_constant(np.array([5.0, 5.0 + 9e-12]), (0.0, 10.0))
    assert constant_tolerance(np.array([-1000.0, -1000.0]), None) == pytest.approx(1e-9)
    # a real spread far below a score's resolution is still data: spread 1e-6 gets the t
    e = mean_estimate([0.5, 0.500001, 0.5000005], bounds=None)
    assert e.method == "t" and e.flags == ()


def _close(noisy: Estimate, exact: Estimate, scale: float) -> None:
    tol = 1e-9 * scale
    assert (noisy.ci_low is None) == (exact.ci_low is None)
    if exact.ci_low is None or exact.ci_high is None:
        return
    assert noisy.ci_low is not None and noisy.ci_high is not None
    assert noisy.ci_low == pytest.approx(exact.ci_low, abs=tol)
    assert noisy.ci_high == pytest.approx(exact.ci_high, abs=tol)
    assert noisy.ci_high - noisy.ci_low > 1e-3 * scale  # never a rounding-noise width


@st.composite
def noisy_constants(draw: st.DrawFn) -> tuple[float, list[float], tuple[float, float] | None,
                                               list[int], list[int]]:
    """c (anywhere in the range, ends included), n in 2..40 values c + noise with
    |noise| <= 1e-13, cluster and group labels."""
    bounds = draw(st.sampled_from(BOUNDS))
    if bounds is None:
        c = draw(st.floats(-1000.0, 1000.0))
    else:
        u = draw(st.sampled_from([0.0, 0.3, 0.5, 1.0]) | st.floats(0.0, 1.0))
        c = bounds[0] + (bounds[1] - bounds[0]) * u
    n = draw(st.integers(2, 40))
    noise = draw(st.lists(st.floats(-1e-13, 1e-13), min_size=n, max_size=n))
    clusters = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    groups = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    return c, [c + e for e in noise], bounds, clusters, groups


@settings(max_examples=200, deadline=None)
@given(noisy_constants())
def test_noise_is_constant_in_every_path(s: tuple[float, list[float],
                                                  tuple[float, float] | None,
                                                  list[int], list[int]]) -> None:
    c, x, bounds, clusters, groups = s
    exact = [c] * len(x)
    scale = 1.0 if bounds is None else bounds[1] - bounds[0]
    inside = bounds is None or bounds[0] < c < bounds[1]
    for noisy, ref in (
        (mean_estimate(x, bounds=bounds), mean_estimate(exact, bounds=bounds)),
        (mean_estimate(x, clusters, bounds=bounds),
         mean_estimate(exact, clusters, bounds=bounds)),
        (macro_mean_estimate(x, groups, bounds=bounds),
         macro_mean_estimate(exact, groups, bounds=bounds)),
        (macro_mean_estimate(x, groups, clusters, bounds=bounds),
         macro_mean_estimate(exact, groups, clusters, bounds=bounds)),
    ):
        _close(noisy, ref, scale)
        if inside:  # at an end the exact data are a proportion (Wilson, no flag)
            assert noisy.flags == ref.flags and noisy.method == ref.method
    if bounds is None:
        assert mean_estimate(x, bounds=None).flags == ("constant_unbounded",)
        return
    # Paired: b = the exact constant, a = b + noise: identical systems up to rounding.
    span = bounds[1] - bounds[0]
    q = Z * Z / (len(x) + Z * Z)
    for r in (paired_difference(x, exact, bounds=bounds, n_resamples=1000),
              paired_difference(x, exact, clusters, groups, bounds=bounds,
                                n_resamples=1000)):
        assert r.p_value == 1.0 and r.n_resamples == 0
        assert r.difference == pytest.approx(0.0, abs=1e-12)
        assert not any(f.startswith("p_floor") for f in r.flags)
        if "one_cluster" in r.flags:  # one cluster: no cluster-robust interval (rule)
            continue
        assert r.ci_low is not None and r.ci_high is not None
        assert r.ci_high - r.ci_low > 1e-3 * span
    plain = paired_difference(x, exact, bounds=bounds, n_resamples=1000)
    assert plain.flags == ("constant_fallback",)
    assert plain.ci_low == pytest.approx(-q * span) and plain.ci_high == pytest.approx(q * span)


@pytest.mark.parametrize(("singles", "shown", "more"), [(3, 3, 0), (10, 10, 0),
                                                        (11, 10, 1), (3000, 10, 2990)])
def test_one_sample_group_names_are_capped(singles: int, shown: int, more: int) -> None:
    # `singles` one-observation groups s0, s1, … and one group of 5: the flag names the
    # first 10 in order of appearance and counts the rest.
    values = [0.5] * singles + [0.2, 0.4, 0.6, 0.8, 1.0]
    groups = [f"s{i}" for i in range(singles)] + ["big"] * 5
    (flag,) = [f for f in macro_mean_estimate(values, groups).flags
               if f.startswith("one_sample_group:")]
    names = flag.removeprefix("one_sample_group:").split(",")
    want = [f"s{i}" for i in range(shown)] + ([f"+{more} more"] if more else [])
    assert names == want and len(flag) < 200
