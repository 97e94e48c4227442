"""``paired_difference`` at scale: the unclustered sign-flip test is linear in n.

``compare`` calls :func:`heritage_eval.stats.paired_difference` for every metric; without
clusters or groups its p-value is scipy's paired permutation test (2,000 sign flips by
default). Called through ``scipy.stats.permutation_test`` with batches of bounded memory
it was quadratic in n (about 2 s at n = 4,000, 14 s at 10,000, and n = 100,000 did not
finish in 10 minutes on the 2-core development machine). This benchmark times

* ``paired_difference`` on n = 10^4 and 10^5 pairs of continuous scores (2,000 draws),
  against the irreducible work of the test: 2,000 plain ``numpy.mean`` calls over
  n values (one per null statistic). Goal: at n = 10^5 at most 50 times that (drawing
  2 x 10^8 random signs and summing in scipy's order costs more than a pairwise mean),
  and time(10^5) / time(10^4) at most 15 (linear: 10; quadratic: 100);
* for reference, the call scipy made before at n = 4,000 (``--no-scipy`` skips it),
  with the p-value of both, which must be equal.

Usage: ``python bench/bench_stats_scale.py [--no-scipy]``; ``BENCH_QUICK=1`` changes
nothing (it takes a few seconds).
"""

from __future__ import annotations

import argparse
import inspect
import time

import numpy as np
import scipy.stats

from heritage_eval.stats import paired_difference

B = 2000
GOAL_RATIO = 50.0
GOAL_GROWTH = 15.0
# scipy >= 1.15 takes rng=, older releases random_state=
_RNG_KW = ("rng" if "rng" in inspect.signature(scipy.stats.permutation_test).parameters
           else "random_state")


def _pairs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    return a, np.clip(a - 0.002 + rng.normal(0.0, 0.3, n), 0.0, 1.0)


def _time_paired(n: int) -> tuple[float, float | None]:
    a, b = _pairs(n)
    start = time.perf_counter()
    r = paired_difference(a, b, n_resamples=B, seed=0)
    return time.perf_counter() - start, r.p_value


def _time_means(n: int, repeat: int = 3) -> float:
    """Best of ``repeat`` runs of B plain numpy means over n values."""
    x = _pairs(n)[0]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(B):
            np.mean(x)
        best = min(best, time.perf_counter() - start)
    return best


def _scipy_before(n: int) -> tuple[float, float]:
    """The call the code made before: permutation_test with batches of bounded memory."""
    a, b = _pairs(n)
    d = a - b
    start = time.perf_counter()
    res = scipy.stats.permutation_test(
        (d,), lambda x, axis=-1: np.mean(x, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=B, batch=max(1, 250_000 // (2 * n)),
        alternative="two-sided", **{_RNG_KW: np.random.default_rng(0)})
    return time.perf_counter() - start, float(res.pvalue)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--no-scipy", action="store_true",
                    help="skip timing the former scipy call at n = 4,000")
    args = ap.parse_args()
    _time_paired(100)  # imports and the draw self-check out of the timings
    t4, _ = _time_paired(10_000)
    t5, p5 = _time_paired(100_000)
    base = _time_means(100_000)
    ratio, growth = t5 / base, t5 / t4
    print(f"paired_difference, {B} sign flips: n = 10^4 {t4:.3f} s, n = 10^5 {t5:.3f} s "
          f"(p = {p5:.4f})")
    print(f"{B} plain numpy means of 10^5 values: {base:.4f} s")
    if not args.no_scipy:
        a, b = _pairs(4000)
        t_old, p_old = _scipy_before(4000)
        start = time.perf_counter()
        p_new = paired_difference(a, b, n_resamples=B, seed=0).p_value
        t_new = time.perf_counter() - start
        print(f"n = 4,000: scipy.stats.permutation_test as called before {t_old:.2f} s "
              f"(p = {p_old:.6f}); now {t_new:.3f} s (p = {p_new:.6f}); "
              f"same p: {p_old == p_new}")
    print(f"goal time(n = 10^5) <= {GOAL_RATIO:.0f} x {B} numpy means: ratio "
          f"{ratio:.1f} -> {'met' if ratio <= GOAL_RATIO else 'NOT met'}")
    print(f"goal time(10^5) / time(10^4) <= {GOAL_GROWTH:.0f} (linear 10, quadratic 100): "
          f"{growth:.1f} -> {'met' if growth <= GOAL_GROWTH else 'NOT met'}")


if __name__ == "__main__":
    main()
