"""The summary body (counts per period) and ``summary.md``.

The values and 95 % intervals of Acc@k come from the platform's envelope
(``summary["models"][MODEL]["groups"]["period"][PERIOD]["accuracy"]``); the engine
appends the interval tables to ``summary.md`` after this module's part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heritage_eval.plugin import Outcome, SampleRecord

COUNTS = ("glyphs", "answered", "recognised", "unparsed", "errors")


def period_body(records: Sequence[SampleRecord], model: str, k: int) -> dict[str, Any]:
    """``{"results": [{"model", "k", "per_period": {PERIOD: {glyphs, answered,
    recognised, unparsed, errors}}}]}`` in order of first appearance."""
    per: dict[str, dict[str, int]] = {}
    for r in records:
        row = per.setdefault(r.groups.get("period", ""), dict.fromkeys(COUNTS, 0))
        row["glyphs"] += 1
        if r.state in (Outcome.SCORED, Outcome.UNPARSED):
            row["answered"] += 1
            row["recognised"] += int(r.scores.get("accuracy") == 1.0)
            row["unparsed"] += int(r.state is Outcome.UNPARSED)
        else:
            row["errors"] += 1
    return {"results": [{"model": model, "k": k, "per_period": per}]}


def _percent(block: Mapping[str, Any] | None) -> str:
    value = (block or {}).get("value")
    return "—" if value is None else f"{100 * value:.1f}"


def render_markdown(summary: Mapping[str, Any]) -> str:
    """``summary.md``'s body: one table per model, a row per period and Overall."""
    parts = ["# Oracle-glyph recognition (example plug-in)\n"]
    for result in summary.get("results", []):
        model, k = result["model"], result["k"]
        env = summary.get("models", {}).get(model, {})
        groups = env.get("groups", {}).get("period", {})
        among = "is the first character read from the answer" if k == 1 else \
            f"is among the first {k} characters read from the answer"
        parts += [f"Model `{model}`. Acc@{k}: a glyph counts as recognised when the "
                  f"reference {among}.\n",
                  f"| Period | Glyphs | Answered | Recognised | Acc@{k} (%) |",
                  "|---|---:|---:|---:|---:|"]
        totals = dict.fromkeys(COUNTS, 0)
        for period, row in result["per_period"].items():
            for key in COUNTS:
                totals[key] += row[key]
            acc = _percent(groups.get(period, {}).get("accuracy"))
            parts.append(f"| {period} | {row['glyphs']} | {row['answered']} | "
                         f"{row['recognised']} | {acc} |")
        overall = _percent(env.get("metrics", {}).get("accuracy"))
        parts.append(f"| Overall | {totals['glyphs']} | {totals['answered']} | "
                     f"{totals['recognised']} | {overall} |")
    return "\n".join(parts) + "\n"
