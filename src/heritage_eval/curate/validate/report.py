"""Findings of a validator and their report: ``file:line: error[code]: message`` lines, a
summary line, the exit status and the optional JSON report.

A :class:`Finding` is either an ``error`` (the collection is not fit to become ground
truth until it is fixed: exit status 1) or a ``warning`` (worth a look, exit status 0).
``line`` is 1-based; ``None`` for files without lines (a Label Studio JSON export, whose
messages name the task index and id instead, or a whole folder).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from heritage_eval.core.store import atomic_write_text

Level = Literal["error", "warning"]
ERROR: Level = "error"
WARNING: Level = "warning"


@dataclass(frozen=True)
class Finding:
    """One problem: ``level`` (``"error"`` / ``"warning"``), ``file`` (path as given),
    ``line`` (1-based, or ``None``), ``code`` (short kebab-case id, e.g. ``gt-empty``)
    and a human ``message``."""

    level: Level
    file: str
    line: int | None
    code: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.level}[{self.code}]: {self.message}"


@dataclass
class Report:
    """The findings of one validator run and what it checked.

    ``checked``: how many items of each kind were looked at (``{"lines": 34,
    "images": 34}``), printed in the summary line."""

    target: str
    findings: list[Finding] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)

    def error(self, file: str | Path, line: int | None, code: str, message: str) -> None:
        """Add an error."""
        self.findings.append(Finding(ERROR, str(file), line, code, message))

    def warning(self, file: str | Path, line: int | None, code: str, message: str) -> None:
        """Add a warning."""
        self.findings.append(Finding(WARNING, str(file), line, code, message))

    def count(self, kind: str, n: int = 1) -> None:
        """Add ``n`` to the number of ``kind`` items checked."""
        self.checked[kind] = self.checked.get(kind, 0) + n

    @property
    def n_errors(self) -> int:
        return sum(1 for f in self.findings if f.level == ERROR)

    @property
    def n_warnings(self) -> int:
        return sum(1 for f in self.findings if f.level == WARNING)

    def sorted_findings(self) -> list[Finding]:
        """Findings by file, then line (``None`` first), in the order they were found
        within one line."""
        order = {id(f): i for i, f in enumerate(self.findings)}
        return sorted(self.findings, key=lambda f: (f.file, f.line if f.line is not None
                                                    else -1, order[id(f)]))

    def summary(self) -> str:
        """``"<target>: 2 errors, 1 warning (checked 34 lines, 34 images)"``."""
        what = ", ".join(_plural(n, _SINGULAR.get(kind, kind.removesuffix("s")))
                         for kind, n in self.checked.items())
        return (f"{self.target}: {_plural(self.n_errors, 'error')}, "
                f"{_plural(self.n_warnings, 'warning')}" + (f" (checked {what})" if what
                                                            else ""))

    def exit_status(self) -> int:
        """1 when there is an error, else 0 (warnings alone pass)."""
        return 1 if self.n_errors else 0

    def to_json(self) -> dict[str, Any]:
        """The report as JSON: target, counts, per-code counts and every finding."""
        codes = Counter(f"{f.level}[{f.code}]" for f in self.findings)
        return {"target": self.target, "errors": self.n_errors, "warnings": self.n_warnings,
                "checked": dict(self.checked), "codes": dict(sorted(codes.items())),
                "findings": [asdict(f) for f in self.sorted_findings()]}

    def write_json(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path`` atomically (temp file + rename)."""
        atomic_write_text(path, json.dumps(self.to_json(), ensure_ascii=False, indent=2)
                          + "\n")


_SINGULAR = {"classes": "class"}
_PLURAL = {"class": "classes"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else _PLURAL.get(word, word + 's')}"
