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
    ``--missing`` ``policy``. The official evaluator stops at the first missing file;
    ``empty`` (the default) scores each as an empty answer (0), the model's failure kept
    in its denominator; ``skip`` gives the means over the lines that have a prediction
    (the official evaluator's numbers on such a set)."""
    if policy == "skip":
        return (f"warning: {model}: {n} missing prediction file(s) left out of the "
                "means (--missing skip: the means cover the lines that have a prediction, "
                "as the official evaluator's numbers on such a set do); listed in "
                "summary.json")
    return (f"warning: {model}: {n} missing prediction file(s) scored 0 as empty answers "
            "(--missing empty: the model's failure stays in its denominator; the official "
            "evaluator would stop at the first, and '--missing skip' leaves them out); "
            "listed in summary.json")


def unusable_line(model: str, unusable: list[dict[str, str]], policy: str | None) -> str:
    """The stderr line about the prediction files of ``model`` that exist but gave no
    answer (``{"path", "reason"}`` each), under the ``--missing`` ``policy``: the same
    rule as a missing file; the first reason is shown (``path[:line]: why``)."""
    n, first = len(unusable), unusable[0]["reason"]
    if policy == "skip":
        return (f"warning: {model}: {n} unusable prediction file(s) left out of the means "
                f"(--missing skip), first: {first}; listed in summary.json")
    return (f"warning: {model}: {n} unusable prediction file(s) scored 0 as empty answers "
            f"(a model failure kept in its denominator, --missing empty), first: {first}; "
            "listed in summary.json")


def report_errors(summary: Mapping[str, Any], out: Path | None) -> None:
    """Per model: how many samples ended as error (first reason), how many predictions
    were missing and how many prediction files could not be used (stderr)."""
    where = out / "summary.md" if out is not None else "summary.md"
    policy = summary.get("provenance", {}).get("missing_policy")
    for res in summary["results"]:
        n_err = res["states"]["error"]
        if n_err:
            print(f"warning: {res['model']}: {n_err} sample(s) ended as error (first: "
                  f"{res['errors'][0]['reason']}); see {where}", file=sys.stderr)
        if res["missing_predictions"]:
            print(missing_line(res["model"], len(res["missing_predictions"]), policy),
                  file=sys.stderr)
        if res.get("unusable_predictions"):
            print(unusable_line(res["model"], res["unusable_predictions"], policy),
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
