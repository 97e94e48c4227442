"""A metric value together with what the metric had to do to produce it.

A metric that meets an input it cannot score returns :class:`MetricValue` with
``value=None`` and a ``reason`` (the benchmark then marks that metric *unscored*), never a
silent 0.0. A metric that could score but had to bend the input (truncate an over-long
text, clip a cosine that rounding pushed past 1) returns the value and names what it did
in ``flags``. Benchmarks copy the flags to ``SampleRecord.details["metric_flags"]`` so
they show in ``samples.jsonl``. The flag names are listed below and in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: BERTScore: a text was longer than the model's positions; its tail was cut off.
BERTSCORE_TRUNCATED = "bertscore_truncated"
#: BERTScore: a text is empty, blank, or has no token in the model's vocabulary
#: (e.g. only NUL or a lone combining mark); bert-score would have returned 0 for it.
BERTSCORE_EMPTY = "bertscore_empty"
#: BERTScore: a text holds a lone surrogate (not valid Unicode); the tokenizer cannot
#: read it, so the pair has no score.
BERTSCORE_INVALID_TEXT = "bertscore_invalid_text"
#: Cosine: one vector is all zeros (direction undefined); no value.
COSINE_ZERO_VECTOR = "cosine_zero_vector"
#: Cosine: a vector holds NaN or +-inf; no value.
COSINE_NON_FINITE = "cosine_non_finite"
#: Cosine: floating-point rounding put the cosine outside [-1, 1]; clipped back.
COSINE_CLIPPED = "cosine_clipped"
#: MUSE open answers: a negative cosine was raised to 0 (the score range is [0, 1]).
COSINE_NEGATIVE_AS_ZERO = "cosine_negative_as_0"


@dataclass(frozen=True)
class MetricValue:
    """One metric result. ``value``: the score (``None`` = not computed); ``flags``:
    names of the adjustments made (constants of this module); ``reason``: why ``value``
    is ``None`` (``None`` when scored)."""

    value: float | None
    flags: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def scored(self) -> bool:
        return self.value is not None


def merge_flags(*groups: Iterable[str]) -> list[str]:
    """The distinct flags of ``groups`` in first-seen order (for a record's list)."""
    return list(dict.fromkeys(f for g in groups for f in g))
