"""The metrics an HCSU run did not compute, for the summary's ``metrics_off`` (read by
:func:`heritage_eval.core.run_tables.nothing_scored_why`, so that the line shown when no
metric has a value names only causes this run had)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def metrics_off(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per ``results`` entry (a description run's: ``bertscore_unavailable``, ``judge``):
    ``"BERTScore disabled (--no-bertscore)"`` (or why it could not be loaded) and
    ``"Term. / Rich. (no --judge)"``; each once. ``[]`` for a discrimination entry, which
    has neither key."""
    out: list[str] = []
    for r in results:
        if r.get("bertscore_unavailable"):
            out.append(str(r["bertscore_unavailable"]))
        if "judge" in r and not r.get("judge"):
            out.append("Term. / Rich. (no --judge)")
    return list(dict.fromkeys(out))
