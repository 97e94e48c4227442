"""The ``--out`` folder of ``stats``: tables (CSV + Markdown), ``stats.md``, ``stats.json``.

Every file is written atomically (temporary file + rename, :mod:`heritage_eval.core.store`,
:func:`heritage_eval.core.tables.write_table`), so an interrupted run never leaves a
half-written file. ``stats.json`` holds the provenance (tool and version, command, source
paths, time), the counts, every problem found (``where``: ``file:line`` or a path;
``reason``) and the list of files written.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval import __version__
from heritage_eval.core.store import atomic_write_text
from heritage_eval.core.tables import Table, to_markdown, write_table

#: Problems printed on stderr; the rest are only in ``stats.json``.
MAX_PRINTED = 20


@dataclass(frozen=True)
class Problem:
    """One bad item: ``where`` names the file (``path:line`` for a line of a text file),
    ``reason`` says what is wrong. It is counted and listed; the run goes on."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def out_folder_error(out: Path, overwrite: bool) -> str | None:
    """Why ``--out`` cannot be used (it is a file, or a non-empty folder without
    ``--overwrite``), as the error line to print; ``None`` when it can."""
    if out.exists() and not out.is_dir():
        return f"error: --out {out} exists and is not a folder"
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        return (f"error: --out {out} is not empty; nothing was written. Use another --out, "
                "or --overwrite to write into it anyway")
    return None


def print_problems(problems: list[Problem], warnings: list[str]) -> None:
    """Print the first :data:`MAX_PRINTED` problems and warnings on stderr."""
    for label, items in (("bad item", [str(p) for p in problems]), ("warning", warnings)):
        for text in items[:MAX_PRINTED]:
            print(f"{label}: {text}", file=sys.stderr)
        if len(items) > MAX_PRINTED:
            print(f"{label}: … and {len(items) - MAX_PRINTED} more (see stats.json)",
                  file=sys.stderr)


@dataclass
class StatsWriter:
    """Collects what one ``stats`` run writes under ``out`` and writes the index files.

    ``files``: names relative to ``out``, in the order written; ``sections``: the
    Markdown of every table, for ``stats.md``."""

    out: Path
    files: list[str] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)

    def table(self, stem: str, table: Table) -> None:
        """Write ``stem.md`` and ``stem.csv`` (:func:`write_table`)."""
        for path in write_table(table, self.out / stem, ("md", "csv")):
            self.files.append(path.name)
        self.sections.append(to_markdown(table))

    def figure(self, name: str) -> None:
        """Record a figure already written as ``out/name`` (see :mod:`.figures`)."""
        self.files.append(name)
        self.figures.append(name)

    def finish(self, title: str, stats: dict[str, Any], problems: list[Problem],
               warnings: list[str]) -> Path:
        """Write ``stats.md`` (title, every table, the figures, the problem count) and
        ``stats.json`` (``stats`` plus provenance, problems, warnings, files); returns
        the path of ``stats.json``."""
        md = [f"# {title}", ""]
        for section in self.sections:
            md += [section, ""]
        for name in self.figures:
            md += [f"![{name}]({name})", ""]
        md.append(f"{len(problems)} bad item(s), {len(warnings)} warning(s) "
                  "(listed in stats.json).")
        atomic_write_text(self.out / "stats.md", "\n".join(md) + "\n")
        self.files += ["stats.md", "stats.json"]
        doc = {
            "tool": "heritage-eval",
            "version": __version__,
            "created_utc": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
            **stats,
            "n_problems": len(problems),
            "problems": [{"where": p.where, "reason": p.reason} for p in problems],
            "warnings": warnings,
            "files": self.files,
        }
        path = self.out / "stats.json"
        atomic_write_text(path, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return path
