"""The versioned MUSE question file (written by ``muse generate``, read by ``run muse``).

Format: JSON Lines, UTF-8. Line 1 is a :class:`QuestionFileHeader`; every other line is one
:class:`Question`. Generated images (jigsaw pieces, images with drawn boxes) live in
``<question file stem>_assets/`` and are referenced relative to the question file's folder.
Source artworks are referenced as ``@images/<path relative to the images folder>``
(schema 2); the header's ``source`` records that folder as given
(``images_dir``), relative to the question file (``images_dir_relative``) and absolute
(``images_dir_absolute``), and :func:`resolve_image_path` finds the file (an explicit
folder given at run time first). Schema 1 files (every path relative to the question
file) are still read.

An importer for the official MUSE release would emit the same records (one
:class:`Question` per released item, ``distractor_type`` taken from the release's option
metadata), so frozen benchmarks from either source run through the same evaluator.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from heritage_eval.core.sizecap import LongLine, iter_lines
from heritage_eval.core.store import atomic_write_lines
from heritage_eval.core.unicode_text import unusable_file_name

SCHEMA_VERSION = "muse-questions/2"
#: Schema versions :func:`read_questions` accepts (1: source images relative to the file).
READABLE_SCHEMA_VERSIONS: tuple[str, ...] = ("muse-questions/1", "muse-questions/2")
#: Prefix of a source-image reference resolved against the images folder.
IMAGES_PREFIX = "@images/"

AnswerFormat = Literal["choice", "number", "open", "position"]


class QuestionFileHeader(BaseModel):
    """First line of a question file: versions, seed, tasks, source description and knobs."""

    kind: Literal["header"] = "header"
    schema_version: str = SCHEMA_VERSION
    generator_version: str
    seed: int
    tasks: list[str]
    source: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)


class OptionRecord(BaseModel):
    """One answer option.

    ``box`` is a COCO ``[x, y, w, h]`` bounding box normalized to 0–1 when the option is a
    box; ``image`` a path relative to the question file (jigsaw pieces). ``distractor_type``
    is ``"correct"`` for the true option, otherwise the distractor type id.
    """

    label: str
    text: str | None = None
    image: str | None = None
    box: list[float] | None = None
    distractor_type: str


#: Largest count answer a question may have (the paper's counts are single figures).
MAX_COUNT = 1000


class QuestionTurn(BaseModel):
    """One user turn: prompt text (with options and the answer-format line) and its key.

    ``answer``: ``choice`` → correct label (str); ``number`` → int; ``open`` → reference
    text; ``position`` → ``{"lateral": "left|none|right", "depth": "front|none|back",
    "vertical": "above|none|under"}``.
    """

    task: str
    prompt: str
    images: list[str] = Field(default_factory=list)
    answer_format: AnswerFormat
    tag: str | None = None
    options: list[OptionRecord] = Field(default_factory=list)
    answer: Any
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _images_are_file_names(self) -> QuestionTurn:
        """Every image reference (turn and options) can name a file: one holding a NUL
        or a lone surrogate is refused (``ValidationError``), so the question is an
        error row instead of a crash where the path is looked up."""
        for ref in [*self.images, *(o.image for o in self.options if o.image)]:
            if (unusable := unusable_file_name(ref)) is not None:
                raise ValueError(f"image reference {ref!r} holds {unusable}")
        return self

    @model_validator(mode="after")
    def _answer_is_possible(self) -> QuestionTurn:
        """The key must be an answer the turn allows (else ``ValidationError``): a
        ``choice`` answer is one of the option labels (labels unique); a ``number`` is a
        whole number >= 0; a ``position`` has exactly the three dimensions with their
        values. A question breaking this is rejected when the file is read."""
        ans = self.answer
        if self.answer_format == "choice":
            labels = [o.label for o in self.options]
            twice = sorted({lab for lab in labels if labels.count(lab) > 1})
            if twice:
                raise ValueError(f"option label(s) {', '.join(twice)} used twice")
            if not isinstance(ans, str) or ans not in labels:
                raise ValueError(f"choice answer {ans!r} is not among the option labels "
                                 f"({', '.join(labels) or 'no options'})")
        elif self.answer_format == "number":
            if isinstance(ans, bool) or not isinstance(ans, int | float) \
                    or not math.isfinite(ans) or ans != int(ans):
                raise ValueError(f"count answer {ans!r} is not a whole number")
            if ans < 0:
                raise ValueError(f"count answer {ans:g} is negative (a count is >= 0)")
            if ans > MAX_COUNT:
                raise ValueError(f"count answer {ans:g} is over {MAX_COUNT} (objects "
                                 "counted in one artwork); a corrupted question?")
        elif self.answer_format == "position":
            allowed = {"lateral": ("left", "none", "right"),
                       "depth": ("front", "none", "back"),
                       "vertical": ("above", "none", "under")}
            if not isinstance(ans, dict) or set(ans) != set(allowed) or any(
                    ans[k] not in v for k, v in allowed.items()):
                raise ValueError(f"position answer {ans!r} must give lateral "
                                 "(left/none/right), depth (front/none/back) and vertical "
                                 "(above/none/under)")
        return self

    @model_validator(mode="after")
    def _task_is_known(self) -> QuestionTurn:
        """``task`` must be one of the 12 task ids (:data:`.taxonomy.TASK_IDS`), exactly:
        a misspelt or re-cased id is refused (``ValidationError`` naming the nearest id,
        :func:`unknown_task_reason`) instead of becoming a 13th task in the tables."""
        reason = unknown_task_reason(self.task)
        if reason is not None:
            raise ValueError(reason)
        return self


def unknown_task_reason(task: object) -> str | None:
    """``None`` when ``task`` is a task id of :data:`.taxonomy.TASK_IDS`; else why not:
    ``unknown task 'object_cuont' (did you mean 'object_count'?); the tasks are …``. The
    suggestion is the closest id by :func:`difflib.get_close_matches` (ratio >= 0.6),
    compared without case, spaces or hyphens, so ``"Object Count"`` also finds it."""
    import difflib

    from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS

    if isinstance(task, str) and task in TASK_IDS:
        return None
    text = str(task)
    folded = text.strip().lower().replace(" ", "_").replace("-", "_")
    near = difflib.get_close_matches(folded, TASK_IDS, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"unknown task {text!r}{hint}; the tasks are {', '.join(TASK_IDS)}"


class Question(BaseModel):
    """One question: 1 turn for most tasks, 4 for the affective dialogue, 2 for remote
    interaction. ``id`` = ``f"{image_id}:{task or 'affective_dialogue'}:{n}"``."""

    kind: Literal["question"] = "question"
    id: str
    image_id: str
    turns: list[QuestionTurn]
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _has_turns(self) -> Question:
        """A question has at least one turn (``ValidationError`` otherwise): one with
        none would ask nothing and vanish from every table without a word; refused, its
        line is an error row naming ``file:line`` (``run.load_question_set``)."""
        if not self.turns:
            raise ValueError("the question has no turns (a question needs at least one)")
        return self


class QuestionFileError(ValueError):
    """A question file line could not be read; the message names ``file:line``."""


def validation_reason(exc: ValidationError) -> str:
    """A pydantic error as one readable line: ``turns.0: choice answer 'Z' is not among
    the option labels (A, B, C, D)`` (location, then the message)."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


def question_line(record: BaseModel) -> str:
    """One line of a question file (the header or a question) without its newline: JSON
    with sorted keys, non-ASCII characters as they are."""
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def write_questions(
    path: str | Path, header: QuestionFileHeader, questions: Iterable[Question]
) -> None:
    """Write the header and questions as JSON Lines atomically (sorted keys, UTF-8),
    each question as it comes (memory: one chunk of lines, not the whole file)."""
    write_question_lines(path, header, (question_line(q) for q in questions))


def write_question_lines(path: str | Path, header: QuestionFileHeader,
                         lines: Iterable[str]) -> None:
    """Write ``header`` then ``lines`` (questions already made into
    :func:`question_line` text) atomically, as they come; the same bytes as
    :func:`write_questions` of those questions. Raises ``OSError`` (nothing replaced)."""
    atomic_write_lines(path, chain([question_line(header)], lines))


def readable_header(data: object, where: str) -> QuestionFileHeader:
    """The question file's header record ``data`` (read at ``where``, ``FILE:LINE``).
    Raises pydantic's ``ValidationError`` for a malformed header and
    :class:`QuestionFileError` for a schema version not in
    :data:`READABLE_SCHEMA_VERSIONS`."""
    header = QuestionFileHeader.model_validate(data)
    if header.schema_version not in READABLE_SCHEMA_VERSIONS:
        raise QuestionFileError(
            f"{where}: unsupported schema_version {header.schema_version!r} (readable: "
            f"{', '.join(READABLE_SCHEMA_VERSIONS)})")
    return header


def read_questions(path: str | Path) -> tuple[QuestionFileHeader, list[Question]]:
    """Read a question file.

    Raises :class:`QuestionFileError` naming ``file:line`` for a line that is not UTF-8,
    over the ``max_line_bytes`` cap (never held; docs/limits.md), invalid JSON, a
    missing or wrong header, an unsupported ``schema_version`` or a record failing
    validation (strict: the tolerant reader is ``run.load_question_set``).
    """
    p = Path(path)
    header: QuestionFileHeader | None = None
    questions: list[Question] = []
    from heritage_eval.core.datapath import open_regular

    with open_regular(p) as fh:  # a FIFO or device: NotARegularFile, never waited on
        for lineno, raw_bytes in iter_lines(fh, str(p)):  # one line held, capped
            if isinstance(raw_bytes, LongLine):
                raise QuestionFileError(raw_bytes.error)
            try:
                raw = raw_bytes.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise QuestionFileError(f"{p}:{lineno}: line is not valid UTF-8 (byte "
                                        f"0x{raw_bytes[exc.start]:02x} at byte "
                                        f"{exc.start + 1} of the line)") from exc
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise QuestionFileError(f"{p}:{lineno}: invalid JSON: {exc.msg}") from exc
            try:
                if header is None:
                    if not isinstance(data, dict) or data.get("kind") != "header":
                        raise QuestionFileError(f"{p}:{lineno}: first record must be a header")
                    header = readable_header(data, f"{p}:{lineno}")
                else:
                    questions.append(Question.model_validate(data))
            except ValidationError as exc:
                raise QuestionFileError(f"{p}:{lineno}: {validation_reason(exc)}") from exc
    if header is None:
        raise QuestionFileError(f"{p}: empty question file (no header)")
    return header, questions


def resolve_image_path(question_file: Path, header: QuestionFileHeader, rel: str,
                       images_dir: Path | None = None, *, check: bool = False,
                       allow_outside: bool | None = None) -> Path:
    """The file an image reference ``rel`` of ``question_file`` points to.

    ``@images/<path>`` (a source artwork): ``images_dir/<path>`` when ``images_dir`` is
    given (e.g. ``run muse --images DIR``); else the header's ``source.images_dir_relative``
    taken from the question file's folder when that file exists; else
    ``source.images_dir_absolute`` when that file exists; else the relative candidate
    (so a "not found" message names where the file was expected). Any other reference
    (generated assets, schema-1 files) is relative to the question file's folder. Never
    raises for a missing file; the caller checks existence.

    ``check=True``: the reference must stay inside its data folder — an ``@images/``
    reference inside the images folder it is looked up in (``images_dir``, else the
    header's folder), any other reference inside the question file's folder; ``..``,
    absolute paths and symlinks leading out raise
    :class:`~heritage_eval.core.paths.PathOutsideRoot` (naming the reference) unless
    ``allow_outside`` is ``True`` (``None``: the process policy,
    :func:`heritage_eval.core.paths.outside_allowed`). Pass ``--images`` to pin the
    images folder of a question file from an untrusted source (its header then names
    no folder that is read).
    """
    from heritage_eval.core.paths import resolve_inside

    base = Path(question_file).parent
    if not rel.startswith(IMAGES_PREFIX):
        return resolve_inside(base, rel, allow_outside) if check else base / rel
    tail = rel[len(IMAGES_PREFIX):]
    if images_dir is not None:
        roots = [Path(images_dir)]
    else:
        relative = header.source.get("images_dir_relative")
        absolute = header.source.get("images_dir_absolute")
        roots = [base / str(relative)] if relative else []
        if absolute:
            roots.append(Path(str(absolute)))
        roots = roots or [base]
    # the first folder holding the file (any entry: a FIFO there is refused, not passed
    # over), else the first (so "not found" names it); the reference is checked against
    # the folder it is looked up in
    chosen = next((folder for folder in roots if os.path.lexists(folder / tail)), roots[0])
    return resolve_inside(chosen, tail, allow_outside) if check else chosen / tail
