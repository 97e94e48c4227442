"""Quantiles of the normal and Student t distributions, in pure Python (no scipy).

The intervals need ``t_{df, p}`` for any real ``df > 0`` (Welch–Satterthwaite and
Bell–McCaffrey degrees of freedom are fractional) and the normal ``z_p``. Both are
computed here by one code path, so that every interval is the same number whichever
optional packages are installed (``pip install heritage-eval`` has no scipy).

* Normal: :meth:`statistics.NormalDist.inv_cdf` (Wichura 1988, "Algorithm AS 241: The
  percentage points of the normal distribution", Applied Statistics 37(3); about 1e-16
  relative).
* Student t, large df: the Cornish–Fisher expansion in ``1/df`` to the fourth order
  (A&S 26.7.5, ``t ≈ z + g1(z)/df + … + g4(z)/df⁴``), wherever its last term is at most
  :data:`EXPANSION_TOLERANCE` (2^-53) of ``|z|``: there the omitted terms, smaller
  again by about ``z²/df`` (at most 6e-4 there), are below the rounding of a double.
  This holds for every p from 1e-4 to 1 - 1e-4 from df ≈ 2.7e4 on, and for every
  double p from df ≈ 2.5e6 on: there the continued fraction below would need about
  ``sqrt(df)`` terms and, at ``x`` within 1e-6 of 1, lose up to 1e-10 to the rounding
  of ``x`` (where Newton is used, ``1 - x`` stays above 5e-4).
* Student t, otherwise: Newton's method on the log of a tail mass as a
  function of ``u = ln t``, started from a closed-form approximation. For ``t > 0``,
  with ``a = df/2``, ``x = df/(df+t²)`` and ``y = t²/(df+t²) = 1 - x``:

  - upper tail ``Q(t) = P(T > t) = I_x(a, 1/2) / 2``,
  - centre ``C(t) = P(0 < T < t) = I_y(1/2, a) / 2 = 1/2 - Q(t)``,
  - ``t f(t) = x^a y^(1/2) / B(a, 1/2)`` (f the density), so
    ``d ln Q / du = -t f / Q`` and ``d ln C / du = t f / C``

  (Abramowitz & Stegun 1964, §26.5 and §26.7). The regularized incomplete beta
  function ``I`` is its continued fraction evaluated by the modified Lentz method, on
  the side where it converges (``x < (a+1)/(a+b+2)``), the other side by the symmetry
  ``I_x(a, b) = 1 - I_{1-x}(b, a)`` (Press, Teukolsky, Vetterling & Flannery,
  "Numerical Recipes", 3rd ed. 2007, §6.4 ``betai``/``betacf``; Lentz 1976, Applied
  Optics 15(3)). The mass that is solved for is the smaller one (``C`` when
  ``|p - 1/2| <= 1/4``, else ``Q``), so its relative precision is kept near ``p = 1/2``
  and in the far tail; ``ln x`` and ``ln y`` come from ``ln(t²/df)`` by a softplus, so
  a quantile beyond 1e308 is ``inf`` rather than an overflow. ``ln B(a, 1/2)`` for
  ``a >= 10`` uses the difference of the Stirling series of ``ln Γ(a)`` and
  ``ln Γ(a + 1/2)`` (A&S 6.1.41), which keeps about 1e-16 absolute where
  :func:`math.lgamma` of two values near 6e6 (df = 1e6) would lose 1e-9.
  Newton takes 3 to 12 evaluations (12 at p = 1e-300); a bracket with bisection
  guards it against a step out of the interval known to hold the root.

Accuracy: against a 40-digit mpmath root of the same equation, at most 2.2e-14 relative
over df from 0.05 to 1e9 and p from 1e-10 to 1 - 1e-10; the test compares with
``scipy.stats.t.ppf`` (tests/stats/test_student_t.py). Cost: under 0.1 ms a quantile.
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["EXPANSION_TOLERANCE", "normal_quantile", "student_t_quantile"]

#: The Cornish–Fisher expansion is the t quantile where its last term ``g4(z)/df⁴`` is
#: at most this share of ``|z|`` (module docstring).
EXPANSION_TOLERANCE = 2.0**-53

_STANDARD_NORMAL = NormalDist()
#: Lentz's "tiny" guard against a zero denominator, and the stopping tolerance.
_FPMIN = 1e-300
_CF_EPS = 1e-16
_CF_MAX_TERMS = 100_000
_NEWTON_MAX = 200
#: A Newton step this small leaves an error of about its square: done.
_NEWTON_DONE = 1e-9
#: The largest Newton step in ``u = ln t`` (t changes at most e^20-fold in one step).
_MAX_STEP = 20.0
#: The largest ``u = ln t`` a double holds; a root beyond it is +inf.
_U_MAX = math.log(1.7976931348623157e308)
_HALF_LN_PI = 0.5 * math.log(math.pi)
#: Stirling-series coefficients B_2k / (2k (2k-1)), k = 1..8 (A&S 6.1.41).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)


def normal_quantile(p: float) -> float:
    """``Φ⁻¹(p)`` of the standard normal, for ``0 < p < 1`` (``-inf``/``+inf`` at 0/1).

    Raises ValueError when p lies outside [0, 1] or is NaN.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    if p in (0.0, 1.0):
        return math.inf if p == 1.0 else -math.inf
    return _STANDARD_NORMAL.inv_cdf(p)


def student_t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf
    (p, df)``): ``df`` any real > 0 (``inf`` = the normal), ``p`` in [0, 1]; 0.0 at
    p = 1/2, ``-inf``/``+inf`` at p = 0/1 (and ``±inf`` when the quantile exceeds the
    largest double, which happens for df below about 0.1 far in the tail).

    Raises ValueError when df is not > 0 or p lies outside [0, 1] (or either is NaN).
    """
    if not df > 0.0:
        raise ValueError(f"df must be > 0, got {df!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    if p == 0.5:
        return 0.0
    if p in (0.0, 1.0):
        return math.inf if p == 1.0 else -math.inf
    if math.isinf(df):
        return normal_quantile(p)
    sign = 1.0 if p > 0.5 else -1.0
    z = normal_quantile(p)
    if abs(_g4(z) / z) / df / df / df / df <= EXPANSION_TOLERANCE:
        return _cornish_fisher(z, df)
    # Upper-tail mass and centre mass of |t|; both exact subtractions where used.
    upper = 1.0 - p if p > 0.5 else p
    centre = p - 0.5 if p > 0.5 else 0.5 - p
    return sign * _positive_root(df, centre if centre <= upper else upper,
                                 centre <= upper)


def _cornish_fisher(z: float, df: float) -> float:
    """A&S 26.7.5: ``t ≈ z + g1/df + g2/df² + g3/df³ + g4/df⁴`` (z the normal quantile)."""
    z2 = z * z
    g1 = z * (z2 + 1.0) / 4.0
    g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0
    g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0
    return z + (g1 + (g2 + (g3 + _g4(z) / df) / df) / df) / df


def _g4(z: float) -> float:
    """The fourth-order Cornish–Fisher coefficient of A&S 26.7.5."""
    z2 = z * z
    return z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0


def _positive_root(df: float, target: float, centre: bool) -> float:
    """The t > 0 with ``C(t) = target`` (``centre``) or ``Q(t) = target``; Newton in
    ``u = ln t`` on ``ln(mass) - ln(target)``, guarded by a bracket (module docstring)."""
    a = 0.5 * df
    ln_beta = _ln_beta_half(a)
    ln_target = math.log(target)
    u = _start(df, ln_beta, target, centre)
    lo, hi = -math.inf, math.inf
    for _ in range(_NEWTON_MAX):
        if u > _U_MAX:
            return math.inf
        c_mass, q_mass, tf = _masses(u, df, ln_beta)
        mass = c_mass if centre else q_mass
        if (mass > target) == centre:  # C grows with t, Q shrinks: u is past the root
            hi = u
        else:
            lo = u
        if mass > 0.0 and tf > 0.0:
            g = math.log(mass) - ln_target
            if g == 0.0:
                break
            step = -g * mass / tf if centre else g * mass / tf
            new = u + max(-_MAX_STEP, min(_MAX_STEP, step))
        else:  # an underflow far from the root: no slope, walk towards it
            new = u + (_MAX_STEP if lo == u else -_MAX_STEP)
        if not lo < new < hi:  # outside the bracket: bisect (a guard; concavity avoids it)
            new = 0.5 * (lo + hi) if math.isfinite(lo + hi) else u
        step, u = new - u, new
        if abs(step) <= _NEWTON_DONE:
            break
    return math.inf if u > _U_MAX else math.exp(u)


def _start(df: float, ln_beta: float, target: float, centre: bool) -> float:
    """A starting ``u = ln t``: the Cornish–Fisher value for df >= 4, else the first
    term of the series at t -> 0 (``C ≈ f(0) t``) or t -> inf
    (``Q ≈ df^(df/2 - 1) t^(-df) / B``)."""
    p = 0.5 + target if centre else 1.0 - target
    if df >= 4.0:
        t = _cornish_fisher(normal_quantile(p), df)
        if t > 0.0 and math.isfinite(t):
            return math.log(t)
    if centre:  # f(0) = 1 / (sqrt(df) B(df/2, 1/2))
        return math.log(target) + 0.5 * math.log(df) + ln_beta
    return 0.5 * math.log(df) - (math.log(df) + ln_beta + math.log(target)) / df


def _masses(u: float, df: float, ln_beta: float) -> tuple[float, float, float]:
    """``(C(t), Q(t), t f(t))`` at ``t = e^u`` (module docstring): one of C, Q from the
    continued fraction that converges, the other as ``1/2 -`` it."""
    a = 0.5 * df
    s = 2.0 * u - math.log(df)  # ln(t² / df)
    ln_x = -_softplus(s)  # ln(df / (df + t²))
    ln_y = -_softplus(-s)  # ln(t² / (df + t²))
    tf = math.exp(a * ln_x + 0.5 * ln_y - ln_beta)
    x, y = math.exp(ln_x), math.exp(ln_y)
    if x < (a + 1.0) / (a + 2.5):
        q_mass = 0.5 * tf * _beta_cf(a, 0.5, x) / a
        return 0.5 - q_mass, q_mass, tf
    c_mass = tf * _beta_cf(0.5, a, y)  # I_y(1/2, a) / 2 = (tf cf / (1/2)) / 2
    return c_mass, 0.5 - c_mass, tf


def _softplus(s: float) -> float:
    """``ln(1 + e^s)`` without overflow."""
    return s + math.log1p(math.exp(-s)) if s > 0.0 else math.log1p(math.exp(s))


def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of ``I_x(a, b)`` (``I = x^a (1-x)^b cf / (a B(a, b))``),
    by the modified Lentz method (Numerical Recipes §6.4 ``betacf``); for
    ``x < (a+1)/(a+b+2)``."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) >= _FPMIN else _FPMIN)
    h = d
    for m in range(1, _CF_MAX_TERMS + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) >= _FPMIN else _FPMIN)
        c = 1.0 + aa / c
        c = c if abs(c) >= _FPMIN else _FPMIN
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) >= _FPMIN else _FPMIN)
        c = 1.0 + aa / c
        c = c if abs(c) >= _FPMIN else _FPMIN
        delta = d * c
        h *= delta
        if abs(delta - 1.0) <= _CF_EPS:
            return h
    return h  # not reached: about sqrt(df) terms suffice where it is used


def _ln_beta_half(a: float) -> float:
    """``ln B(a, 1/2) = ln Γ(a) + ln Γ(1/2) - ln Γ(a + 1/2)`` for a > 0; for a >= 10 by
    the Stirling series of the difference (module docstring)."""
    if a < 10.0:
        return math.lgamma(a) + _HALF_LN_PI - math.lgamma(a + 0.5)
    # ln Γ(z) = (z - 1/2) ln z - z + ln(2π)/2 + S(z)  =>  ln Γ(a) - ln Γ(a + 1/2)
    #   = -ln(a)/2 - a log1p(1/(2a)) + 1/2 + S(a) - S(a + 1/2)
    diff = (-0.5 * math.log(a) + (0.5 - a * math.log1p(0.5 / a))
            + _stirling_tail(a) - _stirling_tail(a + 0.5))
    return diff + _HALF_LN_PI


def _stirling_tail(z: float) -> float:
    """``S(z) = sum_k B_2k / (2k (2k-1) z^(2k-1))`` (8 terms; for z >= 10 the next is
    below 1e-19)."""
    inv2 = 1.0 / (z * z)
    acc = 0.0
    for coef in reversed(_STIRLING):
        acc = acc * inv2 + coef
    return acc / z
