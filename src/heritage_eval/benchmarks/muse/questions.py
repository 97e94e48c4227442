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
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from heritage_eval.core.store import atomic_write_text

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
                    if header.schema_version not in READABLE_SCHEMA_VERSIONS:
                        raise QuestionFileError(
                            f"{p}:{lineno}: unsupported schema_version "
                            f"{header.schema_version!r} (readable: "
                            f"{', '.join(READABLE_SCHEMA_VERSIONS)})")
                else:
                    questions.append(Question.model_validate(data))
            except ValidationError as exc:
                raise QuestionFileError(f"{p}:{lineno}: {exc}") from exc
    if header is None:
        raise QuestionFileError(f"{p}: empty question file (no header)")
    return header, questions


def resolve_image_path(question_file: Path, header: QuestionFileHeader, rel: str,
                       images_dir: Path | None = None) -> Path:
    """The file an image reference ``rel`` of ``question_file`` points to.

    ``@images/<path>`` (a source artwork): ``images_dir/<path>`` when ``images_dir`` is
    given (e.g. ``run muse --images DIR``); else the header's ``source.images_dir_relative``
    taken from the question file's folder when that file exists; else
    ``source.images_dir_absolute`` when that file exists; else the relative candidate
    (so a "not found" message names where the file was expected). Any other reference
    (generated assets, schema-1 files) is relative to the question file's folder. Never
    raises for a missing file; the caller checks existence.
    """
    base = Path(question_file).parent
    if not rel.startswith(IMAGES_PREFIX):
        return base / rel
    tail = rel[len(IMAGES_PREFIX):]
    if images_dir is not None:
        return Path(images_dir) / tail
    relative = header.source.get("images_dir_relative")
    absolute = header.source.get("images_dir_absolute")
    candidates = [base / str(relative) / tail] if relative else []
    if absolute:
        candidates.append(Path(str(absolute)) / tail)
    for cand in candidates:
        if cand.is_file():
            return cand
    return candidates[0] if candidates else base / tail
