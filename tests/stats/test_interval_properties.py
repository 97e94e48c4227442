"""The interval rules checked on generated inputs (hypothesis) and an exhaustive grid:
never raises on valid input, never NaN, contains the value, stays in the declared
range, never collapses for n >= 2, says n == 1 / one-sample groups, clustered never
narrower than unclustered. The Wilson grid is compared with the formula (Wilson 1927)."""

from __future__ import annotations

import math

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings

from heritage_eval.stats import Estimate, macro_mean_estimate, mean_estimate, paired_difference

Z = float(scipy.stats.norm.ppf(0.975))
BOUNDS = [(0.0, 1.0), (0.0, 10.0), (-1.0, 1.0)]


@st.composite
def samples(draw: st.DrawFn) -> tuple[list[float], list[int], list[int], tuple[float, float]]:
    """Values on a grid of the range (ends included, so 0/1 data and constants occur),
    with cluster and group labels."""
    lo, hi = draw(st.sampled_from(BOUNDS))
    n = draw(st.integers(0, 40))
    grid = st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]) | st.floats(0.0, 1.0)
    u = draw(st.lists(grid, min_size=n, max_size=n))
    kind = draw(st.sampled_from(["any", "binary", "constant"]))
    if kind == "binary":
        u = [1.0 if v >= 0.5 else 0.0 for v in u]
    elif kind == "constant" and u:
        u = [u[0]] * n
    clusters = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    groups = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return [lo + (hi - lo) * v for v in u], clusters, groups, (lo, hi)


def _check(e: Estimate, values: list[float], bounds: tuple[float, float]) -> None:
    for f in (e.value, e.stderr, e.ci_low, e.ci_high, e.df):
        assert f is None or math.isfinite(f)
    if not values:
        assert e.value is None and e.ci_low is None and "n_0" in e.flags
        return
    assert e.value is not None
    if len(values) == 1:
        assert e.ci_low is None and e.ci_high is None and "n_1" in e.flags
        return
    if e.ci_low is None or e.ci_high is None:
        assert "one_cluster" in e.flags
        return
    lo, hi = bounds
    assert lo <= e.ci_low <= e.value <= e.ci_high <= hi
    assert e.ci_high - e.ci_low > 0.0  # never collapses


@settings(max_examples=200, deadline=None)
@given(samples())
def test_mean_estimate_rules(s: tuple[list[float], list[int], list[int], tuple[float, float]]
                             ) -> None:
    values, clusters, _, bounds = s
    plain = mean_estimate(values, bounds=bounds)
    _check(plain, values, bounds)
    clustered = mean_estimate(values, clusters, bounds=bounds)
    _check(clustered, values, bounds)
    if len(set(clusters)) < 20 and len(values) >= 2 and len(set(clusters)) >= 2:
        assert "few_clusters" in clustered.flags
    if (clustered.ci_low is not None and clustered.ci_high is not None
            and plain.ci_low is not None and plain.ci_high is not None):
        assert clustered.ci_high - clustered.ci_low >= plain.ci_high - plain.ci_low - 1e-12


@settings(max_examples=200, deadline=None)
@given(samples(), st.booleans())
def test_macro_mean_rules(s: tuple[list[float], list[int], list[int], tuple[float, float]],
                          with_clusters: bool) -> None:
    values, clusters, groups, bounds = s
    e = macro_mean_estimate(values, groups, clusters if with_clusters else None,
                            bounds=bounds)
    sizes = {g: groups.count(g) for g in set(groups)}
    if len(sizes) >= 2:
        singles = sorted(str(g) for g, k in sizes.items() if k == 1)
        flag = [f for f in e.flags if f.startswith("one_sample_group:")]
        if singles and not with_clusters:
            assert flag and set(flag[0].split(":", 1)[1].split(",")) == set(singles)
        means = [np.mean([v for v, g in zip(values, groups, strict=True) if g == k])
                 for k in sizes]
        assert e.value == pytest.approx(float(np.mean(means)))
    _check(e, values, bounds)


@settings(max_examples=100, deadline=None)
@given(samples())
def test_paired_identical_systems(s: tuple[list[float], list[int], list[int],
                                          tuple[float, float]]) -> None:
    values, _, _, bounds = s
    r = paired_difference(values, values, bounds=bounds, n_resamples=1000)
    if len(values) >= 2:
        span = bounds[1] - bounds[0]
        q = Z * Z / (len(values) + Z * Z)  # Wilson bound of "0 of n differ"
        assert (r.difference, r.p_value) == (0.0, 1.0)
        assert r.ci_low == pytest.approx(-q * span) and r.ci_high == pytest.approx(q * span)
        assert r.flags == ("constant_fallback",)


def test_wilson_exhaustive_grid() -> None:
    # Every x of every n up to 60: the interval is Wilson's formula (at 0/n and n/n the
    # formula's ends are 0 and 1 exactly).
    for n in range(2, 61):
        for x in range(n + 1):
            p = x / n
            c = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
            h = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
            e = mean_estimate([1.0] * x + [0.0] * (n - x))
            assert e.ci_low == pytest.approx(max(0.0, c - h), abs=1e-12)
            assert e.ci_high == pytest.approx(min(1.0, c + h), abs=1e-12)
            assert e.ci_high - e.ci_low > 0  # type: ignore[operator]
