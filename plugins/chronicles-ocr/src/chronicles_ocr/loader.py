"""Read the release in its official layout: ``Chronicles_OCR.jsonl`` + ``images/<script>/…``.

Each JSONL line is one image: ``image_path`` (relative to the file's folder; the official
reader also accepts ``img_path`` / ``image``), ``font_type`` (one of the seven Chinese
script names), ``annotation`` (the characters in reading order) and, for the ancient
scripts, ``spotting`` (reference boxes and characters) with ``width`` / ``height``.

One sample per image and task (:func:`~chronicles_ocr.names.tasks_for`), id
``<image_path>#<task>``. What cannot be read at all raises
:class:`~heritage_eval.plugin.UsageError` (nothing is written): a missing or unreadable
file, a file without one usable line, a file none of whose rows is of the scripts and
tasks chosen. Everything else spoils only its own samples, which
become ``error`` records (never sent), each error naming ``FILE:LINE`` (the JSONL's own
name) and the field: a line that is not a JSON object, a row without an image path or
with a script outside the seven, a repeated image path (the first row wins), an image
that is missing, not a regular file or outside the data folder, and a field of the
wrong shape for the task that reads it (:mod:`chronicles_ocr.row_checks`: ``spotting``
for spotting and recognition, ``width`` / ``height`` for spotting, ``annotation`` for
parsing).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chronicles_ocr.names import BY_ID, script_of, tasks_for
from chronicles_ocr.redbox import Target, pick_target
from chronicles_ocr.row_checks import task_problem
from heritage_eval.plugin import UsageError, confined, read_regular_text

FILE_NAME = "Chronicles_OCR.jsonl"
#: groups of a sample that has no script or task (an unreadable or unusable line)
NO_GROUP = "(none)"


@dataclass(frozen=True)
class Sample:
    """One image × task. ``row``: the release line (judges read it); ``source``:
    ``Chronicles_OCR.jsonl:LINE``; ``target``: the recognition target (``None`` when the
    image has none); ``load_error``: why the sample cannot be sent."""

    id: str
    task: str
    script: str
    group: str
    image_path: str
    row: dict[str, Any] = field(repr=False)
    source: str
    target: Target | None = None
    load_error: str | None = None


@dataclass
class Release:
    """A loaded release: its folder, JSONL file and samples (file order, then task
    order), with the counts for provenance."""

    root: Path
    jsonl: Path
    samples: list[Sample]
    digest: str
    rows: int = 0

    def info(self) -> dict[str, Any]:
        """Provenance: the paths, the file's SHA-256 (16 hex), row and sample counts."""
        per: dict[str, set[str]] = {}
        for s in self.samples:
            per.setdefault(s.script, set()).add(s.image_path)
        return {"data": str(self.root), "jsonl": str(self.jsonl), "jsonl_sha256": self.digest,
                "rows": self.rows, "samples": len(self.samples),
                "load_errors": sum(1 for s in self.samples if s.load_error),
                "images_per_script": {k: len(v) for k, v in per.items()}}


def sample_id(image_path: str, task: str) -> str:
    """The id of one image × task."""
    return f"{image_path}#{task}"


def locate(data: Path) -> tuple[Path, Path]:
    """``(root, jsonl)`` of ``--data`` (a folder holding :data:`FILE_NAME`, or the file)."""
    data = Path(data).absolute()
    return (data.parent, data) if data.suffix == ".jsonl" and not data.is_dir() else \
        (data, data / FILE_NAME)


def image_key(row: dict[str, Any]) -> str:
    """The image path of a row as the official code reads it (first of ``image_path``,
    ``img_path``, ``image`` that is set)."""
    for name in ("image_path", "img_path", "image"):
        value = row.get(name)
        if value:
            return str(value)
    return ""


def _line_error(number: int, where: str, why: str, key: str = "") -> Sample:
    ident = f"{key}#row@{number}" if key else f"line-{number}"
    return Sample(id=ident, task=NO_GROUP, script=NO_GROUP, group=NO_GROUP,
                  image_path=key, row={}, source=where, load_error=f"{where}: {why}")


def _image_problem(root: Path, rel: str) -> str | None:
    try:
        confined(root, os.path.join(root, rel))
    except (OSError, ValueError) as exc:
        return f"image {rel!r}: {exc}"
    return None


def _row_samples(row: dict[str, Any], number: int, root: Path, seed: int,
                 tasks: tuple[str, ...] | None, where: str) -> list[Sample]:
    key = image_key(row)
    script = script_of(str(row.get("font_type", "")))
    if script is None:
        return [_line_error(number, where, f"font_type {row.get('font_type')!r} is not one "
                            "of the seven scripts", key)]
    problem = _image_problem(root, key)
    out = []
    for task in tasks_for(script):
        if tasks is not None and task not in tasks:
            continue
        why = problem or task_problem(task, row)
        target = pick_target(row, seed) if task == "recognition" and not why else None
        out.append(Sample(id=sample_id(key, task), task=task, script=script.id,
                          group=script.group, image_path=key, row=row, source=where,
                          target=target, load_error=f"{where}: {why}" if why else None))
    return out


def load_release(data: Path, *, seed: int, tasks: tuple[str, ...] | None = None,
                 scripts: tuple[str, ...] | None = None) -> Release:
    """The samples of the release at ``data`` (module docstring), keeping ``tasks`` and
    ``scripts`` (ids; ``None``: all). Raises ``UsageError``."""
    root, path = locate(data)
    try:
        text = read_regular_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--data {data}: cannot read {path.name}: {exc}") from None
    samples: list[Sample] = []
    seen: dict[str, tuple[int, bool]] = {}  # image path -> (line, all its samples errors)
    rows = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        rows += 1
        where = f"{path.name}:{number}"
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            samples.append(_line_error(number, where, f"not valid JSON ({exc})"))
            continue
        if not isinstance(row, dict):
            samples.append(_line_error(number, where, "not a JSON object"))
            continue
        key = image_key(row)
        script = script_of(str(row.get("font_type", "")))
        if scripts is not None and (script is None or script.id not in scripts):
            continue
        if not key:
            samples.append(_line_error(number, where, "no image_path"))
        elif key in seen:
            first, spoilt = seen[key]
            kept = ("that row, itself a data error, is the one kept" if spoilt else
                    "that row is used")
            samples.append(_line_error(number, where, f"image_path {key!r} already on line "
                                       f"{first} ({kept})", key))
        else:
            made = _row_samples(row, number, root, seed, tasks, where)
            seen[key] = (number, bool(made) and all(s.load_error for s in made))
            samples += made
    if not rows:
        raise UsageError(f"--data {data}: {path.name} holds no line")
    if not samples:
        raise UsageError(f"--data {data}: none of the {rows} row(s) of {path.name} is of "
                         "the scripts and tasks chosen (--scripts / --tasks): nothing to "
                         "evaluate")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return Release(root=root, jsonl=path, samples=samples, digest=digest, rows=rows)


def script_label(script_id: str) -> str:
    """A script id's table label (the id itself for :data:`NO_GROUP`)."""
    found = BY_ID.get(script_id)
    return found.label if found else script_id
