"""``heritage-eval hcsu report``: merge the run folders of one HCSU command into one table.

Rows keep the settings that distinguish runs (K and distractor pool; shots and judge;
see :mod:`.tables`), and a description table gets one expert-reference row per judge,
so runs made with different settings are never shown as interchangeable rows. Runs of
different commands are refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.tables import (
    description_table,
    discrimination_table,
    k_sweep_table,
    robustness_table,
    shot_sweep_table,
)
from heritage_eval.core.datapath import read_regular_text
from heritage_eval.core.store import atomic_write_text

Table = Callable[[Sequence[dict[str, Any]]], str]

TABLES: dict[str, Table] = {
    "hcsu-discrimination": discrimination_table,
    "hcsu-description": description_table,
    "hcsu-k-sweep": k_sweep_table,
    "hcsu-shot-sweep": shot_sweep_table,
    "hcsu-robustness": robustness_table,
    "hcsu-description-ablation": lambda rs: discrimination_table(
        rs, label="Descriptions", label_key="descriptions")}


def read_summary(path: Path) -> dict[str, Any]:
    """Read a run folder's ``summary.json`` (``path`` is the folder or the file).
    Raises ``OSError`` (also for a FIFO or another non-regular file, never opened) and
    ``ValueError`` (not JSON, not UTF-8, not a JSON object), naming the file."""
    p = path / "summary.json" if path.is_dir() else path
    try:
        data = json.loads(read_regular_text(p))
    except ValueError as exc:  # not UTF-8 (UnicodeDecodeError), not JSON
        raise ValueError(f"{p}: not a run summary ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}: not a run summary (a JSON object)")
    return data


def add_report_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", type=Path, help="run folders (or summary.json files) "
                   "of the same HCSU command, e.g. one per model")
    p.add_argument("--out", type=Path, default=None, help="write the table to this Markdown "
                   "file as well as printing it")


def merged_table(summaries: Sequence[dict[str, Any]]) -> str:
    """The Markdown table of every result of ``summaries`` (all of one command).

    Raises ``ValueError`` naming the commands when they differ or are not HCSU ones.
    """
    kinds = {str(s.get("benchmark")) for s in summaries}
    if len(kinds) != 1 or next(iter(kinds)) not in TABLES:
        raise ValueError(f"runs must all come from one HCSU command, got {sorted(kinds)}")
    kind = next(iter(kinds))
    return f"## {kind}\n\n" + TABLES[kind]([_with_k(r, s) for s in summaries
                                            for r in s["results"]])


def _with_k(row: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    """A robustness row with its run's K (``provenance.task.discrimination.k``), so rows
    of runs made with different K never look alike; other rows as they are."""
    if summary.get("benchmark") != "hcsu-robustness" or "k" in row:
        return row
    task = ((summary.get("provenance") or {}).get("task") or {}).get("discrimination")
    return {**row, "k": task.get("k")} if isinstance(task, dict) else row


def report(args: argparse.Namespace) -> int:
    """Print (and with ``--out`` write) the merged table; exit 2 for unreadable or mixed
    runs."""
    seen: dict[Path, Path] = {}
    for p in args.runs:
        if p.resolve() in seen:
            print(f"error: {seen[p.resolve()]} and {p} are the same run folder: its rows "
                  "would be shown twice", file=sys.stderr)
            return 2
        seen[p.resolve()] = p
    try:
        summaries = [read_summary(p) for p in args.runs]
        md = merged_table(summaries)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        atomic_write_text(args.out, md)
    print(md)
    return 0
