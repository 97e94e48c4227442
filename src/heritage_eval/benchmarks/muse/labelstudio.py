"""Import a Label Studio JSON export into :class:`~.annotation.ImageAnnotation` objects.

Export layout (Label Studio's full JSON export): a list of tasks ``{"id", "data":
{"image": PATH}, "annotations": [{"result": [ITEM, ...]}]}``. Items:
- ``rectanglelabels`` boxes (``from_name`` ``character`` / ``activity`` / ``object`` /
  ``culture``), geometry in percent 0–100 of the image → normalized COCO 0–1
  (value / 100, rounded to 6 decimals; pixel-looking values, negative sizes, rounding
  overshoot and rotation follow :func:`.labelstudio_rules.box_from_percent`). A rotated
  box needs the image size: the item's ``original_width`` / ``original_height``, else
  the image file's size (after its EXIF orientation), found as ``data.image`` relative
  to ``images_dir`` (default: the export's folder), or by file name there or in its
  ``images/``. A stored size that differs from the file's is kept, with a warning
  (:func:`.labelstudio_rules.stored_size_notes`; rule in docs/images.md);
- per-region attributes (``choices`` / ``textarea`` with the **same id as their box**):
  ``emotion``, ``visual_clues``, ``emotion_cause``, ``activity_description``,
  ``negative_description``;
- image-level items (own id, no geometry): ``count_<name>`` numbers (``_`` for spaces),
  ``scene``, ``relative_position`` (``A=<id>;B=<id>;lateral=…;depth=…;vertical=…``) and
  ``remote_interaction`` (``A=<id>;B=<id>;evidence=<text>``).

Several annotations on one task: :mod:`.labelstudio_rules` picks one (not cancelled;
``ground_truth`` first, else the latest), named in a warning. Unknown ``from_name`` values
are ignored with a warning, as is a ``count_<name>`` that differs from the number of
``object`` boxes labelled ``<name>`` (they should be equal).

Every problem is an :class:`AnnotationIssue` naming the file, task id, region id and
field. One bad part never drops the whole image: a bad box, attribute, count, scene or
relation is *dropped* (``ImportResult.dropped``, and a warning ending "dropped; the rest
of the image is kept"), and relations or attributes on a dropped box go with it. Only a
task that cannot be read at all (no image path, no usable annotation, a result that is
not a list) is skipped (``ImportResult.issues``). A task with an empty result is kept with
zero regions. A task listed twice (the same task id, or the same ``data.image`` under two
ids) is imported once, the first occurrence, with a warning.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from heritage_eval.benchmarks.muse.annotation import (
    EMOTIONS,
    PERSON_CATEGORIES,
    Box,
    ImageAnnotation,
)
from heritage_eval.benchmarks.muse.labelstudio_names import (
    BOX_KINDS,
    COUNT_PREFIX,
    IMAGE_LEVEL,
    REGION_ATTRIBUTES,
    json_min_reason,
)
from heritage_eval.benchmarks.muse.labelstudio_rules import (
    BoxGeometryError,
    box_from_percent,
    choose_annotation,
    count_mismatches,
    image_file_size,
    parse_relation,
    stored_size,
    stored_size_notes,
    task_id,
    unique_tasks,
)
from heritage_eval.core.datapath import read_regular_text

_POSITION_KEYS = ("A", "B", "lateral", "depth", "vertical")


@dataclass(frozen=True)
class AnnotationIssue:
    """One validation problem: ``file``, Label Studio ``task_id``, ``region`` id (or
    ``None`` for image-level items), ``field`` (``from_name`` or schema field), ``message``."""

    file: str
    task_id: str
    region: str | None
    field: str
    message: str

    def __str__(self) -> str:
        region = f", region {self.region}" if self.region else ""
        return f"{self.file}: task {self.task_id}{region}, field {self.field}: {self.message}"


@dataclass
class ImportResult:
    """Imported annotations, ``issues`` (skipped tasks), ``dropped`` (parts left out of an
    imported task: one box, attribute, count, relation) and warnings (every dropped part
    is also a warning line). ``n_tasks``: tasks in the export, duplicates included."""

    annotations: list[ImageAnnotation] = field(default_factory=list)
    issues: list[AnnotationIssue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_tasks: int = 0
    dropped: list[AnnotationIssue] = field(default_factory=list)


class LabelStudioFormatError(ValueError):
    """The export as a whole is unreadable (not JSON, not a list of tasks)."""


def load_labelstudio(path: str | Path, images_dir: str | Path | None = None) -> ImportResult:
    """Import every task of the export at ``path`` (module doc).

    ``images_dir``: where image files are looked up, only for the size of a rotated box
    without a stored size (default: the export's folder). Raises
    :class:`LabelStudioFormatError` when the file is not a JSON list or is a JSON-MIN
    export (:func:`json_min_reason`); a problem inside a task drops that part (or skips
    that task) and is reported, never raised.
    """
    p = Path(path)
    root = Path(images_dir) if images_dir is not None else p.parent
    try:
        tasks = json.loads(read_regular_text(p))  # a FIFO or device: refused, not opened
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabelStudioFormatError(f"{p}: cannot read Label Studio export: {exc}") from exc
    if not isinstance(tasks, list):
        raise LabelStudioFormatError(f"{p}: a Label Studio export is a JSON list of tasks")
    if (reason := json_min_reason(tasks)) is not None:
        raise LabelStudioFormatError(f"{p}: {reason}")
    result = ImportResult(n_tasks=len(tasks))
    used_ids: set[str] = set()
    for index, task in unique_tasks(p.name, tasks, result.warnings):
        t = _Task(p.name, task_id(task, index))
        ann = _import_task(t, task, root)
        result.issues.extend(t.issues)
        result.dropped.extend(t.dropped)
        result.warnings.extend(t.warnings)
        if ann is not None:
            if ann.image_id in used_ids:  # two tasks on files with the same stem
                ann = ann.model_copy(
                    update={"image_id": f"{ann.image_id}-task{task_id(task, index)}"})
            used_ids.add(ann.image_id)
            result.annotations.append(ann)
    return result


class _Task:
    """Collects one task's issues (task skipped), dropped parts and warnings."""

    def __init__(self, file: str, task_id: str) -> None:
        self.file, self.task_id = file, task_id
        self.issues: list[AnnotationIssue] = []
        self.dropped: list[AnnotationIssue] = []
        self.warnings: list[str] = []
        self.bad_regions: set[str] = set()

    def issue(self, region: str | None, fld: str, message: str) -> None:
        """A problem that makes the whole task unusable (it is skipped)."""
        self.issues.append(AnnotationIssue(self.file, self.task_id, region, fld, message))

    def drop(self, region: str | None, fld: str, message: str) -> None:
        """A problem with one part: that part is left out, the image is kept."""
        found = AnnotationIssue(self.file, self.task_id, region, fld, message)
        self.dropped.append(found)
        self.warnings.append(f"{found}; dropped, the rest of the image is kept")

    def drop_region(self, region: str, fld: str, message: str) -> None:
        """Drop box ``region`` (its attributes and relations go with it)."""
        self.bad_regions.add(region)
        self.drop(region, fld, message)

    def note(self, region: str | None, fld: str, message: str) -> None:
        """An adjustment that kept the part (clamped, normalised): a warning."""
        self.warnings.append(str(AnnotationIssue(self.file, self.task_id, region, fld,
                                                 message)))


def _import_task(t: _Task, task: Any, root: Path) -> ImageAnnotation | None:
    data = task.get("data") if isinstance(task, dict) else None
    image = data.get("image") if isinstance(data, dict) else None
    if not isinstance(image, str) or not image:
        t.issue(None, "data.image", "missing image path")
        return None
    items = _choose_result(t, task)
    if items is None:
        return None
    boxes: dict[str, dict[str, Any]] = {}
    attrs: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    image_level: dict[str, list[Any]] = defaultdict(list)
    counts: dict[str, int] = {}
    stored = [sz for item in items if isinstance(item, dict) and (sz := stored_size(item))]
    file_size: list[tuple[int, int] | None] = []  # read once, only when a box needs it

    def size_of(item: dict[str, Any]) -> tuple[int, int] | None:
        if (sz := stored_size(item)) or stored:
            return sz or stored[0]
        if not file_size:
            file_size.append(image_file_size(root, image))
        return file_size[0]

    for item in items:
        if not isinstance(item, dict):
            t.drop(None, "result", "result item is not an object")
            continue
        rid, name = str(item.get("id", "")), str(item.get("from_name", ""))
        raw_value = item.get("value")
        value: dict[str, Any] = raw_value if isinstance(raw_value, dict) else {}
        if item.get("type") == "rectanglelabels":
            if name not in BOX_KINDS:
                t.warnings.append(f"{t.file}: task {t.task_id}: ignored box from_name {name!r}")
                continue
            _add_box(t, boxes, rid, name, value, partial(size_of, item), image, root,
                     stored_size(item) or (stored[0] if stored else None))
        elif name in REGION_ATTRIBUTES:
            attrs[rid][name].extend(_values(t, rid, name, value))
        elif name.startswith(COUNT_PREFIX):
            n = value.get("number")
            if not isinstance(n, int | float) or isinstance(n, bool) or n < 0 or n != int(n):
                t.drop(rid, name, f"count must be a non-negative integer, got {n!r}")
            else:
                counts[name[len(COUNT_PREFIX):].replace("_", " ")] = int(n)
        elif name in IMAGE_LEVEL:
            image_level[name].extend((rid, v) for v in _values(t, rid, name, value))
        else:
            t.warnings.append(f"{t.file}: task {t.task_id}: ignored from_name {name!r}")
    for rid in t.bad_regions:
        boxes.pop(rid, None)
    fields = _assemble(t, boxes, attrs, image_level)
    t.warnings.extend(_count_warnings(t, counts, boxes))
    if stored:  # a stored size is compared with the file's displayed size, if found
        file_size[:] = file_size or [image_file_size(root, image)]
        for note in stored_size_notes(stored, file_size[0]):
            t.note(None, "original_width/original_height", note)
    size = stored[0] if stored else (file_size[0] if file_size and file_size[0] else (0, 0))
    stem = PurePosixPath(image.split("?d=")[-1]).stem
    try:
        return ImageAnnotation(image_id=stem, image=image, width=size[0], height=size[1],
                               object_counts=counts, source=f"{t.file}#task={t.task_id}",
                               **fields)
    except ValidationError as exc:
        for err in exc.errors():
            t.issue(None, ".".join(str(x) for x in err["loc"]) or "annotation", err["msg"])
        return None


def _add_box(t: _Task, boxes: dict[str, dict[str, Any]], rid: str, name: str,
             value: dict[str, Any], size: Callable[[], tuple[int, int] | None], image: str,
             root: Path, known: tuple[int, int] | None) -> None:
    """Convert one ``rectanglelabels`` item into ``boxes[rid]``, or drop it. ``size``
    finds the pixel size (a rotated box needs it); ``known``: the stored size, if any
    (named in messages)."""
    if not rid:
        t.drop(None, name, "box without id")
        return
    if rid in boxes or rid in t.bad_regions:
        t.drop_region(rid, name, "region id used by two boxes")
        return
    rotation = value.get("rotation")
    rotated = isinstance(rotation, int | float) and float(rotation) % 360.0 != 0.0
    px = size() if rotated else known
    if rotated and px is None:
        t.drop_region(rid, name, f"rotated box (rotation={rotation}) needs the image size: "
                                 "the item stores no original_width/original_height and the "
                                 f"image file {image!r} was not found under {root}")
        return
    try:
        coords, notes = box_from_percent(value, px)
        box = Box(x=coords[0], y=coords[1], w=coords[2], h=coords[3])
    except BoxGeometryError as exc:
        t.drop_region(rid, name, str(exc))
        return
    except ValidationError as exc:
        t.drop_region(rid, name, "; ".join(f"{'.'.join(map(str, e['loc'])) or 'box'}: "
                                           f"{e['msg']}" for e in exc.errors()))
        return
    labels = value.get("rectanglelabels") or []
    if len(labels) != 1 or not isinstance(labels[0], str) or not labels[0].strip():
        t.drop_region(rid, name, f"expected exactly one label, got {labels!r}")
        return
    for note in notes:
        t.note(rid, name, note)
    boxes[rid] = {"kind": name, "box": box, "label": labels[0].strip()}


def _choose_result(t: _Task, task: dict[str, Any]) -> list[Any] | None:
    annotations = task.get("annotations", task.get("completions"))
    if not isinstance(annotations, list):
        t.issue(None, "annotations", "missing annotations list")
        return None
    chosen, note = choose_annotation(annotations)
    if chosen is None:
        t.issue(None, "annotations", "no annotation that was not cancelled")
        return None
    if note:
        t.warnings.append(f"{t.file}: task {t.task_id}: {note}")
    result = chosen.get("result")
    if not isinstance(result, list):
        t.issue(None, "annotations.result", "result is not a list")
        return None
    return result


def _count_warnings(t: _Task, counts: dict[str, int],
                    boxes: dict[str, dict[str, Any]]) -> list[str]:
    labels = [b["label"] for b in boxes.values() if b["kind"] == "object"]
    return [f"{t.file}: task {t.task_id}, field {COUNT_PREFIX}{name.replace(' ', '_')}: "
            f"count {n} but {k} object box(es) labelled {name!r} (the schema has one box "
            "per counted instance)" for name, n, k in count_mismatches(counts, labels)]


def _values(t: _Task, rid: str, name: str, value: dict[str, Any]) -> list[str]:
    raw = value.get("choices", value.get("text"))
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(v, str) for v in raw):
        t.drop(rid or None, name, f"expected a non-empty list of strings, got {raw!r}")
        return []
    return [v.strip() for v in raw if v.strip()]


def _assemble(t: _Task, boxes: dict[str, dict[str, Any]],
              attrs: dict[str, dict[str, list[Any]]],
              image_level: dict[str, list[Any]]) -> dict[str, Any]:
    """Turn collected items into keyword arguments of :class:`ImageAnnotation`; a bad
    attribute, region, scene or relation is dropped (attributes and relations of a
    dropped box go silently: the box's own drop was reported)."""
    for rid, fields in attrs.items():
        for name in list(fields):
            want = REGION_ATTRIBUTES[name]
            if rid in t.bad_regions:
                del fields[name]
            elif rid not in boxes:
                t.drop(rid, name, f"attribute refers to no {want} box with this id")
                del fields[name]
            elif boxes[rid]["kind"] != want:
                t.drop(rid, name, f"attribute belongs on a {want} box, "
                                  f"not a {boxes[rid]['kind']} box")
                del fields[name]
    out: dict[str, list[Any]] = {"characters": [], "activities": [], "objects": [],
                                 "cultural_elements": []}
    for rid, b in boxes.items():
        a = attrs.get(rid, {})
        if b["kind"] == "character":
            if b["label"] not in PERSON_CATEGORIES:
                t.drop_region(rid, "character",
                              f"category {b['label']!r} not in {PERSON_CATEGORIES}")
                continue
            emotions = a.get("emotion", [])
            if len(emotions) > 1 or (emotions and emotions[0] not in EMOTIONS):
                t.drop_region(rid, "emotion", f"expected one of {EMOTIONS}, got {emotions!r}")
                continue
            out["characters"].append({
                "id": rid, "box": b["box"], "category": b["label"],
                "emotion": emotions[0] if emotions else None,
                "visual_clues": " ".join(a.get("visual_clues", [])) or None,
                "emotion_cause": " ".join(a.get("emotion_cause", [])) or None})
        elif b["kind"] == "activity":
            desc = a.get("activity_description", [])
            out["activities"].append({
                "id": rid, "box": b["box"], "label": b["label"],
                "description": " ".join(desc) or None,
                "negative_descriptions": tuple(a.get("negative_description", []))})
        elif b["kind"] == "object":
            out["objects"].append({"id": rid, "box": b["box"], "name": b["label"]})
        else:
            out["cultural_elements"].append({"id": rid, "box": b["box"], "label": b["label"]})
    scenes = [v for _, v in image_level.get("scene", [])]
    if len(scenes) > 1:
        t.drop("scene", "scene", f"expected one scene label, got {scenes!r}")
    result: dict[str, Any] = {k: tuple(v) for k, v in out.items()}
    result["scene"] = scenes[0] if len(scenes) == 1 else None
    kept = set(boxes) - t.bad_regions
    for name, keys in (("relative_position", _POSITION_KEYS),
                       ("remote_interaction", ("A", "B", "evidence"))):
        rels = [rel for rid, text in image_level.get(name, [])
                if (rel := _relation(t, rid, name, text, keys)) is not None]
        result[f"{name}s"] = tuple(rel for rel in rels if _ends_ok(t, name, rel, kept))
    return result


def _ends_ok(t: _Task, name: str, rel: dict[str, str], kept: set[str]) -> bool:
    """Whether both ends of a relation are kept boxes (else the relation is dropped)."""
    if rel["a"] == rel["b"]:
        t.drop(rel["a"], name, "relation links a region to itself")
        return False
    for end in ("a", "b"):
        if rel[end] in t.bad_regions:
            return False
        if rel[end] not in kept:
            t.drop(rel[end], name, f"{end.upper()} refers to no box")
            return False
    return True


def _relation(t: _Task, rid: str, name: str, text: str,
              keys: tuple[str, ...]) -> dict[str, str] | None:
    rel, suffix, message = parse_relation(text, keys)
    if rel is None:
        t.drop(rid, f"{name}{suffix}", message or "")
    return rel
