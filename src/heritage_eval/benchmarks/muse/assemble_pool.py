"""Reading a generated question pool for ``muse assemble``: one fast pass over the file.

The pool is the question file ``muse generate`` writes (:mod:`.questions`: JSON Lines,
line 1 the header, then one question per line). Assembly needs only a few fields of
each question, so the pass parses every line as JSON and checks the fields it uses
(``kind``, ``id``, ``image_id``, ``turns[].task``), keeping per question a
:class:`Candidate` (id, image, group, tasks, difficulty, byte offset of its line) rather
than the question itself; the file's SHA-256 is computed in the same pass. Only the
questions finally chosen are read again and validated in full by the
:class:`~.questions.Question` model (:func:`read_chosen`), so 50,000 candidates are scanned
in about the time ``json.loads`` takes on them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from tqdm import tqdm

from heritage_eval.benchmarks.muse.assemble_strata import (
    UNKNOWN,
    difficulty,
    group_of,
    pool_theme,
)
from heritage_eval.benchmarks.muse.questions import (
    READABLE_SCHEMA_VERSIONS,
    Question,
    QuestionFileError,
    QuestionFileHeader,
    validation_reason,
)
from heritage_eval.core.sizecap import LongLine, iter_lines


@dataclass
class Candidate:
    """One pool question as assembly sees it.

    ``index``: 0-based position among the pool's questions; ``lineno``: its line (1 is
    the header); ``offset``: byte offset of that line; ``group``: allocation group
    (:func:`~.assemble_strata.group_of`); ``tasks``: distinct turn tasks in turn order
    (``len(tasks)`` is a dialogue's depth); ``style`` / ``theme`` are filled in from the
    strata sources after the scan.
    """

    index: int
    lineno: int
    offset: int
    qid: str
    image_id: str
    group: str
    tasks: tuple[str, ...]
    difficulty: str
    style: str = UNKNOWN
    theme: str = UNKNOWN


@dataclass
class Pool:
    """A scanned pool: header, SHA-256 of the file's bytes, candidates in file order and
    the themes its scene-classification questions record (image id → theme)."""

    path: Path
    header: QuestionFileHeader
    sha256: str
    candidates: list[Candidate] = field(default_factory=list)
    themes: dict[str, str] = field(default_factory=dict)


def _header(p: Path, raw: str) -> QuestionFileHeader:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise QuestionFileError(f"{p}:1: invalid JSON: {exc.msg}") from exc
    if not isinstance(data, dict) or data.get("kind") != "header":
        raise QuestionFileError(f"{p}:1: first record must be a header (is this a "
                                "question file written by muse generate?)")
    try:
        header = QuestionFileHeader.model_validate(data)
    except ValidationError as exc:
        raise QuestionFileError(f"{p}:1: {validation_reason(exc)}") from exc
    if header.schema_version not in READABLE_SCHEMA_VERSIONS:
        raise QuestionFileError(f"{p}:1: unsupported schema_version "
                                f"{header.schema_version!r} (readable: "
                                f"{', '.join(READABLE_SCHEMA_VERSIONS)})")
    return header


def _candidate(p: Path, lineno: int, offset: int, index: int, data: Any) -> Candidate:
    """The candidate of one question line; ``QuestionFileError`` when a field assembly
    needs is missing or of the wrong type."""
    def bad(what: str) -> QuestionFileError:
        return QuestionFileError(f"{p}:{lineno}: {what}")

    if not isinstance(data, dict) or data.get("kind") != "question":
        raise bad("not a question record (kind must be 'question')")
    qid, image_id, turns = data.get("id"), data.get("image_id"), data.get("turns")
    if not isinstance(qid, str) or not qid:
        raise bad("question without a string id")
    if not isinstance(image_id, str) or not image_id:
        raise bad(f"question {qid}: no image_id")
    if not isinstance(turns, list) or not turns or not all(
            isinstance(t, dict) and isinstance(t.get("task"), str) for t in turns):
        raise bad(f"question {qid}: turns must be a non-empty list of turns with a task")
    tasks = tuple(dict.fromkeys(str(t["task"]) for t in turns))
    group = group_of(data)
    return Candidate(index=index, lineno=lineno, offset=offset, qid=qid, image_id=image_id,
                     group=group, tasks=tasks, difficulty=difficulty(data, group))


def scan_pool(path: str | Path, progress: bool = False) -> Pool:
    """Scan the pool at ``path`` (module doc). Raises :class:`QuestionFileError` naming
    ``file:line`` for a line that is not UTF-8 or JSON, a missing or unsupported header,
    a question lacking ``id`` / ``image_id`` / ``turns`` or an id used twice, and for a
    pool without questions; ``OSError`` when the file cannot be read."""
    p = Path(path)
    digest = hashlib.sha256()
    pool: Pool | None = None
    seen: dict[str, int] = {}
    offset = 0
    with p.open("rb") as fh, tqdm(total=p.stat().st_size, unit="B", unit_scale=True,
                                  desc="muse assemble: read pool", file=sys.stderr,
                                  disable=not progress, delay=0.5) as bar:
        for lineno, raw_bytes in iter_lines(fh, str(p)):  # one line held, capped
            if isinstance(raw_bytes, LongLine):  # docs/limits.md
                raise QuestionFileError(raw_bytes.error)
            start, offset = offset, offset + len(raw_bytes)
            digest.update(raw_bytes)
            if lineno % 1024 == 0:
                bar.update(offset - bar.n)
            try:
                raw = raw_bytes.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise QuestionFileError(f"{p}:{lineno}: line is not valid UTF-8") from exc
            if pool is None:
                pool = Pool(path=p, header=_header(p, raw), sha256="")
                continue
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise QuestionFileError(f"{p}:{lineno}: invalid JSON: {exc.msg}") from exc
            cand = _candidate(p, lineno, start, len(pool.candidates), data)
            if cand.qid in seen:
                raise QuestionFileError(f"{p}:{lineno}: question id {cand.qid!r} already "
                                        f"used on line {seen[cand.qid]}")
            seen[cand.qid] = lineno
            pool.candidates.append(cand)
            if cand.group == "scene_classification" and (theme := pool_theme(data)):
                pool.themes[cand.image_id] = theme
        bar.update(offset - bar.n)
    if pool is None:
        raise QuestionFileError(f"{p}: empty question file (no header)")
    if not pool.candidates:
        raise QuestionFileError(f"{p}: the pool holds no question")
    pool.sha256 = digest.hexdigest()
    return pool


def read_chosen(pool: Pool, chosen: Iterable[Candidate]) -> list[Question]:
    """The chosen questions, read again from the pool in file order and validated in
    full; raises :class:`QuestionFileError` naming ``file:line`` for one that fails
    (:class:`~.questions.QuestionTurn` rules: answer among the options …)."""
    out: list[Question] = []
    with pool.path.open("rb") as fh:
        for cand in sorted(chosen, key=lambda c: c.index):
            fh.seek(cand.offset)
            line = fh.readline().decode("utf-8")
            try:
                out.append(Question.model_validate(json.loads(line)))
            except ValidationError as exc:
                raise QuestionFileError(f"{pool.path}:{cand.lineno}: "
                                        f"{validation_reason(exc)}") from exc
    return out
