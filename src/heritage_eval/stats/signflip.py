"""Sign-flip (paired permutation) p-values in O(U × B) time and bounded memory.

Two-sided p-value as in ``scipy.stats.permutation_test``: ``min(1, 2 * min(P(T* <= t),
P(T* >= t)))`` with its relative tie tolerance ``100 eps |t|``; exact over all 2^U sign
vectors when ``2^U <= B`` (B = ``n_resamples``), otherwise Monte-Carlo with
``(count + 1) / (B + 1)`` (Phipson & Smyth 2010, "Permutation P-values should never be
zero").

:func:`samples_p_value` is ``scipy.stats.permutation_test((d,), mean,
permutation_type="samples", n_resamples=B, rng=rng)`` with the same random signs, so
the same p-value for the same seed, without scipy's Python loop over the n
observations per batch (which, with batches of bounded memory, made the call
quadratic in n: 2 s at n = 4,000, 14 s at 10,000). scipy draws each sign by shuffling
the pair ``(d_i, -d_i)``: one 32-bit draw per pair, ``j = u & 1``, the pair swapped when
``j == 0`` (numpy's Fisher–Yates on two items). With numpy's PCG64 every 64-bit output
serves two such draws, low half first, so the signs are read straight from
``random_raw``: bit 0 of the 32-bit word gives ``-d_i``, bit 1 gives ``+d_i``. A
self-check against ``Generator.permuted`` guards this reading; where it fails (another
numpy, another bit generator, a half-used 64-bit word) the signs are drawn with
``Generator.permuted`` as scipy does, in chunks: the same signs, only slower.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import numpy.typing as npt

from heritage_eval.stats.inputs import FloatArray

__all__ = ["p_floor", "samples_p_value", "sign_flip_p_value"]

#: Largest number of signs drawn at once by :func:`samples_p_value` (rows x n): ~8 MB
#: of float64.
CHUNK = 1 << 20
# The chunk (rows x units) of sign_flip_p_value's draws: rng.integers draws differently
# in other chunks, so changing it would change every stored Monte-Carlo p-value.
_UNIT_CHUNK = 250_000
_SIGNS = np.array([-1.0, 1.0])


def two_sided(null: FloatArray, observed: float, adjustment: int) -> float:
    """scipy.stats.permutation_test's two-sided p-value, with its relative tie tolerance."""
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    total = null.size + adjustment
    less = (int(np.count_nonzero(null <= observed + gamma)) + adjustment) / total
    greater = (int(np.count_nonzero(null >= observed - gamma)) + adjustment) / total
    return float(min(1.0, 2.0 * min(less, greater)))


def _exact_p(w: FloatArray, observed: float) -> float:
    """Every one of the 2^U sign vectors of ``w`` (shape (U,)), identity included."""
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=w.size)), dtype=np.float64)
    return two_sided(signs @ w, observed, 0)


def sign_flip_p_value(
    weighted_unit_sums: FloatArray, n_resamples: int, rng: np.random.Generator
) -> float:
    """Two-sided sign-flip p-value of the statistic ``T(s) = sum_u s_u w_u``, s in {-1, 1}^U.

    ``weighted_unit_sums`` (shape (U,)) holds each unit's contribution to the statistic
    at s = 1 (e.g. a cluster's sum of differences over N). Exact when 2^U <= n_resamples
    (every sign vector, identity included, no adjustment), else Monte-Carlo with +1;
    signs drawn with ``rng.integers(0, 2)`` in chunks of at most :data:`CHUNK` entries.
    """
    w = weighted_unit_sums
    observed = float(w.sum())
    k = w.size
    if k == 0 or bool(np.all(w == 0.0)):
        return 1.0
    if 2**k <= n_resamples:
        return _exact_p(w, observed)
    null = np.empty(n_resamples, dtype=np.float64)
    rows = max(1, _UNIT_CHUNK // k)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        flips = rng.integers(0, 2, size=(stop - start, k)).astype(np.float64) * 2.0 - 1.0
        null[start:stop] = flips @ w
    return two_sided(null, observed, 1)


def _raw_bits(rng: np.random.Generator, count: int) -> npt.NDArray[np.unsignedinteger]:
    """The low bits of the next ``count`` 32-bit draws of a PCG64 ``rng`` whose state
    holds no half-used 64-bit word: each 64-bit output read as two little-endian 32-bit
    words, low half first, as numpy's ``next_uint32`` serves them."""
    raw = rng.bit_generator.random_raw((count + 1) // 2)
    words = np.asarray(raw, dtype="<u8").view("<u4")[:count]
    bits: npt.NDArray[np.unsignedinteger] = np.bitwise_and(words, np.uint32(1))
    return bits


def _permuted_bits(rng: np.random.Generator, rows: int, n: int
                   ) -> npt.NDArray[np.unsignedinteger]:
    """scipy's draw itself: shuffle each pair (0, 1); bit 1 where 0 stays first."""
    pairs = np.tile(np.arange(2, dtype=np.int8), (rows, n, 1))
    return (rng.permuted(pairs, axis=-1)[..., 0] == 0).astype(np.uint8).reshape(-1)


@functools.cache
def _raw_reading_holds() -> bool:
    """Whether :func:`_raw_bits` reproduces ``Generator.permuted`` on this numpy."""
    for seed, rows, n in ((0, 3, 7), (1, 2, 5), (2, 4, 33)):
        want = _permuted_bits(np.random.default_rng(seed), rows, n)
        if not np.array_equal(_raw_bits(np.random.default_rng(seed), rows * n), want):
            return False
    return True


def _fast_draw_ok(rng: np.random.Generator) -> bool:
    state = rng.bit_generator.state
    return (state.get("bit_generator") == "PCG64" and not state.get("has_uint32", 0)
            and _raw_reading_holds())


def samples_p_value(d: FloatArray, n_resamples: int, rng: np.random.Generator) -> float:
    """``scipy.stats.permutation_test((d,), np.mean, permutation_type="samples",
    n_resamples=n_resamples, rng=rng, alternative="two-sided").pvalue`` for ``d`` of
    shape (n,), n >= 1: the same signs for the same ``rng`` state (module docstring),
    in O(n × n_resamples) time and O(:data:`CHUNK`) memory. Exact over the 2^n sign
    vectors when 2^n <= n_resamples. Each null mean is summed left to right as in scipy
    (:func:`_sequential_means`), so ties are broken alike and the p-value is scipy's to
    the last bit (checked against scipy on generated data in tests/stats)."""
    n = d.size
    observed = float(np.mean(d))
    if 2**n <= n_resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)), dtype=np.float64)
        return two_sided(_sequential_means(signs, d), observed, 0)
    fast = _fast_draw_ok(rng)
    rows = max(2, CHUNK // n // 2 * 2)  # even: a chunk uses whole 64-bit words
    null = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        bits = _raw_bits(rng, (stop - start) * n) if fast else _permuted_bits(
            rng, stop - start, n)
        null[start:stop] = _sequential_means(_SIGNS[bits.reshape(stop - start, n)], d)
    return two_sided(null, observed, 1)


def _sequential_means(signs: FloatArray, d: FloatArray) -> FloatArray:
    """``mean(signs[r] * d)`` per row r (``signs`` shape (R, n), overwritten), summed
    left to right as numpy sums scipy's batch of sign-flipped samples (its observations
    lie along a strided axis, so the reduction is sequential, not pairwise): the same
    rounding, so null statistics that tie the observed one tie it as in scipy."""
    signs *= d
    np.cumsum(signs, axis=1, out=signs)
    return signs[:, -1] / d.size


def p_floor(active_units: int, n_resamples: int) -> float:
    """The smallest p-value the sign-flip test can return with ``active_units`` units
    whose contribution is not zero: ``2 / 2^U'`` (only the observed signs, or their
    mirror, reach the observed extreme), and at least ``2 / (B + 1)`` when
    Monte-Carlo (``2^U > B``, U counting the zero units too: pass ``n_resamples = 0``
    for exact enumeration). 1.0 for no active unit."""
    exact = 1.0 if active_units <= 0 else min(1.0, 2.0 ** (1 - active_units))
    return exact if n_resamples <= 0 else max(exact, min(1.0, 2.0 / (n_resamples + 1)))
