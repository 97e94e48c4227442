"""Reading run folders for the viewer, tolerantly: what cannot be read is listed, not fatal.

:func:`read_run` reads the small files (``summary.json``, ``run.json``) and looks at the
first record only; the site build streams the records of ``samples.jsonl`` itself
(:mod:`heritage_eval.viewer.site`: memory flat in the number of records).

A run folder holds ``samples.jsonl`` (one :class:`~heritage_eval.core.record.SampleRecord`
a line) and ``summary.json``; ``run.json`` and PNG plots are optional. Bad input never
stops the site from building:

- a line that is not JSON (a truncated write) or does not validate is skipped and named
  (``file:line``) in the run's :attr:`RunData.problems`;
- a ``samples.jsonl`` written in another schema version is not shown at all, and
  :attr:`RunData.refused` says why;
- a missing or unreadable ``summary.json`` is a problem; the samples are still shown;
- a ``run.json`` whose ``status`` says the run did not finish (``"running"``: killed or
  still going; ``"stopped"``; ``"failed"``) is the run's first problem: its records are
  incomplete. With no record yet (and no ``summary.json``) there is nothing to show:
  :class:`ViewerError` says so and that running the same command again resumes the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.core.record import SAMPLE_SCHEMA, SampleRecord
from heritage_eval.core.records_io import RunReadError
from heritage_eval.core.rundir import RUN_FILE, UNFINISHED
from heritage_eval.core.sizecap import LongLine, iter_lines
from heritage_eval.report.runs import check_owner

#: plots are looked for this deep under the run folder (``RUN/*.png``, ``RUN/x/*.png``)
PLOT_DEPTH = 2
#: notes kept per run (skipped lines beyond are counted, not listed)
MAX_NOTES = 10_000
#: what a ``run.json`` status of :data:`~heritage_eval.core.rundir.UNFINISHED` means
UNFINISHED_TEXT = {"running": "this run was interrupted or is still running",
                   "stopped": "this run was stopped before it finished",
                   "failed": "this run ended with an error before it finished"}


def _unfinished(status: str) -> str:
    return f'{UNFINISHED_TEXT[status]} (run.json: status "{status}")'

RESUME_HINT = ("Running the same heritage-eval command again (same --out) resumes it; "
               "view it when it has finished.")
_SKIP_DIRS = {"viewer", "questions_assets", "thumbs", "views", "images", "cache"}


class ViewerError(Exception):
    """A path given to the viewer is not a run folder at all (message names it)."""


@dataclass
class RunData:
    """One run folder as the viewer sees it.

    ``name``: short unique label. ``benchmark``: from ``summary.json``, else from the
    first record (``None`` when neither says). ``samples``: the ``samples.jsonl`` to
    stream (``None`` when there is nothing to show). ``n``, ``record_models``: records
    shown and their models, counted by the site build as it streams them.
    ``problems``: human-readable notes (skipped lines, unreadable files; at most
    :data:`MAX_NOTES`, then ``unlisted`` counts the rest). ``refused``: why no sample of
    this run is shown (unknown schema), else ``None``. ``plots``: PNG files found in the
    folder."""

    path: Path
    name: str
    benchmark: str | None = None
    summary: dict[str, Any] | None = None
    run_json: dict[str, Any] | None = None
    samples: Path | None = None
    n: int = 0
    problems: list[str] = field(default_factory=list)
    refused: str | None = None
    plots: list[Path] = field(default_factory=list)
    record_models: dict[str, None] = field(default_factory=dict)
    unlisted: int = 0

    def note(self, notes: list[str]) -> None:
        """Add ``notes`` to :attr:`problems`, beyond :data:`MAX_NOTES` counting them in
        :attr:`unlisted` only (a file of a million bad lines is not held)."""
        room = max(0, MAX_NOTES - len(self.problems))
        self.problems.extend(notes[:room])
        self.unlisted += max(0, len(notes) - room)

    @property
    def models(self) -> list[str]:
        """Model specs of the run: from the summary, else from the records read so far
        (in order of first appearance)."""
        if self.summary and isinstance(self.summary.get("models"), dict):
            return list(self.summary["models"])
        return list(self.record_models)


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


def _first_record(samples: Path, problems: list[str]) -> SampleRecord | None:
    """The first readable record of ``samples`` (``None`` when there is none: then the
    whole file has been read and every skipped line is in ``problems``)."""
    from heritage_eval.core.records_io import iter_records

    for rec in iter_records(samples, problems):
        return rec
    return None


def read_run(path: str | Path, *, exclude: Path | None = None) -> RunData:
    """Read run folder ``path`` (see the module docstring) up to its first record.
    ``exclude``: a folder not to search for plots (the site being written). Raises
    :class:`ViewerError` when ``path`` is not a folder, holds neither
    ``samples.jsonl`` nor ``summary.json``, or holds an interrupted run (``run.json``
    status in :data:`~heritage_eval.core.rundir.UNFINISHED`) with no record yet. Also
    when it does not exist, and when its results are of another configuration than its
    ``run.json`` (an unfinished ``--resume`` with new settings:
    :func:`heritage_eval.report.runs.check_owner`, the check ``compare`` makes)."""
    root = Path(path)
    if not root.is_dir():
        what = "does not exist" if not root.exists() else "is not a folder"
        raise ViewerError(f"run folder {root} {what}")
    samples, summary_path = root / "samples.jsonl", root / "summary.json"
    run_json_problems: list[str] = []
    run_json = _read_json(root / RUN_FILE, run_json_problems)
    status = run_json.get("status") if run_json is not None else None
    running = status in UNFINISHED
    no_records = not samples.is_file() or samples.stat().st_size == 0
    if running and no_records and not summary_path.is_file():
        raise ViewerError(f"{root}: {_unfinished(str(status))}, and no record was written "
                          f"yet: nothing to show. {RESUME_HINT}")
    if not samples.is_file() and not summary_path.is_file():
        raise ViewerError(f"{root}: not a run folder (no samples.jsonl, no summary.json)")
    run = RunData(path=root, name=root.resolve().name or str(root))
    if running:  # first, so it heads the problems on the page and on stderr
        run.problems.append(f"{root / RUN_FILE}: {_unfinished(str(status))}: the records shown are "
                            f"incomplete and the metrics may be missing or stale. "
                            f"{RESUME_HINT}")
    run.summary = _read_json(summary_path, run.problems)
    if run.summary is not None:
        try:  # stale results under new settings: refused, as compare refuses them
            check_owner(root, run.summary)
        except RunReadError as exc:
            raise ViewerError(str(exc)) from None
    if run.summary is None and not summary_path.exists():
        run.problems.append(f"{summary_path}: missing (no metrics to show)")
    run.problems.extend(run_json_problems)
    run.run_json = run_json
    if run.summary and run.summary.get("schema") not in (None, "heritage-eval/summary/1"):
        run.problems.append(f"{summary_path}: schema {run.summary.get('schema')!r} not "
                            "understood by this viewer; metrics may be incomplete")
    first: SampleRecord | None = None
    if not samples.is_file():
        run.refused = f"{samples}: missing, no samples to show"
    else:
        skipped: list[str] = []  # listed again when the records are streamed
        try:  # every readable line is shown; other lines are listed as problems
            first = _first_record(samples, skipped)
        except OSError as exc:
            run.refused = f"{samples}: unreadable: {exc}"
        if first is not None:
            run.samples = samples
        elif run.refused is None:  # nothing readable: the notes are final
            run.problems.extend(skipped)
            schema = _first_schema(samples)
            if isinstance(schema, str) and schema != SAMPLE_SCHEMA:
                run.refused = (f"{samples}: schema {schema!r}; this viewer reads "
                               f"{SAMPLE_SCHEMA!r} only (use the heritage-eval version "
                               "that wrote the run); samples not shown")
    bench = run.summary.get("benchmark") if run.summary else None
    run.benchmark = bench if isinstance(bench, str) else (
        first.benchmark if run.samples is not None and first is not None else None)
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
