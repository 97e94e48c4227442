"""What ``run muse`` prints after a run: the per-task lines (stdout), the problems
(unreadable question-file lines, error and unscored turns, skipped tasks: stderr) and
the files written. Reads only the finished ``summary.json`` dict."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.muse.report import task_rows


def fmt(value: float | None, unit: str = "%") -> str:
    """A percentage with one decimal, or a dash when missing."""
    return "—" if value is None else f"{value:.1f}{unit}"


def print_tasks(result: Mapping[str, Any]) -> None:
    """One stdout line per task: n, score, invalid rate (and floor / adjusted)."""
    for row in task_rows(dict(result)):
        line = (f"{row['task']:28s} n={row['n']:<5} score={fmt(row['score %'])} "
                f"invalid={fmt(row['invalid %'])}")
        if row.get("chance floor %") is not None or row.get("adjusted %") is not None:
            line += (f" floor={fmt(row['chance floor %'])} "
                     f"adjusted={fmt(row['adjusted %'])}")
        extra = [f"{k}={row[k]}" for k in ("error", "unscored") if row[k]]
        print(line + ("  (" + ", ".join(extra) + ")" if extra else ""))


def warn(what: str, reasons: Mapping[str, int] | list[str], first: int = 3) -> None:
    """A ``warning:`` line and the first reasons (with counts for a mapping)."""
    counted = isinstance(reasons, Mapping)
    items = list(reasons.items()) if isinstance(reasons, Mapping) else [(r, 1) for r in reasons]
    print(f"warning: {what}", file=sys.stderr)
    for reason, n in items[:first]:
        print(f"  {n} × {reason}" if counted else f"  {reason}", file=sys.stderr)


def report_problems(result: Mapping[str, Any], question_file: str, emb_id: str | None
                    ) -> None:
    """Warnings for unreadable lines, error turns and unscored turns."""
    st = result["states"]
    total = sum(st.values())
    if result["bad_lines"]["n"]:
        warn(f"{result['bad_lines']['n']} line(s) of {question_file} could not be read "
             "(reported apart from the tasks):", result["bad_lines"]["reasons"])
    if st["error"]:
        warn(f"{st['error']} of {total} turn(s) ended as error (no answer; excluded from "
             "n and the scores); most frequent reasons:", result["error_reasons"])
    if st["unscored"]:
        warn(f"{st['unscored']} turn(s) are unscored (the metric failed; embedder "
             f"{emb_id}); excluded from n and the scores; reasons:",
             result["unscored_reasons"])


def print_run(summary: Mapping[str, Any], out: Path | None) -> None:
    """Everything ``run muse`` prints after a run (the old ``run muse`` output)."""
    prov = summary.get("provenance", {})
    skipped: dict[str, int] = prov.get("skipped_tasks") or {}
    if skipped:
        print(f"note: {prov.get('model')} attempts only "
              f"{', '.join(sorted(prov.get('supported_tasks') or []))}; skipped "
              f"{sum(skipped.values())} turn(s) of {', '.join(skipped)} (no rows for them)",
              file=sys.stderr)
    for result in summary.get("results", []):
        print_tasks(result)
        report_problems(result, str(prov.get("question_file")), prov.get("embedder"))
    if out is not None:
        print(f"wrote {out}/summary.json, summary.md, samples.jsonl "
              f"({float(prov.get('run_seconds') or 0.0):.1f} s)")
