"""The files of a run folder as comparable values, run-specific fields left out: for the
tests that check two ways of running (streamed / listed, lazy / held) write the same
folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: provenance fields that differ between two runs of the same thing (times, resume flag)
RUN_SPECIFIC = ("created_utc", "run_seconds", "resumed")


def run_files(out: Path, *, tables: bool = True, listing: bool = False) -> dict[str, Any]:
    """``summary`` (summary.json less :data:`RUN_SPECIFIC`), ``samples`` (samples.jsonl
    text), ``md`` (summary.md up to its Provenance section); with ``tables`` the
    ``tables/*.md`` texts (sorted), with ``listing`` the sorted names in ``out``."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for key in RUN_SPECIFIC:
        summary["provenance"].pop(key, None)
    files: dict[str, Any] = {
        "summary": summary,
        "samples": (out / "samples.jsonl").read_text(encoding="utf-8"),
        "md": (out / "summary.md").read_text(encoding="utf-8").split("## Provenance")[0]}
    if tables:
        files["tables"] = sorted(p.read_text(encoding="utf-8")
                                 for p in (out / "tables").glob("*.md"))
    if listing:
        files["left"] = sorted(p.name for p in out.iterdir())
    return files
