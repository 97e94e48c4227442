"""Import a Label Studio JSON export into :class:`~.annotation.ImageAnnotation` objects.

Export layout (Label Studio's own, see ``realdata/muse/SCHEMA.md``): a list of tasks
``{"id", "data": {"image": PATH}, "annotations": [{"result": [ITEM, ...]}]}``. Items:

- ``rectanglelabels`` boxes (``from_name`` ``character`` / ``activity`` / ``object`` /
  ``culture``), geometry in percent 0–100 of the image → normalized COCO 0–1
  (value / 100, rounded to 6 decimals);
- per-region attributes (``choices`` / ``textarea`` with the **same id as their box**):
  ``emotion``, ``visual_clues``, ``emotion_cause``, ``activity_description``,
  ``negative_description``;
- image-level items (own id, no geometry): ``count_<name>`` numbers (``<name>`` with ``_``
  for spaces), ``scene``, ``relative_position``
  (``A=<id>;B=<id>;lateral=…;depth=…;vertical=…``) and ``remote_interaction``
  (``A=<id>;B=<id>;evidence=<text>``).

Several annotations on one task: the rule of :mod:`.labelstudio_rules` picks one (not
cancelled; ``ground_truth`` first, else the latest) and a warning names it. Unknown
``from_name`` values are ignored and listed as warnings, and so is a ``count_<name>``
that differs from the number of ``object`` boxes labelled ``<name>`` (the schema says
they are equal). Every problem is an
:class:`AnnotationIssue` naming the file, task id, region id and field; a task with any
issue is skipped, the others import.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from heritage_eval.benchmarks.muse.annotation import (
    EMOTIONS,
    PERSON_CATEGORIES,
    Box,
    ImageAnnotation,
)
from heritage_eval.benchmarks.muse.labelstudio_rules import choose_annotation, count_mismatches

BOX_KINDS = ("character", "activity", "object", "culture")
REGION_ATTRIBUTES = {
    "emotion": "character", "visual_clues": "character", "emotion_cause": "character",
    "activity_description": "activity", "negative_description": "activity",
}
IMAGE_LEVEL = ("scene", "relative_position", "remote_interaction")
COUNT_PREFIX = "count_"
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
    """Imported annotations (valid tasks only), issues (skipped tasks) and warnings."""

    annotations: list[ImageAnnotation] = field(default_factory=list)
    issues: list[AnnotationIssue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_tasks: int = 0


class LabelStudioFormatError(ValueError):
    """The export as a whole is unreadable (not JSON, not a list of tasks)."""


def load_labelstudio(path: str | Path) -> ImportResult:
    """Import every task of the export at ``path``.

    Raises :class:`LabelStudioFormatError` when the file is not a JSON list; problems
    inside one task are reported as issues and that task skipped.
    """
    p = Path(path)
    try:
        tasks = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabelStudioFormatError(f"{p}: cannot read Label Studio export: {exc}") from exc
    if not isinstance(tasks, list):
        raise LabelStudioFormatError(f"{p}: a Label Studio export is a JSON list of tasks")
    result = ImportResult(n_tasks=len(tasks))
    used_ids: set[str] = set()
    for index, task in enumerate(tasks):
        ann, issues, warnings = _import_task(p.name, index, task)
        result.issues.extend(issues)
        result.warnings.extend(warnings)
        if ann is not None:
            if ann.image_id in used_ids:  # two tasks on files with the same stem
                ann = ann.model_copy(update={"image_id": f"{ann.image_id}-task{_tid(task, index)}"})
            used_ids.add(ann.image_id)
            result.annotations.append(ann)
    return result


def _tid(task: Any, index: int) -> str:
    if isinstance(task, dict) and task.get("id") is not None:
        return str(task["id"])
    return f"#{index}"


class _Task:
    """Collects one task's items and issues while importing."""

    def __init__(self, file: str, task_id: str) -> None:
        self.file, self.task_id = file, task_id
        self.issues: list[AnnotationIssue] = []

    def issue(self, region: str | None, fld: str, message: str) -> None:
        self.issues.append(AnnotationIssue(self.file, self.task_id, region, fld, message))


def _import_task(file: str, index: int, task: Any
                 ) -> tuple[ImageAnnotation | None, list[AnnotationIssue], list[str]]:
    t = _Task(file, _tid(task, index))
    warnings: list[str] = []
    image = task.get("data", {}).get("image") if isinstance(task, dict) else None
    if not isinstance(image, str) or not image:
        t.issue(None, "data.image", "missing image path")
        return None, t.issues, warnings
    items = _choose_result(t, task, warnings)
    if items is None:
        return None, t.issues, warnings
    boxes: dict[str, dict[str, Any]] = {}
    attrs: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    image_level: dict[str, list[Any]] = defaultdict(list)
    counts: dict[str, int] = {}
    size = (0, 0)
    for item in items:
        if not isinstance(item, dict):
            t.issue(None, "result", "result item is not an object")
            continue
        rid, name = str(item.get("id", "")), str(item.get("from_name", ""))
        raw_value = item.get("value")
        value: dict[str, Any] = raw_value if isinstance(raw_value, dict) else {}
        if item.get("type") == "rectanglelabels":
            if name not in BOX_KINDS:
                warnings.append(f"{file}: task {t.task_id}: ignored box from_name {name!r}")
                continue
            box = _box(t, rid, name, value)
            labels = value.get("rectanglelabels") or []
            if rid in boxes:
                t.issue(rid, name, "region id used by two boxes")
            elif box is not None:
                if len(labels) != 1 or not isinstance(labels[0], str) or not labels[0].strip():
                    t.issue(rid, name, f"expected exactly one label, got {labels!r}")
                else:
                    boxes[rid] = {"kind": name, "box": box, "label": labels[0].strip()}
            size = (int(item.get("original_width") or 0), int(item.get("original_height") or 0))
        elif name in REGION_ATTRIBUTES:
            attrs[rid][name].extend(_values(t, rid, name, value))
        elif name.startswith(COUNT_PREFIX):
            n = value.get("number")
            if not isinstance(n, int | float) or isinstance(n, bool) or n < 0 or n != int(n):
                t.issue(rid, name, f"count must be a non-negative integer, got {n!r}")
            else:
                counts[name[len(COUNT_PREFIX):].replace("_", " ")] = int(n)
        elif name in IMAGE_LEVEL:
            image_level[name].extend((rid, v) for v in _values(t, rid, name, value))
        else:
            warnings.append(f"{file}: task {t.task_id}: ignored from_name {name!r}")
    data = _assemble(t, boxes, attrs, image_level)
    warnings += _count_warnings(t, counts, boxes)
    if t.issues:
        return None, t.issues, warnings
    stem = PurePosixPath(image.split("?d=")[-1]).stem
    try:
        ann = ImageAnnotation(image_id=stem, image=image, width=size[0], height=size[1],
                              object_counts=counts, source=f"{file}#task={t.task_id}", **data)
    except ValidationError as exc:
        for err in exc.errors():
            t.issue(None, ".".join(str(x) for x in err["loc"]) or "annotation", err["msg"])
        return None, t.issues, warnings
    return ann, t.issues, warnings


def _choose_result(t: _Task, task: dict[str, Any], warnings: list[str]) -> list[Any] | None:
    annotations = task.get("annotations", task.get("completions"))
    if not isinstance(annotations, list):
        t.issue(None, "annotations", "missing annotations list")
        return None
    chosen, note = choose_annotation(annotations)
    if chosen is None:
        t.issue(None, "annotations", "no annotation that was not cancelled")
        return None
    if note:
        warnings.append(f"{t.file}: task {t.task_id}: {note}")
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


def _box(t: _Task, rid: str, name: str, value: dict[str, Any]) -> Box | None:
    if not rid:
        t.issue(None, name, "box without id")
        return None
    if value.get("rotation", 0) not in (0, 0.0, None):
        t.issue(rid, name, f"rotated boxes are not supported (rotation={value['rotation']})")
        return None
    try:
        coords = [round(float(value[k]) / 100.0, 6) for k in ("x", "y", "width", "height")]
    except (KeyError, TypeError, ValueError):
        t.issue(rid, name, "box needs numeric x, y, width, height (percent)")
        return None
    try:
        return Box(x=coords[0], y=coords[1], w=coords[2], h=coords[3])
    except ValidationError as exc:
        t.issue(rid, name, "; ".join(f"{'.'.join(map(str, e['loc'])) or 'box'}: {e['msg']}"
                                     for e in exc.errors()))
        return None


def _values(t: _Task, rid: str, name: str, value: dict[str, Any]) -> list[str]:
    raw = value.get("choices", value.get("text"))
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(v, str) for v in raw):
        t.issue(rid or None, name, f"expected a non-empty list of strings, got {raw!r}")
        return []
    return [v.strip() for v in raw if v.strip()]


def _assemble(t: _Task, boxes: dict[str, dict[str, Any]],
              attrs: dict[str, dict[str, list[Any]]],
              image_level: dict[str, list[Any]]) -> dict[str, Any]:
    """Turn collected items into keyword arguments of :class:`ImageAnnotation`."""
    for rid, fields in attrs.items():
        for name in fields:
            want = REGION_ATTRIBUTES[name]
            if rid not in boxes:
                t.issue(rid, name, f"attribute refers to no {want} box with this id")
            elif boxes[rid]["kind"] != want:
                t.issue(rid, name, f"attribute belongs on a {want} box, "
                                   f"not a {boxes[rid]['kind']} box")
    out: dict[str, list[Any]] = {"characters": [], "activities": [], "objects": [],
                                 "cultural_elements": []}
    for rid, b in boxes.items():
        a = attrs.get(rid, {})
        if b["kind"] == "character":
            if b["label"] not in PERSON_CATEGORIES:
                t.issue(rid, "character", f"category {b['label']!r} not in {PERSON_CATEGORIES}")
                continue
            emotions = a.get("emotion", [])
            if len(emotions) > 1 or (emotions and emotions[0] not in EMOTIONS):
                t.issue(rid, "emotion", f"expected one of {EMOTIONS}, got {emotions!r}")
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
        t.issue("scene", "scene", f"expected one scene label, got {scenes!r}")
    result: dict[str, Any] = {k: tuple(v) for k, v in out.items()}
    result["scene"] = scenes[0] if scenes else None
    result["relative_positions"] = tuple(
        rel for rid, text in image_level.get("relative_position", [])
        if (rel := _relation(t, rid, "relative_position", text, _POSITION_KEYS)) is not None)
    result["remote_interactions"] = tuple(
        rel for rid, text in image_level.get("remote_interaction", [])
        if (rel := _relation(t, rid, "remote_interaction", text, ("A", "B", "evidence")))
        is not None)
    for name in ("relative_positions", "remote_interactions"):
        for rel in result[name]:
            for end in ("a", "b"):
                if rel[end] not in boxes:
                    t.issue(rel[end], name.rstrip("s"), f"{end.upper()} refers to no box")
    return result


def _relation(t: _Task, rid: str, name: str, text: str,
              keys: tuple[str, ...]) -> dict[str, str] | None:
    """Parse ``K=V;K=V…``; ``evidence`` takes the rest of the text (it may contain ``=``)."""
    parts: dict[str, str] = {}
    rest = text
    while rest:
        key, sep, tail = rest.partition("=")
        key = key.strip()
        if not sep:
            t.issue(rid, name, f"cannot parse {text!r}: expected KEY=VALUE pairs")
            return None
        if key == "evidence":
            parts[key], rest = tail.strip(), ""
        else:
            value, _, rest = tail.partition(";")
            parts[key] = value.strip()
    missing = [k for k in keys if not parts.get(k)]
    extra = [k for k in parts if k not in keys]
    if missing or extra:
        t.issue(rid, name, f"in {text!r}: missing {missing} / unexpected {extra}")
        return None
    rel = {k.lower() if k in ("A", "B") else k: v for k, v in parts.items()}
    allowed = {"lateral": ("left", "none", "right"), "depth": ("front", "none", "back"),
               "vertical": ("above", "none", "under")}
    for k, ok in allowed.items():
        if k in rel and rel[k] not in ok:
            t.issue(rid, f"{name}.{k}", f"{rel[k]!r} not in {ok}")
            return None
    return rel
