"""The unclustered sign-flip p-value is scipy.stats.permutation_test's, to the last bit
and for the same seed (scipy is the reference, called here on generated data), in
linear time; the smallest attainable p-value is flagged (``p_floor``), values worked
out by hand in comments."""

from __future__ import annotations

import inspect
import math

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings

from heritage_eval.stats import paired_difference, signflip
from heritage_eval.stats.signflip import p_floor, samples_p_value

RNG_KW = "rng" if "rng" in inspect.signature(scipy.stats.permutation_test).parameters else (
    "random_state"
)


def _scipy_p(d: np.ndarray, rng: np.random.Generator, n_resamples: int) -> float:
    """Reference: scipy's paired (sign-flip) permutation test of the mean."""
    res = scipy.stats.permutation_test(
        (d,), lambda x, axis=-1: np.mean(x, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=n_resamples, alternative="two-sided", **{RNG_KW: rng})
    return float(res.pvalue)


@st.composite
def differences(draw: st.DrawFn) -> np.ndarray:
    """Paired differences of the kinds scores give: 0/1 accuracy (many ties and zeros),
    scores rounded to 2 decimals (ties within rounding), continuous scores."""
    n = draw(st.integers(2, 120))  # scipy refuses n = 1
    kind = draw(st.sampled_from(["binary", "rounded", "continuous"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shift = draw(st.sampled_from([0.0, 0.05, 0.3]))
    if kind == "binary":
        a = (rng.random(n) < 0.5 + shift).astype(float)
        b = (rng.random(n) < 0.5).astype(float)
    else:
        a = rng.random(n)
        b = np.clip(a - shift + rng.normal(0.0, 0.2, n), 0.0, 1.0)
        if kind == "rounded":
            a, b = a.round(2), b.round(2)
    return np.asarray(a - b, dtype=np.float64)


@settings(max_examples=150, deadline=None)
@given(differences(), st.integers(0, 2**31 - 1), st.integers(1000, 3000))
def test_equals_scipy_permutation_test(d: np.ndarray, seed: int, n_resamples: int) -> None:
    ours = samples_p_value(d.copy(), n_resamples, np.random.default_rng(seed))
    assert ours == _scipy_p(d, np.random.default_rng(seed), n_resamples)


def test_a_tie_within_rounding_is_broken_as_scipy_breaks_it() -> None:
    # 46 differences of scores rounded to 2 decimals, mean 0.000435: scipy's tie
    # tolerance (100 eps |mean| ~ 1e-17) is below the rounding of a null mean (~4e-17),
    # so a null mean that equals the observed one in exact arithmetic counts only if it
    # is summed in scipy's order (left to right). A matrix product sums otherwise and
    # counted one more draw here (p .98953 against scipy's .98843).
    rng = np.random.default_rng(22)
    n = int(rng.integers(1, 60))
    a = rng.random(n).round(2)
    b = np.clip(a - 0.05 + rng.normal(0.0, 0.2, n), 0.0, 1.0).round(2)
    d = a - b
    assert n == 46 and abs(float(np.mean(d))) < 1e-3
    ref = _scipy_p(d, np.random.default_rng(22), 1814)
    assert ref == pytest.approx(0.98843, abs=1e-5)
    assert samples_p_value(d, 1814, np.random.default_rng(22)) == ref
    assert paired_difference(a, b, seed=22, n_resamples=1814).p_value == ref


@pytest.mark.parametrize("chunk", [1, 64, 1000])
@pytest.mark.parametrize("fast", [True, False])
def test_chunks_and_both_draws_give_scipys_p(monkeypatch: pytest.MonkeyPatch, chunk: int,
                                              fast: bool) -> None:
    # Small chunks split the draw into many pieces (odd n: pieces of an even number of
    # rows); fast=False draws with Generator.permuted as scipy does. Same p as scipy.
    if not fast:
        monkeypatch.setattr(signflip, "_fast_draw_ok", lambda rng: False)
    monkeypatch.setattr(signflip, "CHUNK", chunk)
    rng = np.random.default_rng(3)
    for n in (11, 37, 250):
        d = (rng.random(n) - 0.45).round(2)
        for seed in (0, 7):
            assert samples_p_value(d, 1001, np.random.default_rng(seed)) == _scipy_p(
                d, np.random.default_rng(seed), 1001)


def test_fast_draw_is_used_and_a_half_used_word_falls_back() -> None:
    # The fast reading of the bit stream holds on this numpy (else the linear time is
    # not reached); a generator holding half a 64-bit word is not read that way, and
    # still gives scipy's p for the same state.
    assert signflip._raw_reading_holds()
    d = np.random.default_rng(1).normal(0.05, 0.3, 40)
    ours, ref = np.random.default_rng(5), np.random.default_rng(5)
    for g in (ours, ref):
        g.integers(0, 2**31, dtype=np.uint32)  # one 32-bit draw: half a word left
    assert not signflip._fast_draw_ok(ours)
    assert samples_p_value(d, 2000, ours) == _scipy_p(d, ref, 2000)


def test_hundred_thousand_pairs_runs_and_matches_the_normal_approximation() -> None:
    # Not a timing assertion (bench/bench_stats_scale.py times it). With n = 100,000 the
    # sign-flip null of the mean is close to normal with sd sqrt(sum d²)/n (a sum of
    # independent ±d_i/n), so p ≈ 2(1 - Φ(|mean| / sd)); the Monte-Carlo p (2000 draws)
    # lies within 0.05 of it (its own sd is at most sqrt(.25/2000) ≈ .011).
    rng = np.random.default_rng(12)
    n = 100_000
    a = rng.random(n)
    b = np.clip(a - 0.001 + rng.normal(0.0, 0.3, n), 0.0, 1.0)
    r = paired_difference(a, b)
    d = a - b
    z = abs(d.mean()) / (math.sqrt(float(np.sum(d * d))) / n)
    p_normal = 2.0 * (1.0 - float(scipy.stats.norm.cdf(z)))
    assert r.n == n and r.n_resamples == 2000 and r.p_value is not None
    assert 0.02 < p_normal < 0.98  # the check is informative: p is not at an end
    assert r.p_value == pytest.approx(p_normal, abs=0.05)
    assert not any(f.startswith("p_floor") for f in r.flags)


def test_p_floor_by_hand() -> None:
    # 5 clusters, all differences positive: only the observed signs (and their mirror)
    # reach |T| -> p = 2/2^5 = .0625, the floor; flagged since .0625 > .01.
    a, b = [1.0] * 10, [0.0] * 10
    five = [i // 2 for i in range(10)]
    r = paired_difference(a, b, clusters=five)
    assert r.p_value == pytest.approx(0.0625)
    assert "p_floor:0.0625" in r.flags and "few_clusters" in r.flags
    # 8 clusters: 2/256 = .0078 <= .01: no flag; at 99.9 % confidence the level is
    # .001 and it is flagged.
    eight = [i % 8 for i in range(16)]
    assert not any(f.startswith("p_floor") for f in paired_difference(
        [1.0] * 16, [0.0] * 16, clusters=eight).flags)
    assert "p_floor:0.00781" in paired_difference([1.0] * 16, [0.0] * 16, clusters=eight,
                                                  confidence=0.999).flags
    # 7 pairs unclustered: 2/128 = .015625 -> "p_floor:0.0156".
    assert "p_floor:0.0156" in paired_difference([1.0] * 7, [0.0] * 7).flags
    # 40 pairs but only 4 differ (the others tie): the test sees 4 units, 2/16 = .125,
    # although it is Monte-Carlo (2^40 > 2000); p itself is near 2/16 (Monte-Carlo).
    r = paired_difference([1.0] * 4 + [0.5] * 36, [0.0] * 4 + [0.5] * 36)
    assert "p_floor:0.125" in r.flags and r.n_resamples == 2000
    assert r.p_value == pytest.approx(0.125, abs=0.04)
    # Identical systems: nothing to test, p = 1 and no p_floor (constant_fallback says it).
    assert paired_difference([0.3, 0.6], [0.3, 0.6]).flags == ("constant_fallback",)


def test_p_floor_formula() -> None:
    assert p_floor(5, 0) == 0.0625 and p_floor(1, 0) == 1.0 and p_floor(0, 0) == 1.0
    assert p_floor(30, 2000) == pytest.approx(2 / 2001)  # Monte-Carlo: (0 + 1)/(B + 1) x 2
    assert p_floor(3, 2000) == 0.25


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 1.0]), min_size=1, max_size=10),
       st.booleans())
def test_exact_p_never_below_the_floor(d: list[float], clustered: bool) -> None:
    # n <= 10: 2^n <= 2000, exact enumeration. The p-value is never below the floor,
    # reaches it when every nonzero difference has one sign, and the flag names it.
    a = [max(x, 0.0) for x in d]
    b = [max(-x, 0.0) for x in d]
    clusters = list(range(len(d))) if clustered else None
    r = paired_difference(a, b, clusters, bounds=(0.0, 1.0))
    active = sum(x != 0.0 for x in d)
    assert r.p_value is not None
    if active == 0:
        assert r.p_value == 1.0 and not any(f.startswith("p_floor") for f in r.flags)
        return
    floor = 2.0 ** (1 - active)
    assert r.p_value >= floor - 1e-12
    if all(x >= 0 for x in d) or all(x <= 0 for x in d):
        assert r.p_value == pytest.approx(floor)
    assert (f"p_floor:{floor:.3g}" in r.flags) == (floor > 0.01)
