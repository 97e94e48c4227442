"""Reading a MUSE question file tolerantly, one line at a time.

:class:`QuestionScan` is the one pass every reader shares: it reads the file in binary,
one capped line at a time, keeps the header and an ``error`` row for every line that
cannot be read (``QuestionSet.bad``), and yields each readable question with its line
number. :func:`load_question_set` holds them all (the form ``curate`` and the tests use);
``run muse`` keeps only compact facts from the same pass and reads the questions again
when it needs them (:mod:`.question_index`, :func:`reread_questions`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from heritage_eval.benchmarks.muse.questions import (
    Question,
    QuestionFileError,
    QuestionFileHeader,
    readable_header,
    resolve_image_path,
    validation_reason,
)
from heritage_eval.benchmarks.muse.scoring import TurnResult
from heritage_eval.core.datapath import open_regular
from heritage_eval.core.lazy_samples import DataChangedError
from heritage_eval.core.records_io import short_error
from heritage_eval.core.sizecap import LongLine, iter_lines
from heritage_eval.core.types import Outcome


@dataclass
class QuestionSet:
    """Questions read from one file; ``bad`` holds a ``TurnResult`` error row for every
    line that could not be read (its line number at the same index of ``bad_lines``);
    ``lines`` maps question id -> line number;
    ``images_dir`` overrides the folder of source images (``run muse --images``): the
    ``@images/…`` references of a schema-2 file are looked up there.

    ``questions`` is a list when the file was loaded whole (:func:`load_question_set`);
    ``run muse`` gives a re-iterable sequence that reads the file again on each pass,
    and its ``lines`` knows the selected questions only (:mod:`.question_index`)."""

    path: Path
    header: QuestionFileHeader
    questions: Sequence[Question] = field(default_factory=list)
    lines: Mapping[str, int] = field(default_factory=dict)
    bad: list[TurnResult] = field(default_factory=list)
    images_dir: Path | None = None
    bad_lines: list[int] = field(default_factory=list)

    @property
    def base_dir(self) -> Path:
        return self.path.resolve().parent


def image_path(qs: QuestionSet, rel: str) -> Path:
    """Absolute path of image reference ``rel`` of the question file: a source artwork
    (``@images/…``) under ``qs.images_dir`` when given, else where the header says; any
    other path relative to the question file's folder (``questions.resolve_image_path``)."""
    return resolve_image_path(qs.path.resolve(), qs.header, rel, qs.images_dir)


def _bad_row(path: Path, lineno: int, data: object, reason: str) -> TurnResult:
    """An ``error`` row for an unreadable line; its ``task`` is whatever the line names
    (or ""), but such rows are reported apart from the tasks."""
    qid, task = f"{path.name}:{lineno}", ""
    if isinstance(data, dict):
        qid = str(data.get("id") or qid)
        turns = data.get("turns")
        if isinstance(turns, list) and turns and isinstance(turns[0], dict):
            task = str(turns[0].get("task") or "")
    return TurnResult(question_id=qid, image_id="", task=task, turn=0, answer_format="",
                      state=Outcome.ERROR,
                      reason=f"{path}:{lineno}: " + "; ".join(reason.splitlines()))


def _decode(raw: bytes, lineno: int) -> str:
    return raw.decode("utf-8-sig" if lineno == 1 else "utf-8")


class QuestionScan:
    """One tolerant pass over the question file ``path``: iterating yields
    ``(line number, question)`` for each readable question, in file order; :attr:`qs`
    (set when the header is read) collects the header and the unreadable lines
    (``bad`` / ``bad_lines``), never the questions. The rules are those of
    :func:`load_question_set`; raises as it does. ``seen`` (the ids met so far, for the
    duplicate check) is the only thing that grows with the file while iterating."""

    def __init__(self, path: str | Path, images_dir: Path | None = None) -> None:
        self.path = Path(path)
        self.images_dir = images_dir
        self._qs: QuestionSet | None = None

    @property
    def qs(self) -> QuestionSet:
        """The question set of the header read (no questions in it). Raises
        :class:`QuestionFileError` before the header was read."""
        if self._qs is None:
            raise QuestionFileError(f"{self.path}: empty question file (no header)")
        return self._qs

    def _bad(self, lineno: int, data: object, reason: str, exc: Exception | None = None
             ) -> None:
        if self._qs is None:
            problem = QuestionFileError(f"{self.path}:{lineno}: no valid header: {reason}")
            if exc is None:
                raise problem
            raise problem from exc
        self._qs.bad.append(_bad_row(self.path, lineno, data, reason))
        self._qs.bad_lines.append(lineno)

    def __iter__(self) -> Iterator[tuple[int, Question]]:
        p = self.path
        seen: set[str] = set()
        with open_regular(p) as fh:  # a FIFO or device: NotARegularFile, never waited on
            for lineno, raw_bytes in iter_lines(fh, str(p)):  # one line held, capped
                data: object = None
                if isinstance(raw_bytes, LongLine):  # read past, never held: one error row
                    self._bad(lineno, None, raw_bytes.reason)
                    continue
                try:
                    raw = _decode(raw_bytes, lineno)
                except UnicodeDecodeError as exc:
                    self._bad(lineno, None, f"line is not valid UTF-8 (byte "
                              f"0x{raw_bytes[exc.start]:02x} at byte {exc.start + 1} of "
                              "the line)", exc)
                    continue
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw.rstrip("\r\n"))  # an error's column: this line
                    if self._qs is None:
                        self._header(data, lineno)
                        continue
                    q = Question.model_validate(data)
                except (json.JSONDecodeError, ValidationError) as exc:
                    if self._qs is None:
                        raise QuestionFileError(f"{p}:{lineno}: no valid header: "
                                                f"{exc}") from exc
                    why = validation_reason(exc) if isinstance(exc, ValidationError) else \
                        short_error(exc)
                    self._bad(lineno, data, f"question rejected: {why}")
                    continue
                if q.id in seen:
                    self._bad(lineno, data, f"duplicate question id {q.id!r}")
                    continue
                seen.add(q.id)
                yield lineno, q
        if self._qs is None:
            raise QuestionFileError(f"{p}: empty question file (no header)")

    def _header(self, data: object, lineno: int) -> None:
        header = readable_header(data, f"{self.path}:{lineno}")
        self._qs = QuestionSet(path=self.path, header=header, images_dir=self.images_dir)


def load_question_set(path: str | Path, images_dir: Path | None = None) -> QuestionSet:
    """Read a question file tolerantly: a bad question line becomes an error row.

    The file is read in binary and each line decoded on its own, so a line that is not
    UTF-8 (one stray byte), over the ``max_line_bytes`` cap (read past without being
    held; docs/limits.md), not JSON, or not a valid question — including a ``choice``
    answer that is none of its options, or a negative count
    (:class:`~.questions.QuestionTurn` validation) — becomes an ``error`` row naming
    ``file:line`` and the reason, and the other questions run. Raises
    :class:`QuestionFileError` (naming the file and line) only when the header is
    missing, unreadable, invalid or of an unsupported schema version: without it nothing
    can be run. ``OSError`` propagates for an unreadable file.
    """
    scan = QuestionScan(path, images_dir)
    questions: list[Question] = []
    lines: dict[str, int] = {}
    for lineno, q in scan:
        questions.append(q)
        lines[q.id] = lineno
    qs = scan.qs
    qs.questions, qs.lines = questions, lines
    return qs


def reread_questions(path: Path, lines: Sequence[int], ids: Sequence[str] | None = None
                     ) -> Iterator[Question]:
    """The questions on lines ``lines`` (ascending line numbers, each a readable
    question found by a :class:`QuestionScan` of ``path``), read again, in order, as
    that pass read them; the file is read only up to the last of them. ``ids``: their
    ids, checked. Raises :class:`~heritage_eval.core.lazy_samples.DataChangedError` (a
    ``RuntimeError``) when the file no longer holds them (it changed
    while running)."""
    wanted = iter(range(len(lines)))
    k = next(wanted, None)
    if k is None:
        return
    with open_regular(path) as fh:
        for lineno, raw in iter_lines(fh, str(path)):
            if lineno != lines[k]:
                continue
            try:
                if isinstance(raw, LongLine):
                    raise ValueError(raw.reason)
                q = Question.model_validate(json.loads(_decode(raw, lineno).rstrip("\r\n")))
            except (ValueError, ValidationError) as exc:
                raise DataChangedError(f"{path}:{lineno}: the question file changed "
                                       f"while running: {exc}") from exc
            if ids is not None and q.id != ids[k]:
                raise DataChangedError(f"{path}:{lineno}: the question file changed "
                                       f"while running: question {q.id!r}, was {ids[k]!r}")
            yield q
            k = next(wanted, None)
            if k is None:
                return
    raise DataChangedError(f"{path}: the question file changed while running: it "
                           f"ends before line {lines[k]}")
