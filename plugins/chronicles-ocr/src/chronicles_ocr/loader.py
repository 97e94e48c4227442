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

A release of :data:`LAZY_FROM` lines or more is not held: one counting pass reads the
file line by line (:mod:`chronicles_ocr.release_lines`) keeping the counts, the load
errors, the sample ids, the SHA-256 and the lines of repeated image paths, and
``Release.samples`` reads the file again on each pass, stopped with
``DataChangedError`` when the file was replaced meanwhile. Both paths give the same
samples, counts, errors and digest.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chronicles_ocr.names import BY_ID, script_of, tasks_for
from chronicles_ocr.redbox import Target, pick_target
from chronicles_ocr.release_lines import LoadFacts, count_newlines, physical_lines, text_lines
from chronicles_ocr.row_checks import task_problem
from heritage_eval.plugin import (
    ReiterableSamples,
    UsageError,
    confined,
    file_identities,
    read_regular_text,
)

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
    order: a list, or for a large file a
    :class:`~heritage_eval.plugin.ReiterableSamples` re-reading it on each pass), with
    the counts for provenance and the load errors (``facts``)."""

    root: Path
    jsonl: Path
    samples: Sequence[Sample]
    digest: str
    rows: int
    facts: LoadFacts

    @property
    def warnings(self) -> list[str]:
        """The samples' load errors, in sample order."""
        return self.facts.warnings

    def info(self) -> dict[str, Any]:
        """Provenance: the paths, the file's SHA-256 (16 hex), row and sample counts."""
        return {"data": str(self.root), "jsonl": str(self.jsonl), "jsonl_sha256": self.digest,
                "rows": self.rows, "samples": self.facts.n,
                "load_errors": len(self.facts.warnings),
                "images_per_script": self.facts.images_per_script()}


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


#: A release of this many lines or more (``b"\\n"`` counted before any line is parsed)
#: is not held: ``Release.samples`` is a :class:`~heritage_eval.plugin.ReiterableSamples`
#: that re-reads the file on each pass, guarded by the file's identity. Smaller ones are
#: held as a list made from one read (each sample keeps its whole row: about 2 kB an
#: image).
LAZY_FROM = 20_000


@dataclass(frozen=True)
class _Rules:
    """What turns a line into samples: the data folder, the file's name, the seed and
    the tasks and scripts kept."""

    root: Path
    name: str
    seed: int
    tasks: tuple[str, ...] | None
    scripts: tuple[str, ...] | None


def _line_samples(number: int, raw: str, rules: _Rules, seen: dict[bytes, int] | None,
                  repeats: dict[int, tuple[str, str]]) -> list[Sample]:
    """The samples of line ``number``. ``seen``: image path (UTF-8 bytes: half the size
    of a non-ASCII ``str``) -> ``2 × line + (1 when all its samples are errors)`` of the
    rows so far, for the first pass, which adds each
    repeated image path's line to ``repeats`` (line -> ``(path, why)``); ``None`` for a
    later pass, which reads the repeats found by the first."""
    where = f"{rules.name}:{number}"
    try:
        row = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return [_line_error(number, where, f"not valid JSON ({exc})")]
    if not isinstance(row, dict):
        return [_line_error(number, where, "not a JSON object")]
    key = image_key(row)
    script = script_of(str(row.get("font_type", "")))
    if rules.scripts is not None and (script is None or script.id not in rules.scripts):
        return []
    if not key:
        return [_line_error(number, where, "no image_path")]
    if seen is None:
        if number in repeats:
            return [_line_error(number, where, repeats[number][1], key)]
    elif (held := key.encode("utf-8", "surrogatepass")) in seen:
        first, spoilt = divmod(seen[held], 2)
        kept = ("that row, itself a data error, is the one kept" if spoilt else
                "that row is used")
        why = f"image_path {key!r} already on line {first} ({kept})"
        repeats[number] = (key, why)
        return [_line_error(number, where, why, key)]
    made = _row_samples(row, number, rules.root, rules.seed, rules.tasks, where)
    if seen is not None:
        seen[held] = 2 * number + (bool(made) and all(s.load_error for s in made))
    return made


def _rows(lines: Iterable[str], rules: _Rules, seen: dict[bytes, int] | None,
          repeats: dict[int, tuple[str, str]]) -> Iterator[list[Sample]]:
    """The samples of each non-blank line (a list per row, maybe empty), in order."""
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            yield _line_samples(number, raw, rules, seen, repeats)


def _check_counts(data: Path, name: str, rows: int, samples: int) -> None:
    if not rows:
        raise UsageError(f"--data {data}: {name} holds no line")
    if not samples:
        raise UsageError(f"--data {data}: none of the {rows} row(s) of {name} is of "
                         "the scripts and tasks chosen (--scripts / --tasks): nothing to "
                         "evaluate")


def load_release(data: Path, *, seed: int, tasks: tuple[str, ...] | None = None,
                 scripts: tuple[str, ...] | None = None) -> Release:
    """The samples of the release at ``data`` (module docstring), keeping ``tasks`` and
    ``scripts`` (ids; ``None``: all). A file of :data:`LAZY_FROM` lines or more is read
    once here to count it (:func:`_lazy_release`) and again on each pass over
    ``Release.samples``; a smaller one is read once and held. Raises ``UsageError``."""
    root, path = locate(data)
    rules = _Rules(root=root, name=path.name, seed=seed, tasks=tasks, scripts=scripts)
    try:
        if count_newlines(path, LAZY_FROM) >= LAZY_FROM:
            return _lazy_release(data, path, rules)
        text = read_regular_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--data {data}: cannot read {path.name}: {exc}") from None
    samples: list[Sample] = []
    facts = LoadFacts(keep_ids=False, no_group=NO_GROUP)
    rows = 0
    for made in _rows(physical_lines(text), rules, {}, {}):
        rows += 1
        facts.add_row(made)
        samples += made
    _check_counts(data, path.name, rows, len(samples))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return Release(root=root, jsonl=path, samples=samples, digest=digest, rows=rows,
                   facts=facts)


def _lazy_release(data: Path, path: Path, rules: _Rules) -> Release:
    """The counting pass of a large release: the file read line by line, keeping the
    :class:`LoadFacts` (ids included), the digest and the repeated image paths' lines;
    ``Release.samples`` re-reads the file on each pass. Raises ``OSError`` /
    ``UnicodeDecodeError`` (the caller words them) and ``UsageError``."""
    sha = hashlib.sha256()
    repeats: dict[int, tuple[str, str]] = {}
    facts = LoadFacts(keep_ids=True, no_group=NO_GROUP)
    rows = 0
    seen: dict[bytes, int] | None = {}
    for made in _rows(text_lines(path, sha), rules, seen, repeats):
        rows += 1
        facts.add_row(made)
    seen = None  # the image paths are not held past the counting pass
    _check_counts(data, path.name, rows, facts.n)

    def passes() -> Iterator[Sample]:
        for made in _rows(text_lines(path), rules, None, repeats):
            yield from made

    samples: ReiterableSamples[Sample] = ReiterableSamples(
        passes, facts.n, facts.ids, guard=lambda: file_identities([path]))
    return Release(root=rules.root, jsonl=path, samples=samples,
                   digest=sha.hexdigest()[:16], rows=rows, facts=facts)


def script_label(script_id: str) -> str:
    """A script id's table label (the id itself for :data:`NO_GROUP`)."""
    found = BY_ID.get(script_id)
    return found.label if found else script_id
