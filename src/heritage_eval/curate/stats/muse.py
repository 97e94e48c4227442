"""MUSE dataset statistics (paper Figs. 2–4) from a Label Studio export and a question file.

The export is read by :func:`heritage_eval.benchmarks.muse.labelstudio.load_labelstudio`
(the annotation schema of :mod:`heritage_eval.benchmarks.muse.annotation`); a generated
question file (``--questions``), when given, by the tolerant reader
:func:`heritage_eval.benchmarks.muse.run.load_question_set` (a bad line is a bad item
naming ``file:line``; the other questions count).

Counted: people per image (character boxes), person categories and emotions (Fig. 4
outer ring), scene labels and their themes (Fig. 3; a label's theme is the category the
question file's header assigned, else the category of the label in the shipped scene
table, :func:`heritage_eval.benchmarks.muse.scenes.scene_table`, else ``(unassigned)``),
cultural-element labels (and the question file's culture clusters, Fig. 4 inner ring),
box sizes as the fraction of the image area a box covers (COCO ``w * h`` of the
normalized box, 0–1) per box kind, and questions and turns per task (Fig. 2). Image
sizes are the stored annotation size, else the image file's header.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from heritage_eval.benchmarks.muse.annotation import EMOTIONS, PERSON_CATEGORIES, ImageAnnotation
from heritage_eval.benchmarks.muse.labelstudio import ImportResult
from heritage_eval.benchmarks.muse.labelstudio_rules import resolve_image
from heritage_eval.benchmarks.muse.scenes import fold, scene_table
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS, TASKS
from heritage_eval.core.images import header_size
from heritage_eval.curate.stats.output import Problem
from heritage_eval.curate.stats.summary import counts, histogram, summarize

NONE = "(none)"
UNASSIGNED = "(unassigned)"
BOX_KINDS = ("character", "activity", "object", "culture")


@dataclass
class QuestionStats:
    """Per task id: ``questions`` holding at least one turn of it, and its ``turns``."""

    path: Path
    questions: Counter[str] = field(default_factory=Counter)
    turns: Counter[str] = field(default_factory=Counter)
    images: set[str] = field(default_factory=set)
    total: int = 0
    header: dict[str, Any] = field(default_factory=dict)


@dataclass
class MuseStats:
    """Statistics of one export (``source``) and optionally one question file."""

    source: Path
    images: int = 0
    people: list[int] = field(default_factory=list)
    categories: Counter[str] = field(default_factory=Counter)
    emotions: Counter[str] = field(default_factory=Counter)
    scenes: Counter[str] = field(default_factory=Counter)
    themes: Counter[str] = field(default_factory=Counter)
    theme_of: dict[str, str] = field(default_factory=dict)
    cultures: Counter[str] = field(default_factory=Counter)
    culture_clusters: Counter[str] = field(default_factory=Counter)
    areas: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in BOX_KINDS})
    per_image: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in BOX_KINDS})
    sizes: list[tuple[int, int]] = field(default_factory=list)
    relations: Counter[str] = field(default_factory=Counter)
    questions: QuestionStats | None = None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


#: The file of an annotation's ``image`` under ``images_dir`` (the rule of ``muse generate``).
image_file = resolve_image


def _regions(ann: ImageAnnotation) -> dict[str, list[float]]:
    return {"character": [r.box.area for r in ann.characters],
            "activity": [r.box.area for r in ann.activities],
            "object": [r.box.area for r in ann.objects],
            "culture": [r.box.area for r in ann.cultural_elements]}


def collect(imported: ImportResult, source: Path, images_dir: Path,
            header: dict[str, Any] | None = None, progress: bool = True) -> MuseStats:
    """Statistics of imported annotations. ``images_dir``: where image files are looked
    up (for a missing stored size, and to report missing files); ``header``: the
    question file header's ``source`` block (scene categories, culture clusters)."""
    s = MuseStats(source)
    s.problems += [Problem(f"{i.file}: task {i.task_id}", f"field {i.field}: {i.message}")
                   for i in imported.issues]
    s.warnings += imported.warnings
    src = header or {}
    assigned = {fold(k): v.get("category") for k, v in
                (src.get("scene_categories") or {}).items() if isinstance(v, dict)}
    table = {fold(label): cat for cat, label in scene_table()}
    clusters = {k: v for k, v in (src.get("culture_clusters") or {}).get(
        "cluster_of", {}).items()}
    for ann in tqdm(imported.annotations, desc="stats muse", unit="img", file=sys.stderr,
                    dynamic_ncols=True, disable=not progress or None):
        s.images += 1
        s.people.append(len(ann.characters))
        s.categories.update(c.category for c in ann.characters)
        s.emotions.update(c.emotion or NONE for c in ann.characters)
        for kind, areas in _regions(ann).items():
            s.areas[kind] += areas
            s.per_image[kind].append(len(areas))
        s.relations["relative_position"] += len(ann.relative_positions)
        s.relations["remote_interaction"] += len(ann.remote_interactions)
        for el in ann.cultural_elements:
            s.cultures[el.label] += 1
            if el.label in clusters:
                s.culture_clusters[f"cluster {clusters[el.label]}"] += 1
        if ann.scene:
            s.scenes[ann.scene] += 1
            theme = assigned.get(fold(ann.scene)) or table.get(fold(ann.scene)) or UNASSIGNED
            s.theme_of[ann.scene] = theme
            s.themes[theme] += 1
        _size(s, ann, images_dir)
    return s


def _size(s: MuseStats, ann: ImageAnnotation, images_dir: Path) -> None:
    path = image_file(images_dir, ann.image)
    where = ann.source.replace("#task=", ": task ")
    if path is None:
        s.problems.append(Problem(str(images_dir / ann.image.lstrip("/")),
                                  f"image file not found ({where})"))
        return
    size = (ann.width, ann.height) if ann.width and ann.height else header_size(path)
    if size is None:
        s.problems.append(Problem(str(path), f"unreadable image: the file header could not "
                                             f"be parsed ({where})"))
        return
    s.sizes.append(size)


def add_questions(s: MuseStats, path: Path) -> dict[str, Any]:
    """Count the question file at ``path`` into ``s.questions``; returns its header's
    ``source`` block. Raises :class:`~heritage_eval.benchmarks.muse.questions.QuestionFileError`
    when the header is missing or invalid; bad question lines are bad items."""
    from heritage_eval.benchmarks.muse.run import load_question_set

    qs = load_question_set(path)
    q = s.questions = QuestionStats(path, header=qs.header.model_dump(mode="json"))
    for row in qs.bad:
        where, _, reason = (row.reason or "").partition(": ")
        s.problems.append(Problem(where, reason or "unreadable question line"))
    for question in qs.questions:
        q.total += 1
        q.images.add(question.image_id)
        q.questions.update({t.task for t in question.turns})
        q.turns.update(t.task for t in question.turns)
    return dict(qs.header.source)


def _question_json(q: QuestionStats) -> dict[str, Any]:
    order = [t for t in TASK_IDS if t in q.turns] + sorted(set(q.turns) - set(TASK_IDS))
    return {"path": str(q.path.resolve()), "questions": q.total, "images": len(q.images),
            "generator_version": q.header.get("generator_version"),
            "seed": q.header.get("seed"),
            "per_task": {t: {"number": TASKS[t].number if t in TASKS else None,
                             "questions": q.questions[t], "turns": q.turns[t]}
                         for t in order}}


def emotion_counts(s: MuseStats) -> dict[str, int]:
    """People per emotion in the paper's label order (zeros kept), then ``(none)`` and
    any other label."""
    out = {e: s.emotions.get(e, 0) for e in EMOTIONS}
    out |= {k: v for k, v in sorted(s.emotions.items()) if k not in out}
    return out


def to_json(s: MuseStats, images_dir: Path) -> dict[str, Any]:
    """``stats.json`` body: sources, counts and every distribution."""
    sizes = s.sizes
    return {
        "benchmark": "muse", "command": "stats muse",
        "source": {"annotations": str(s.source.resolve()),
                   "images": str(images_dir.resolve()),
                   "questions": str(s.questions.path.resolve()) if s.questions else None},
        "counts": {"images": s.images, "people": sum(s.people),
                   **{f"{k}_boxes": len(v) for k, v in s.areas.items()},
                   **dict(s.relations),
                   "questions": s.questions.total if s.questions else None,
                   "bad_items": len(s.problems)},
        "people_per_image": histogram(s.people),
        "person_categories": {c: s.categories.get(c, 0) for c in PERSON_CATEGORIES},
        "emotions": emotion_counts(s),
        "scenes": counts(s.scenes.elements()), "scene_themes": counts(s.themes.elements()),
        "scene_theme_of": dict(sorted(s.theme_of.items())),
        "cultures": counts(s.cultures.elements()),
        "culture_clusters": counts(s.culture_clusters.elements()),
        "box_area_fraction": {k: summarize(v).as_dict() for k, v in s.areas.items()},
        "boxes_per_image": {k: histogram(v) for k, v in s.per_image.items()},
        "width_px": summarize([w for w, _ in sizes]).as_dict(),
        "height_px": summarize([h for _, h in sizes]).as_dict(),
        "questions": _question_json(s.questions) if s.questions else None,
    }
