"""Input checks shared by the estimators: values, labels, options and declared ranges.

Every public estimator validates its inputs here first, so that a bad value is refused
with a message naming its position instead of turning into a NaN interval.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
Values = Sequence[float] | npt.NDArray[Any]
#: One label per value: any hashables, or an integer array of codes.
Labels = Sequence[Hashable] | npt.NDArray[Any]
#: A declared range ``(low, high)`` of the values, or None when the values are unbounded.
Bounds = tuple[float, float] | None

#: Values this far (relative to the range's width) outside the declared range are read
#: as rounding and moved onto the nearer end; farther ones are refused.
BOUNDS_TOLERANCE = 1e-9

#: Data whose spread ``max - min`` is at most this share of their scale are constant:
#: the scale is the declared range's width or its largest end in absolute value,
#: whichever is larger (without a range, ``max(1, max |x|)``). 1e-12 is about 4,500
#: ulps at scale 1: far above the rounding of sums such as ``0.1 + 0.2`` and far below
#: any difference a score can make (docs/intervals.md, "Constant data").
CONSTANT_TOLERANCE = 1e-12


def as_values(values: Values, name: str = "values") -> FloatArray:
    """Validate a 1-D sequence of numbers (floats, 0/1 ints, bools) into float64.

    Raises ValueError naming the first position holding None, NaN, an infinity or a
    non-number, and when an array is not 1-D.
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        if values.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
        x = values.astype(np.float64)
    else:
        seq = values.tolist() if isinstance(values, np.ndarray) else list(values)
        x = np.empty(len(seq), dtype=np.float64)
        for i, v in enumerate(seq):
            if v is None:
                raise ValueError(f"{name}[{i}] is None; filter missing values before calling")
            if isinstance(v, str | bytes):
                raise ValueError(f"{name}[{i}] is not a number: {v!r}")
            try:
                x[i] = float(v)
            except (TypeError, ValueError) as err:
                raise ValueError(f"{name}[{i}] is not a number: {v!r}") from err
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] is {float(x[i])!r}; filter NaN/infinite values first")
    return x


def as_codes(labels: Labels, name: str, n: int) -> tuple[IntArray, int]:
    """Map labels to integer codes in order of first appearance; return (codes, count).

    Raises ValueError when the length differs from ``n`` or a label is None, NaN or
    unhashable (the message names the position).
    """
    if isinstance(labels, np.ndarray) and labels.ndim == 1 and labels.dtype.kind in "iu":
        return _int_codes(labels, name, n)
    seq = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)
    if len(seq) != n:
        raise ValueError(f"{name} has {len(seq)} entries but there are {n} values")
    index: dict[Hashable, int] = {}
    codes = np.empty(n, dtype=np.intp)
    for i, lab in enumerate(seq):
        if lab is None or (isinstance(lab, float) and math.isnan(lab)):
            raise ValueError(f"{name}[{i}] is {lab!r}; every observation needs a label")
        try:
            codes[i] = index.setdefault(lab, len(index))
        except TypeError as err:
            raise ValueError(f"{name}[{i}] is not hashable: {lab!r}") from err
    return codes, len(index)


def first_labels(labels: Labels, codes: IntArray, count: int) -> list[Hashable]:
    """The label of each code ``0..count-1`` (codes from :func:`as_codes` of ``labels``)."""
    if isinstance(labels, np.ndarray) and labels.ndim == 1:
        # the first position of each code, by counting: no list of every label, no sort
        return list(labels[_first_positions(codes, count)].tolist())
    seq = list(labels)
    out: list[Hashable] = [None] * count
    _, first = np.unique(codes, return_index=True)
    for c, i in enumerate(first.tolist()):
        out[c] = seq[i]
    return out


#: Non-negative integer labels below this are coded by counting (:func:`_dense_codes`),
#: larger or negative ones by sorting; the codes are the same.
DENSE_SPAN = 1 << 20


def _first_positions(values: npt.NDArray[Any], span: int) -> IntArray:
    """For each ``v`` in ``0..span-1``, the first position of ``v`` in ``values``
    (non-negative integers below ``span``), or ``values.size`` where it does not occur.
    Memory: ``span`` plus one index per value."""
    first = np.full(span, values.size, dtype=np.intp)
    np.minimum.at(first, values, np.arange(values.size, dtype=np.intp))
    return first


def _dense_codes(labels: npt.NDArray[Any], span: int) -> tuple[IntArray, int]:
    """:func:`_int_codes` for labels in ``0..span-1``: the first position of each value
    found by counting, the values ranked by it (the codes of :func:`as_codes`). At
    100,000 labels this holds ~1 MiB at once where the sort held ~3 MiB."""
    first = _first_positions(labels, span)
    present = np.flatnonzero(first < labels.size)
    rank = np.empty(span, dtype=np.intp)
    rank[present[np.argsort(first[present], kind="stable")]] = np.arange(
        present.size, dtype=np.intp)
    return rank[labels], int(present.size)


def _int_codes(labels: npt.NDArray[Any], name: str, n: int) -> tuple[IntArray, int]:
    """:func:`as_codes` of an integer array, without a Python loop: the same codes (in
    order of first appearance)."""
    if labels.size != n:
        raise ValueError(f"{name} has {labels.size} entries but there are {n} values")
    if n and int(labels.min()) >= 0 and (span := int(labels.max()) + 1) <= DENSE_SPAN:
        return _dense_codes(labels, span)
    uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(uniq.size, dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(uniq.size, dtype=np.intp)
    return rank[inverse.reshape(-1)], int(uniq.size)


def check_confidence(confidence: float) -> None:
    """Raise ValueError unless 0 < confidence < 1."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")


def check_bounds(bounds: Bounds) -> Bounds:
    """Validate a declared range: None, or finite ``(low, high)`` with low < high.

    Returns it as a tuple of two floats (or None); raises ValueError otherwise.
    """
    if bounds is None:
        return None
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError) as err:
        raise ValueError(f"bounds must be None or (low, high), got {bounds!r}") from err
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"bounds must be finite with low < high, got {bounds!r}")
    return (low, high)


def fit_to_bounds(x: FloatArray, bounds: Bounds, name: str = "values") -> FloatArray:
    """``x`` with values within :data:`BOUNDS_TOLERANCE` of the range moved onto it.

    Raises ValueError naming the first value outside the declared range (a metric whose
    declared range is wrong must be fixed, not silently clipped).
    """
    if bounds is None or x.size == 0:
        return x
    low, high = bounds
    tol = BOUNDS_TOLERANCE * (high - low)
    bad = np.flatnonzero((x < low - tol) | (x > high + tol))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] = {float(x[i])!r} lies outside the declared range "
                         f"[{low}, {high}]; pass the metric's true bounds")
    return np.clip(x, low, high)


def constant_tolerance(x: FloatArray, bounds: Bounds) -> float:
    """The largest spread ``max - min`` of ``x`` (shape (n,), n >= 1) read as rounding
    noise: :data:`CONSTANT_TOLERANCE` times ``max(hi - lo, |lo|, |hi|)`` with a declared
    range, else times ``max(1, max |x|)``. In the units of ``x``."""
    if bounds is None:
        scale = max(1.0, float(np.max(np.abs(x))))
    else:
        lo, hi = bounds
        scale = max(hi - lo, abs(lo), abs(hi))
    return CONSTANT_TOLERANCE * scale


def is_constant(x: FloatArray, bounds: Bounds) -> bool:
    """Whether ``x`` (shape (n,), n >= 1) is constant up to rounding: ``max - min`` at
    most :func:`constant_tolerance`. Exactly equal values always are."""
    spread = float(np.max(x)) - float(np.min(x))
    return spread == 0.0 or spread <= constant_tolerance(x, bounds)


def seq_mean(x: FloatArray) -> float:
    """Mean by a plain left-to-right sum, as the benchmarks' reference evaluators compute
    it (``sum(scores) / len(scores)``), so that point estimates equal their numbers to
    the last bit (``np.mean`` sums pairwise and can differ in the last place)."""
    return sum(x.tolist()) / len(x)
