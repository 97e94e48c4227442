"""Error analysis beyond the paper's tables (our definitions; the paper gives none).

- Edit operations: insertions / deletions / substitutions of the minimal alignment of the
  normalised ground truth to the normalised prediction (``metrics.text.align``), summed.
- Hallucination rate (OUR definition): inserted tokens / predicted tokens, i.e. the share
  of the output that has no counterpart in the ground truth. Pooled over samples (sum of
  insertions / sum of predicted tokens), ``None`` when nothing was predicted.
- Simplified/traditional-only substitutions: substituted pairs ``(a, b)`` with ``a != b``
  but equal after OpenCC ``t2s`` (opencc-python-reimplemented), as a share of all
  substitutions; ``None`` when there is no substitution. With ``ignore_st`` on, both sides
  are already simplified, so this share is 0.
- Breakdown by ``script`` and ``period`` (sample metadata) when the release has them:
  per value, the plain mean NED / F1 over scored samples.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from heritage_eval.benchmarks.ancient_bench.normalize import to_simplified

if TYPE_CHECKING:
    from heritage_eval.benchmarks.ancient_bench.records import RowLike

#: Metadata fields broken down when present.
BREAKDOWN_FIELDS = ("script", "period")


@functools.lru_cache(maxsize=8192)  # more distinct characters than most releases hold
def _simplified(token: str) -> str:
    return to_simplified(token)


def is_st_variant(a: str, b: str) -> bool:
    """True when two different tokens are the same character in simplified form
    (e.g. ``"會"`` and ``"会"``); special tokens and equal tokens give False."""
    if a == b or len(a) != 1 or len(b) != 1:
        return False
    return _simplified(a) == _simplified(b)


def st_only_substitutions(pairs: Iterable[tuple[str, str]]) -> int:
    """How many ``(reference, prediction)`` substitution pairs are only a
    simplified/traditional difference."""
    simplified = _simplified
    return sum(1 for a, b in pairs
               if a != b and len(a) == 1 and len(b) == 1 and simplified(a) == simplified(b))


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


class _Profile:
    """Running sums of :func:`error_profile` (integers: the order does not matter)."""

    __slots__ = ("dels", "gt", "ins", "n", "pred", "st", "subs")

    def __init__(self) -> None:
        self.n = self.ins = self.dels = self.subs = self.st = self.pred = self.gt = 0

    def add(self, r: RowLike) -> None:
        self.n += 1
        self.ins += r.insertions or 0
        self.dels += r.deletions or 0
        self.subs += r.substitutions or 0
        self.st += r.st_only_substitutions or 0
        self.pred += r.n_pred_tokens or 0
        self.gt += r.n_gt_tokens or 0

    def block(self) -> dict[str, Any]:
        return {"n": self.n, "insertions": self.ins, "deletions": self.dels,
                "substitutions": self.subs, "pred_tokens": self.pred, "gt_tokens": self.gt,
                "hallucination_rate": _ratio(self.ins, self.pred),
                "st_only_substitutions": self.st, "st_only_share": _ratio(self.st, self.subs)}


def error_profile(records: Iterable[RowLike]) -> dict[str, Any]:
    """Pooled edit operations of the scored ``records``.

    Returns ``n``, ``insertions``, ``deletions``, ``substitutions``, ``pred_tokens``,
    ``gt_tokens``, ``hallucination_rate`` (fraction or ``None``), ``st_only_substitutions``
    and ``st_only_share`` (fraction of substitutions, or ``None``). One pass; no row is
    kept (``records`` may be a :class:`~.fact_table.FactTable` of 270,000 rows).
    """
    profile = _Profile()
    for r in records:
        if r.state.value == "scored":
            profile.add(r)
    return profile.block()


def breakdown(records: Iterable[RowLike], field: str) -> dict[str, dict[str, Any]]:
    """Per value of metadata ``field``: ``n``, mean ``ned_score`` and ``f1`` (fractions)
    and ``hallucination_rate`` over scored samples; empty when no sample has the field.
    The means are ``sum()`` over the scores in record order (kept as doubles, not rows)."""
    groups: dict[str, tuple[array[float], array[float], _Profile]] = {}
    for r in records:
        value = r.metadata.get(field)
        if r.state.value == "scored" and value not in (None, ""):
            key = str(value)
            if key not in groups:
                groups[key] = (array("d"), array("d"), _Profile())
            ned, f1, profile = groups[key]
            ned.append(r.ned_score or 0.0)
            f1.append(r.f1 or 0.0)
            profile.add(r)
    out: dict[str, dict[str, Any]] = {}
    for value in sorted(groups):
        ned, f1, profile = groups[value]
        out[value] = {
            "n": len(ned),
            "ned_score": sum(ned) / len(ned),
            "f1": sum(f1) / len(f1),
            "hallucination_rate": profile.block()["hallucination_rate"],
        }
    return out


def analyse(records: Iterable[RowLike], categories: list[str]) -> dict[str, Any]:
    """Analysis block of one model: ``overall`` and ``per_category`` error profiles, and
    ``by_script`` / ``by_period`` breakdowns (only the fields some sample has).
    ``records`` is iterated once per block (so it must be re-iterable, e.g. a list or a
    :class:`~.fact_table.FactRows`); no list of rows is built."""
    overall = _Profile()
    per_category = {c: _Profile() for c in categories}
    for r in records:
        if r.state.value == "scored":
            overall.add(r)
            if (profile := per_category.get(r.category)) is not None:
                profile.add(r)
    out: dict[str, Any] = {
        "overall": overall.block(),
        "per_category": {c: p.block() for c, p in per_category.items()},
    }
    for field in BREAKDOWN_FIELDS:
        table = breakdown(records, field)
        if table:
            out[f"by_{field}"] = table
    return out
