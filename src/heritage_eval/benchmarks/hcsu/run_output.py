"""What an HCSU command prints and writes after its model calls: the Markdown table on
stdout, the error / judge digests and the exit message on stderr, and the run folder of a
study (``hcsu k-sweep``, ``shot-sweep``, ``ablation``, ``robustness``) in the platform's
envelope (sample records, statistics, provenance)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.records import error_lines, unreachable_hint
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.types import Outcome

_ANSWERED = (Outcome.SCORED, Outcome.UNPARSED)


def print_summary(markdown: str, root: Path) -> None:
    """The table on stdout, the run folder on stderr."""
    print(markdown)
    print(f"run folder: {root}", file=sys.stderr)


def report_errors(label: str, entry: dict[str, Any], records: Sequence[Any] | int,
                  base_url: str | None = None, judge_url: str | None = None) -> None:
    """Print the error digest (counts per domain, most frequent reasons) and, for a
    judged run, the judge's unscored digest to stderr; say so plainly when an endpoint
    (``base_url`` / ``judge_url``, for the message) was never reached. ``records``: the
    run's records, or their number (only the number is used)."""
    total = records if isinstance(records, int) else len(records)
    digest = entry.get("errors") or {"n_error": 0}
    for line in error_lines(label, digest, total):
        print(f"warning: {line}" if line[0] != " " else line, file=sys.stderr)
    if digest["n_error"] == total:
        hint = unreachable_hint([r for r, _ in digest.get("reasons", [])], base_url,
                                "--base-url")
        if hint:
            print(f"error: {hint}", file=sys.stderr)
    jd = entry.get("judge_digest")
    if jd and jd["n_unscored"]:
        print(f"warning: judge {entry.get('judge')}: {jd['n_unscored']} of {jd['n']} "
              "description(s) unscored (left out of Term. / Rich.)", file=sys.stderr)
        for reason, n in jd["reasons"]:
            print(f"  {n} x {reason}", file=sys.stderr)
        hint = unreachable_hint([r for r, _ in jd["reasons"]], judge_url,
                                "--judge-base-url (default: --base-url)")
        if hint and jd["n_unscored"] == jd["n"]:
            print(f"error: judge: {hint}", file=sys.stderr)
    if entry.get("bertscore_unavailable"):
        print(f"warning: BERTScore unscored: {entry['bertscore_unavailable']}",
              file=sys.stderr)


def nothing_answered(records: Sequence[SampleRecord]) -> bool:
    """True when no record ended ``scored`` or ``unparsed`` (every one ``error``, or
    ``unscored``: a description no requested metric could score)."""
    return not any(r.state in _ANSWERED for r in records)


def fail_if_nothing_answered(what: str, nothing: bool, root: Path) -> int:
    """Exit status of every HCSU evaluation command: 1 with a message when ``nothing``
    (no sample was answered: every one ended as ``error``, or ``unscored`` for a
    description metric), else 0. Unparsed answers are a valid, wrong result: a run
    whose answers are all unparsed exits 0."""
    if nothing:
        print(f"error: {what}; the run folder was written to {root}", file=sys.stderr)
        return 1
    return 0
