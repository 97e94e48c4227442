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
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from heritage_eval.benchmarks.ancient_bench.normalize import to_simplified

if TYPE_CHECKING:
    from heritage_eval.benchmarks.ancient_bench.records import RowLike

#: Metadata fields broken down when present.
BREAKDOWN_FIELDS = ("script", "period")


@functools.lru_cache(maxsize=65536)
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


def error_profile(records: Sequence[RowLike]) -> dict[str, Any]:
    """Pooled edit operations of the scored ``records``.

    Returns ``n``, ``insertions``, ``deletions``, ``substitutions``, ``pred_tokens``,
    ``gt_tokens``, ``hallucination_rate`` (fraction or ``None``), ``st_only_substitutions``
    and ``st_only_share`` (fraction of substitutions, or ``None``).
    """
    rows = [r for r in records if r.state.value == "scored"]
    ins = sum(r.insertions or 0 for r in rows)
    dels = sum(r.deletions or 0 for r in rows)
    subs = sum(r.substitutions or 0 for r in rows)
    st = sum(r.st_only_substitutions or 0 for r in rows)
    pred = sum(r.n_pred_tokens or 0 for r in rows)
    return {"n": len(rows), "insertions": ins, "deletions": dels, "substitutions": subs,
            "pred_tokens": pred, "gt_tokens": sum(r.n_gt_tokens or 0 for r in rows),
            "hallucination_rate": _ratio(ins, pred), "st_only_substitutions": st,
            "st_only_share": _ratio(st, subs)}


def breakdown(records: Sequence[RowLike], field: str) -> dict[str, dict[str, Any]]:
    """Per value of metadata ``field``: ``n``, mean ``ned_score`` and ``f1`` (fractions)
    and ``hallucination_rate`` over scored samples; empty when no sample has the field."""
    groups: dict[str, list[RowLike]] = {}
    for r in records:
        value = r.metadata.get(field)
        if r.state.value == "scored" and value not in (None, ""):
            groups.setdefault(str(value), []).append(r)
    out: dict[str, dict[str, Any]] = {}
    for value in sorted(groups):
        rows = groups[value]
        out[value] = {
            "n": len(rows),
            "ned_score": sum(r.ned_score or 0.0 for r in rows) / len(rows),
            "f1": sum(r.f1 or 0.0 for r in rows) / len(rows),
            "hallucination_rate": error_profile(rows)["hallucination_rate"],
        }
    return out


def analyse(records: Sequence[RowLike], categories: list[str]) -> dict[str, Any]:
    """Analysis block of one model: ``overall`` and ``per_category`` error profiles, and
    ``by_script`` / ``by_period`` breakdowns (only the fields some sample has)."""
    out: dict[str, Any] = {
        "overall": error_profile(records),
        "per_category": {c: error_profile([r for r in records if r.category == c])
                         for c in categories},
    }
    for field in BREAKDOWN_FIELDS:
        table = breakdown(records, field)
        if table:
            out[f"by_{field}"] = table
    return out
