"""Reading run folders for the viewer, tolerantly: what cannot be read is listed, not fatal.

A run folder holds ``samples.jsonl`` (one :class:`~heritage_eval.core.record.SampleRecord`
a line) and ``summary.json``; ``run.json`` and PNG plots are optional. Bad input never
stops the site from building:

- a line that is not JSON (a truncated write) or does not validate is skipped and named
  (``file:line``) in the run's :attr:`RunData.problems`;
- a ``samples.jsonl`` written in another schema version is not shown at all, and
  :attr:`RunData.refused` says why;
- a missing or unreadable ``summary.json`` is a problem; the samples are still shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.core.record import SAMPLE_SCHEMA, SampleRecord
from heritage_eval.core.sizecap import LongLine, iter_lines

#: plots are looked for this deep under the run folder (``RUN/*.png``, ``RUN/x/*.png``)
PLOT_DEPTH = 2
_SKIP_DIRS = {"viewer", "questions_assets", "thumbs", "views", "images", "cache"}


class ViewerError(Exception):
    """A path given to the viewer is not a run folder at all (message names it)."""


@dataclass
class RunData:
    """One run folder as the viewer sees it.

    ``name``: short unique label. ``benchmark``: from ``summary.json``, else from the
    first record (``None`` when neither says). ``records``: the readable records in
    file order. ``problems``: human-readable notes (skipped lines, unreadable files).
    ``refused``: why no sample of this run is shown (unknown schema), else ``None``.
    ``plots``: PNG files found in the folder."""

    path: Path
    name: str
    benchmark: str | None = None
    summary: dict[str, Any] | None = None
    run_json: dict[str, Any] | None = None
    records: list[SampleRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    refused: str | None = None
    plots: list[Path] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        """Model specs of the run: from the summary, else from the records."""
        if self.summary and isinstance(self.summary.get("models"), dict):
            return list(self.summary["models"])
        return list(dict.fromkeys(r.model for r in self.records))


def _read_json(path: Path, problems: list[str]) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        problems.append(f"{path}: unreadable: {str(exc).splitlines()[0]}")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}: not a JSON object")
        return None
    return data


def _first_schema(path: Path) -> object:
    """The ``schema`` of the first JSON line of ``path`` (``None`` if none parses)."""
    with path.open("rb") as fh:
        for _, line in iter_lines(fh, str(path)):  # a huge first line is never held
            if isinstance(line, LongLine):
                continue
            raw = line.decode("utf-8", errors="replace")
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            return data.get("schema") if isinstance(data, dict) else None
    return None


def _plots(root: Path, exclude: Path | None) -> list[Path]:
    found: list[Path] = []

    def walk(d: Path, depth: int) -> None:
        try:
            items = sorted(d.iterdir())
        except OSError:
            return
        for p in items:
            if p.is_file() and p.suffix.lower() == ".png":
                found.append(p)
            elif (p.is_dir() and depth < PLOT_DEPTH and p.name not in _SKIP_DIRS
                  and (exclude is None or p.resolve() != exclude)):
                walk(p, depth + 1)

    walk(root, 1)
    return found


def read_run(path: str | Path, *, exclude: Path | None = None) -> RunData:
    """Read run folder ``path`` (see the module docstring). ``exclude``: a folder not to
    search for plots (the site being written). Raises :class:`ViewerError` when ``path``
    is not a folder or holds neither ``samples.jsonl`` nor ``summary.json``."""
    from heritage_eval.core.records_io import iter_records

    root = Path(path)
    if not root.is_dir():
        raise ViewerError(f"{root}: not a folder")
    samples, summary_path = root / "samples.jsonl", root / "summary.json"
    if not samples.is_file() and not summary_path.is_file():
        raise ViewerError(f"{root}: not a run folder (no samples.jsonl, no summary.json)")
    run = RunData(path=root, name=root.resolve().name or str(root))
    run.summary = _read_json(summary_path, run.problems)
    if run.summary is None and not summary_path.exists():
        run.problems.append(f"{summary_path}: missing (no metrics to show)")
    run.run_json = _read_json(root / "run.json", run.problems)
    if run.summary and run.summary.get("schema") not in (None, "heritage-eval/summary/1"):
        run.problems.append(f"{summary_path}: schema {run.summary.get('schema')!r} not "
                            "understood by this viewer; metrics may be incomplete")
    if not samples.is_file():
        run.refused = f"{samples}: missing, no samples to show"
    else:
        try:  # every readable line is shown; other lines are listed as problems
            run.records = list(iter_records(samples, run.problems))
        except OSError as exc:
            run.refused = f"{samples}: unreadable: {exc}"
        schema = _first_schema(samples)
        if not run.records and isinstance(schema, str) and schema != SAMPLE_SCHEMA:
            run.refused = (f"{samples}: schema {schema!r}; this viewer reads "
                           f"{SAMPLE_SCHEMA!r} only (use the heritage-eval version that "
                           "wrote the run); samples not shown")
    bench = run.summary.get("benchmark") if run.summary else None
    run.benchmark = bench if isinstance(bench, str) else (
        run.records[0].benchmark if run.records else None)
    run.plots = _plots(root, exclude)
    return run


def read_runs(paths: list[Path], exclude: Path | None = None) -> list[RunData]:
    """Read every run folder; names made unique (``name``, ``parent/name`` …)."""
    runs = [read_run(p, exclude=exclude) for p in paths]
    seen: dict[str, int] = {}
    for r in runs:
        n = seen.get(r.name, 0)
        seen[r.name] = n + 1
        if n:
            r.name = f"{r.name} ({n + 1})"
    return runs
