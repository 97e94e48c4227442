"""The versioned MUSE question file (written by ``muse generate``, read by ``run muse``).

Format: JSON Lines, UTF-8. Line 1 is a :class:`QuestionFileHeader`; every other line is one
:class:`Question`. Image paths are relative to the question file's folder; generated images
(jigsaw pieces, images with drawn boxes) live in ``<question file stem>_assets/``.

An importer for the official MUSE release would emit the same records (one
:class:`Question` per released item, ``distractor_type`` taken from the release's option
metadata), so frozen benchmarks from either source run through the same evaluator.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from heritage_eval.core.store import atomic_write_text

SCHEMA_VERSION = "muse-questions/1"

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


class Question(BaseModel):
    """One question: 1 turn for most tasks, 4 for the affective dialogue, 2 for remote
    interaction. ``id`` = ``f"{image_id}:{task or 'affective_dialogue'}:{n}"``."""

    kind: Literal["question"] = "question"
    id: str
    image_id: str
    turns: list[QuestionTurn]
    metadata: dict[str, Any] = Field(default_factory=dict)


class QuestionFileError(ValueError):
    """A question file line could not be read; the message names ``file:line``."""


def _line(record: BaseModel) -> str:
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def write_questions(
    path: str | Path, header: QuestionFileHeader, questions: Iterable[Question]
) -> None:
    """Write the header and questions as JSON Lines atomically (sorted keys, UTF-8)."""
    text = "".join(_line(r) + "\n" for r in [header, *questions])
    atomic_write_text(path, text)


def read_questions(path: str | Path) -> tuple[QuestionFileHeader, list[Question]]:
    """Read a question file.

    Raises :class:`QuestionFileError` naming ``file:line`` for invalid JSON, a missing or
    wrong header, an unsupported ``schema_version`` or a record failing validation.
    """
    p = Path(path)
    header: QuestionFileHeader | None = None
    questions: list[Question] = []
    with p.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
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
                    header = QuestionFileHeader.model_validate(data)
                    if header.schema_version != SCHEMA_VERSION:
                        raise QuestionFileError(
                            f"{p}:{lineno}: unsupported schema_version "
                            f"{header.schema_version!r} (expected {SCHEMA_VERSION!r})")
                else:
                    questions.append(Question.model_validate(data))
            except ValidationError as exc:
                raise QuestionFileError(f"{p}:{lineno}: {exc}") from exc
    if header is None:
        raise QuestionFileError(f"{p}: empty question file (no header)")
    return header, questions
