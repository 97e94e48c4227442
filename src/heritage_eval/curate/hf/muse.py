"""MUSE question file <-> parquet rows: one row per question (1–4 turns), one config per
task (question group: the task, or ``affective_dialogue`` for the 4-turn dialogue).

A question may show several images (the artwork, jigsaw pieces, the artwork with boxes
drawn); ``image_refs`` lists every reference of its turns and options in order of first
use and ``images`` holds their bytes at the same index (null when the file was missing).
``question`` is the question record itself (JSON), so the read-back rewrites the
question file exactly; the file's header (seed, generator version, tasks, knobs) is
kept in every shard's schema metadata. The read-back writes ``questions.jsonl`` with
source artworks (``@images/…``) under ``images/`` and generated images at their
relative path, and points the header's images folder at ``images/``.
Reader: :func:`heritage_eval.benchmarks.muse.run.load_question_set` (tolerant): lines
it rejects are left out, missing images exported as null; both are listed as problems.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from heritage_eval.curate.hf.features import image_bytes, image_cell, oversized_image
from heritage_eval.curate.hf.spec import (
    Column,
    ExportSource,
    HfExportError,
    HfReadError,
    Row,
    StatTable,
    safe_relative,
)

NAME = "muse"
COLUMNS = [
    Column("id", "string", "question id `<image id>:<task>:<n>`"),
    Column("image_id", "string", "the artwork the question is about"),
    Column("task", "string", "task (question group) of the question"),
    Column("n_turns", "int64", "number of user turns (4 for the affective dialogue)"),
    Column("turn_tasks", "strings", "task of each turn"),
    Column("answer_formats", "strings", "answer format of each turn: choice, number, "
           "open, position"),
    Column("prompts", "strings", "prompt text of each turn (options included)"),
    Column("answers", "strings", "answer key of each turn (JSON)"),
    Column("image_refs", "strings", "image references of the question, in order of use"),
    Column("images", "images", "the images at the same index as `image_refs`"),
    Column("question", "string", "the question record as in the question file (JSON)"),
    Column("line", "int64", "line number in the source question file"),
]


def image_refs(question: Any) -> list[str]:
    """Every image reference of a question's turns and options, first use first."""
    seen: dict[str, None] = {}
    for turn in question.turns:
        for ref in [*turn.images, *(o.image for o in turn.options if o.image)]:
            seen.setdefault(ref, None)
    return list(seen)


def _inputs(path: Path, header_source: dict[str, Any],
            images_dir: Path | None) -> list[Path]:
    """What the export of ``path`` reads: the question file, its folder (generated
    images lie there), ``images_dir`` and the header's images folders."""
    folders = [path, path.parent]
    if images_dir is not None:
        folders.append(Path(images_dir))
    if header_source.get("images_dir_relative"):
        folders.append(path.parent / str(header_source["images_dir_relative"]))
    if header_source.get("images_dir_absolute"):
        folders.append(Path(str(header_source["images_dir_absolute"])))
    return folders


def source(path: Path, images_dir: Path | None = None) -> ExportSource:
    """The export of the question file at ``path`` (``images_dir``: the source artworks'
    folder, as ``run muse --images``). Raises :class:`HfExportError` when the file
    cannot be read or holds no question."""
    from heritage_eval.benchmarks.muse.questions import QuestionFileError
    from heritage_eval.benchmarks.muse.run import (
        image_path,
        load_question_set,
        question_group,
    )

    try:
        qs = load_question_set(path, images_dir)
    except (OSError, UnicodeDecodeError, QuestionFileError) as exc:
        raise HfExportError(f"cannot read question file {path}: {exc}") from exc
    if not qs.questions:
        raise HfExportError(f"{path}: no readable question")
    problems = [f"not exported: {row.reason}" for row in qs.bad]
    missing: set[str] = set()
    for q in qs.questions:
        for ref in image_refs(q):
            if not image_path(qs, ref).is_file() and ref not in missing:
                missing.add(ref)
                problems.append(f"{path}:{qs.lines[q.id]}: image {ref!r} not found "
                                f"({image_path(qs, ref)}): exported as a null image")
            elif ref not in missing and (big := oversized_image(image_path(qs, ref))):
                missing.add(ref)  # over the max_export_image cap (docs/limits.md)
                problems.append(f"{path}:{qs.lines[q.id]}: {big}: exported as a null image")

    def rows() -> Iterator[Row]:
        for q in qs.questions:
            refs = image_refs(q)
            cells = []
            for ref in refs:
                file = image_path(qs, ref)
                cells.append(None if ref in missing else image_cell(image_bytes(file), ref))
            group = question_group(q)
            yield group, {
                "id": q.id, "image_id": q.image_id, "task": group, "n_turns": len(q.turns),
                "turn_tasks": [t.task for t in q.turns],
                "answer_formats": [t.answer_format for t in q.turns],
                "prompts": [t.prompt for t in q.turns],
                "answers": [json.dumps(t.answer, ensure_ascii=False) for t in q.turns],
                "image_refs": refs, "images": cells,
                "question": json.dumps(q.model_dump(mode="json"), ensure_ascii=False,
                                       sort_keys=True),
                "line": qs.lines[q.id]}

    per: dict[str, list[int]] = {}
    for q in qs.questions:
        per.setdefault(question_group(q), []).append(len(q.turns))
    table = StatTable("Questions per task", ("task", "questions", "turns", "artworks"),
                      [(task, str(len(v)), str(sum(v)),
                        str(len({q.image_id for q in qs.questions
                                 if question_group(q) == task})))
                       for task, v in per.items()])
    header = qs.header.model_dump(mode="json")
    return ExportSource(
        benchmark=NAME, columns=COLUMNS, total=len(qs.questions), rows=rows,
        meta={"header": header},
        provenance={"source": str(path),
                    "seed": qs.header.seed, "generator_version": qs.header.generator_version,
                    "schema_version": qs.header.schema_version},
        tables=[table], problems=problems, inputs=_inputs(path, qs.header.source, images_dir),
        config_docs={t: f"{t}: {len(v)} questions" for t, v in per.items()},
        pretty_name="MUSE questions (export)",
        description="Multi-modal understanding of artworks: one frozen question (1-4 "
                    "turns) with its images per row; one config per task.")


def materialise(rows: Iterable[dict[str, Any]], header: dict[str, Any], dest: Path) -> Path:
    """Write ``dest/questions.jsonl`` and its images from exported rows and the source
    file's ``header``; returns the question file's path. Raises
    :class:`~.spec.HfReadError` for an unsafe reference or a malformed row."""
    from heritage_eval.benchmarks.muse.questions import (
        IMAGES_PREFIX,
        Question,
        QuestionFileHeader,
    )

    questions: list[tuple[int, Question]] = []
    for n, row in enumerate(rows):
        where = f"row {row.get('id')!r}"
        refs = list(row.get("image_refs") or [])
        cells = list(row.get("images") or [])
        if len(refs) != len(cells):
            raise HfReadError(f"{where}: {len(refs)} image_refs but {len(cells)} images")
        for ref, cell in zip(refs, cells, strict=True):
            if ref.startswith(IMAGES_PREFIX):
                target = dest / "images" / safe_relative(ref[len(IMAGES_PREFIX):], where)
            else:
                target = dest / safe_relative(ref, where)
            if cell is not None and cell.get("bytes") is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(cell["bytes"])
        try:
            q = Question.model_validate(json.loads(str(row["question"])))
        except ValueError as exc:
            raise HfReadError(f"{where}: 'question' is not a valid question: {exc}") from exc
        line = row.get("line")
        questions.append((int(line) if line is not None else n, q))
    head = QuestionFileHeader.model_validate(header)
    src = {k: v for k, v in head.source.items() if k != "images_dir_absolute"}
    src.update({"images_dir": "images", "images_dir_relative": "images"})
    head = head.model_copy(update={"source": src})
    out = dest / "questions.jsonl"
    lines = [head, *(q for _, q in sorted(questions, key=lambda t: t[0]))]
    dest.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r.model_dump(mode="json"), ensure_ascii=False,
                                      sort_keys=True) + "\n" for r in lines),
                   encoding="utf-8")
    return out
