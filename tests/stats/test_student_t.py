"""The pure-Python t and normal quantiles (heritage_eval.stats.student_t) against
``scipy.stats.t.ppf`` / ``scipy.stats.norm.ppf`` (the reference; scipy is a dev
dependency, never imported by the package), and against closed forms where scipy is
itself less precise (df = 1, 2 just above p = 1/2)."""

from __future__ import annotations

import math

import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.stats.proportion import t_quantile, z_quantile
from heritage_eval.stats.student_t import normal_quantile, student_t_quantile

#: df from 0.5 to 1e6: fractional ones (Welch–Satterthwaite, Bell–McCaffrey), 1 and 2,
#: both sides of the Cornish–Fisher switch (about 2.7e4 at p = 0.9999), and beyond.
DFS = [0.5, 0.75, 1.0, 1.3, 2.0, 2.5, 3.0, 3.7, 4.0, 5.0, 7.25, 10.0, 19.5, 30.0, 61.8,
       100.0, 333.3, 1e3, 4.5e3, 1e4, 2.5e4, 3e4, 1e5, 3.3e5, 1e6]
#: levels p from 0.5 to 0.9999 (0.5 is 0 exactly; its mirror images are tested below).
LEVELS = [0.5, 0.51, 0.55, 0.6, 0.7, 0.75, 0.76, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995,
          0.999, 0.9995, 0.9999]
REL = 1e-10


def _rel(a: float, b: float) -> float:
    return 0.0 if a == b else abs(a - b) / abs(b)


@pytest.mark.parametrize("df", DFS)
def test_t_quantile_equals_scipy_on_the_grid(df: float) -> None:
    worst = max(_rel(student_t_quantile(p, df), float(scipy.stats.t.ppf(p, df)))
                for p in LEVELS)
    assert worst <= REL, (df, worst)


def test_t_quantile_small_and_large_df_and_far_tails() -> None:
    # Beyond the required grid: tiny df (a quantile of 1.6e96 at df = 0.1, p = 1e-10),
    # huge df (the expansion alone) and p far in the tails. Not df = 0.05 at p = 1e-10:
    # scipy 1.17 gives -1.5e153 there, whose tail mass is 9.8e-9, not 1e-10 (a 60-digit
    # mpmath incomplete beta); ours, -1.0876e193, has 1e-10 to 14 digits.
    for df in (0.1, 0.25, 1e7, 1e9, 1e12):
        for p in (1e-10, 1e-4, 0.3, 0.9, 0.9999, 1 - 1e-10):
            assert _rel(student_t_quantile(p, df), float(scipy.stats.t.ppf(p, df))) <= REL


def test_closed_forms_near_one_half() -> None:
    # df = 1 is the Cauchy distribution: t = tan(pi (p - 1/2)); df = 2: t = (2p - 1) /
    # sqrt(2 p (1 - p)) (Johnson, Kotz & Balakrishnan, Continuous Univariate
    # Distributions vol. 2, ch. 28). scipy is off by up to 5e-13 at p = 0.5001 here.
    for k in range(1, 13):
        p = 0.5 + 10.0**-k
        assert _rel(student_t_quantile(p, 1.0), math.tan(math.pi * (p - 0.5))) <= 1e-14
        assert _rel(student_t_quantile(p, 2.0),
                    (2 * p - 1) / math.sqrt(2 * p * (1 - p))) <= 1e-14


@settings(max_examples=200, deadline=None)
@given(p=st.floats(1e-6, 1 - 1e-6), log_df=st.floats(math.log(0.5), math.log(1e6)))
def test_t_quantile_equals_scipy_on_generated_points(p: float, log_df: float) -> None:
    df = math.exp(log_df)
    ref = float(scipy.stats.t.ppf(p, df))
    if abs(p - 0.5) < 1e-3:  # scipy loses digits there (test above); compare absolutely
        assert abs(student_t_quantile(p, df) - ref) <= 1e-12
    else:
        assert _rel(student_t_quantile(p, df), ref) <= REL


@pytest.mark.parametrize("df", [0.5, 1.0, 3.3, 1e4, 1e8])
def test_symmetry_ends_and_monotone(df: float) -> None:
    ps = [1e-8, 1e-3, 0.1, 0.3, 0.45, 0.5, 0.55, 0.7, 0.9, 0.999, 1 - 1e-8]
    ts = [student_t_quantile(p, df) for p in ps]
    assert ts == sorted(ts) and ts[5] == 0.0
    for p in ps[5:]:  # p >= 1/2, so that 1 - p is exact: its mirror image
        mirror = student_t_quantile(1 - p, df)
        if 1 - p >= 0.25:  # the same masses (both subtractions exact): the same bits
            assert mirror == -student_t_quantile(p, df)
        else:
            assert mirror == pytest.approx(-student_t_quantile(p, df), rel=1e-14)
    assert student_t_quantile(0.0, df) == -math.inf
    assert student_t_quantile(1.0, df) == math.inf


def test_infinite_df_is_the_normal_and_the_normal_equals_scipy() -> None:
    for p in (1e-12, 0.001, 0.025, 0.3, 0.5, 0.8, 0.975, 0.9999):
        assert student_t_quantile(p, math.inf) == normal_quantile(p)
        ref = float(scipy.stats.norm.ppf(p))
        assert abs(normal_quantile(p) - ref) <= 1e-15 * max(1.0, abs(ref))
    # The interval helpers: two-sided critical values (1.959964 at 0.95, 2.570582 at
    # 0.95 with 5 df: the printed tables).
    assert z_quantile(0.95) == pytest.approx(1.959963984540054, rel=1e-15)
    assert t_quantile(0.95, 5.0) == pytest.approx(float(scipy.stats.t.ppf(0.975, 5)),
                                                  rel=1e-14)
    assert t_quantile(0.95, math.inf) == z_quantile(0.95)


@pytest.mark.parametrize(("p", "df"), [(0.5, 0.0), (0.5, -1.0), (0.5, math.nan),
                                       (-0.1, 3.0), (1.5, 3.0), (math.nan, 3.0)])
def test_bad_arguments_are_refused(p: float, df: float) -> None:
    with pytest.raises(ValueError):
        student_t_quantile(p, df)
