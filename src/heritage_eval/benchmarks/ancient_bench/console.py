"""What ``run`` / ``score ancient-bench`` print: tables to stdout, notes and problems to
stderr (the same lines as before the platform port)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.ancient_bench.report import (
    OVERALL_FOOTNOTE,
    medium_table,
    models_table,
    overall_notes,
)


def print_notes(results: list[dict[str, Any]], footnote: bool) -> None:
    """The Overall footnote (``footnote``) and each model's coverage notes (stdout)."""
    if footnote:
        print(f"\n{OVERALL_FOOTNOTE}")
    for res in results:
        for note in overall_notes(res):
            print(f"{res['model']}: {note}" if len(results) > 1 else note)


def missing_line(model: str, n: int, policy: str | None) -> str:
    """The stderr line about ``n`` missing prediction files of ``model`` under the
    ``--missing`` ``policy``: with ``empty`` (the default) they scored 0, and ``--missing
    skip`` reproduces the official evaluator's numbers."""
    if policy == "skip":
        return (f"{model}: {n} missing prediction file(s) left out of the means "
                "(--missing skip, as the official evaluator); listed in summary.json")
    return (f"warning: {model}: {n} missing prediction file(s) scored 0 (as empty answers, "
            "--missing empty); '--missing skip' reproduces the official evaluator's "
            "numbers; listed in summary.json")


def report_errors(summary: Mapping[str, Any], out: Path | None) -> None:
    """Per model: how many samples ended as error (first reason) and how many predictions
    were missing (stderr)."""
    where = out / "summary.md" if out is not None else "summary.md"
    for res in summary["results"]:
        n_err = res["states"]["error"]
        if n_err:
            print(f"{res['model']}: {n_err} sample(s) ended as error (first: "
                  f"{res['errors'][0]['reason']}); see {where}", file=sys.stderr)
        if res["missing_predictions"]:
            print(missing_line(res["model"], len(res["missing_predictions"]),
                               summary.get("provenance", {}).get("missing_policy")),
                  file=sys.stderr)


def print_run_result(summary: Mapping[str, Any], out: Path | None) -> None:
    """After ``run ancient-bench``: the per-medium table, notes, errors, and — when no
    sample was scored — why (the platform then exits with status 1)."""
    result = summary["results"][0]
    print(medium_table(result))
    print_notes([result], footnote=True)
    report_errors(summary, out)
    if result["states"]["scored"] == 0:
        n = sum(result["states"].values())
        what = (f"none of the {n} sample(s) was scored: every one ended as error "
                "(reasons in summary.md)" if n else
                "no sample to evaluate: every conv.jsonl is empty")
        print(f"error: {what}; run folder written to {out}", file=sys.stderr)


def print_score_result(summary: Mapping[str, Any], out: Path | None) -> None:
    """After ``score ancient-bench``: the models x media table, notes and errors."""
    print(models_table(dict(summary)))
    print_notes(summary["results"], footnote=False)
    report_errors(summary, out)
