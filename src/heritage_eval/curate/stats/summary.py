"""Numeric summaries of a list of values (min / median / max / mean) and count tables."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    """``n`` values and their ``minimum``, ``median``, ``maximum`` and ``mean``; all
    ``None`` when ``n == 0``. The median of an even count is the mean of the two middle
    values (:func:`statistics.median`), so it may be a half-integer."""

    n: int
    minimum: float | None
    median: float | None
    maximum: float | None
    mean: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        """``{"n", "min", "median", "max", "mean"}`` (JSON-ready; mean to 4 decimals)."""
        return {"n": self.n, "min": self.minimum, "median": self.median,
                "max": self.maximum,
                "mean": None if self.mean is None else round(self.mean, 4)}


def summarize(values: Sequence[float]) -> Summary:
    """:class:`Summary` of ``values`` (any order; empty gives ``n = 0`` and ``None``)."""
    if not values:
        return Summary(0, None, None, None, None)
    return Summary(len(values), min(values), statistics.median(values), max(values),
                   statistics.fmean(values))


def counts(values: Iterable[str | None], missing: str = "(none)") -> dict[str, int]:
    """``{value: count}`` sorted by count (descending) then value; ``None`` and empty
    strings are counted under ``missing``."""
    c = Counter(v if v not in (None, "") else missing for v in values)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0]))))


def histogram(values: Sequence[int]) -> dict[str, int]:
    """``{str(value): count}`` of whole-number values, in increasing value order (the
    JSON form of a distribution such as people per image)."""
    c = Counter(values)
    return {str(k): c[k] for k in sorted(c)}
