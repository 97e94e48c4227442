"""``validate muse``: a Label Studio JSON export against the MUSE schema.

The schema is the one :mod:`heritage_eval.benchmarks.muse.labelstudio` imports
(the Label Studio labelling config): boxes ``character`` / ``activity`` / ``object`` /
``culture`` (``rectanglelabels``, percent 0–100 of the image), per-region attributes with
the id of their box, image-level ``scene``, ``count_<name>``, ``relative_position``,
``remote_interaction``. Checked per task: the image is present (``--images``, default the
export's folder; looked up as ``muse generate`` does) and decodes; one usable annotation;
each item's type matches its ``from_name``; boxes have an id, one label and lie within
0–100 % (errors name the values); every person box has ``emotion`` (one of the 11) and
``visual_clues``, every activity box ``activity_description``; attributes sit on a box of
the right kind; counts are non-negative integers and match the object boxes; relations
parse and link two boxes (``relative_position``: two person boxes); one scene.

A JSON export is one document: a finding gives the line where its task begins (when the
export spans several lines) and names the task by index and id, and the region by id.
A JSON-MIN export is refused with the reason
(:func:`heritage_eval.benchmarks.muse.labelstudio_names.json_min_reason`).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.muse.annotation import EMOTIONS, PERSON_CATEGORIES
from heritage_eval.benchmarks.muse.labelstudio_names import (
    BOX_KINDS,
    COUNT_PREFIX,
    REGION_ATTRIBUTES,
    json_min_reason,
)
from heritage_eval.benchmarks.muse.labelstudio_rules import (
    PCT_TOLERANCE,
    BoxGeometryError,
    box_from_percent,
    choose_annotation,
    count_mismatches,
    image_refusal,
    parse_relation,
    resolve_image,
    stored_size,
    task_id,
)
from heritage_eval.core.datapath import read_regular_text, regular_file_problem
from heritage_eval.curate.validate.imagecheck import inspect_image
from heritage_eval.curate.validate.jsonpos import read_list_with_lines
from heritage_eval.curate.validate.report import Report

#: from_name -> the Label Studio result type it must have (``count_<name>``: number).
EXPECTED_TYPE: dict[str, str] = {
    **{k: "rectanglelabels" for k in BOX_KINDS}, "emotion": "choices", "scene": "choices",
    **{k: "textarea" for k in ("visual_clues", "emotion_cause", "activity_description",
                               "negative_description", "relative_position",
                               "remote_interaction")}}
#: Attributes every box of a kind must have (SCHEMA.md: every person has an emotion and
#: visual clues; every activity a description).
REQUIRED: dict[str, tuple[str, ...]] = {"character": ("emotion", "visual_clues"),
                                        "activity": ("activity_description",)}
RELATION_KEYS = {"relative_position": ("A", "B", "lateral", "depth", "vertical"),
                 "remote_interaction": ("A", "B", "evidence")}


class MuseExportError(Exception):
    """The export file is missing (usage error, exit status 2)."""


def validate_export(path: Path, images_dir: Path | None = None, progress: bool = True
                    ) -> Report:
    """Check the Label Studio export at ``path`` (module doc); images are looked up under
    ``images_dir`` (default: the export's folder). Raises :class:`MuseExportError` when
    ``path`` is not a file."""
    from tqdm import tqdm

    if (problem := regular_file_problem(path)) is not None:  # a FIFO is never opened
        raise MuseExportError(f"Label Studio export not found: {path}"
                              if problem == "file not found" else f"{path}: {problem}")
    report = Report(f"muse {path}")
    report.count("files")
    try:
        parsed = read_list_with_lines(read_regular_text(path))
    except json.JSONDecodeError as exc:
        report.error(path, exc.lineno, "json-malformed", f"malformed JSON ({exc.msg}: "
                                                         f"column {exc.colno})")
        return report
    except (OSError, UnicodeDecodeError) as exc:
        report.error(path, None, "file-unreadable", f"cannot read: {exc}")
        return report
    if parsed is None:
        report.error(path, 1, "not-list", "a Label Studio export is a JSON list of tasks")
        return report
    tasks, lines = parsed
    if (reason := json_min_reason(tasks)) is not None:
        report.error(path, None, "json-min", reason)
        return report
    one_line = len(set(lines)) <= 1 and len(tasks) > 1
    root = images_dir if images_dir is not None else path.parent
    seen_ids: dict[str, int] = {}
    seen_images: dict[str, int] = {}
    for index, (task, line) in enumerate(tqdm(list(zip(tasks, lines, strict=True)),
                                              desc="validate tasks", unit="task",
                                              file=sys.stderr, disable=not progress)):
        report.count("tasks")
        t = _Task(report, path, None if one_line else line, index, task_id(task, index))
        if not isinstance(task, dict):
            t.error(None, "task-not-object", "task is not a JSON object")
            continue
        if t.tid in seen_ids and task.get("id") is not None:
            t.warning(None, "duplicate-task", f"task id also used by task #{seen_ids[t.tid]}")
        seen_ids.setdefault(t.tid, index)
        image = _check_image(t, task, root, seen_images)
        items = _result(t, task)
        if items is not None:
            _check_items(t, items, image)
    return report


class _Task:
    """Adds findings that name one task (index and id) and, optionally, a region."""

    def __init__(self, report: Report, file: Path, line: int | None, index: int,
                 tid: str) -> None:
        self.report, self.file, self.line, self.index, self.tid = (report, file, line,
                                                                   index, tid)

    def _text(self, region: str | None, message: str) -> str:
        where = f"task #{self.index} (id {self.tid})"
        return f"{where}, region {region}: {message}" if region else f"{where}: {message}"

    def error(self, region: str | None, code: str, message: str) -> None:
        self.report.error(self.file, self.line, code, self._text(region, message))

    def warning(self, region: str | None, code: str, message: str) -> None:
        self.report.warning(self.file, self.line, code, self._text(region, message))


def _check_image(t: _Task, task: dict[str, Any], root: Path,
                 seen: dict[str, int]) -> tuple[int, int] | None:
    """Check ``data.image``; returns the image's pixel size when it was read."""
    data = task.get("data")
    image = data.get("image") if isinstance(data, dict) else None
    if not isinstance(image, str) or not image.strip():
        t.error(None, "image-field", "missing data.image (the image path)")
        return None
    if image in seen:
        t.warning(None, "duplicate-image", f"image {image!r} is also annotated by task "
                                           f"#{seen[image]}")
    seen.setdefault(image, t.index)
    found = resolve_image(root, image)
    if found is None and (refused := image_refusal(root, image)) is not None:
        t.error(None, "image-refused", refused)  # a symlink out, a FIFO, a folder
        return None
    if found is None:
        t.error(None, "image-missing", f"image {image!r} not found under {root} (as given, "
                                       "or by file name)")
        return None
    t.report.count("images")
    check = inspect_image(found)
    if check.code:
        t.error(None, check.code, check.message or "")
        return None
    return check.size


def _result(t: _Task, task: dict[str, Any]) -> list[Any] | None:
    annotations = task.get("annotations", task.get("completions"))
    if not isinstance(annotations, list):
        t.error(None, "annotations-missing", "no 'annotations' list")
        return None
    chosen, note = choose_annotation(annotations)
    if chosen is None:
        t.error(None, "annotations-missing", "no annotation that was not cancelled")
        return None
    if note:
        t.warning(None, "several-annotations", note)
    items = chosen.get("result")
    if not isinstance(items, list):
        t.error(None, "result-not-list", "annotation 'result' is not a list")
        return None
    return items


def _check_items(t: _Task, items: list[Any], size: tuple[int, int] | None) -> None:
    boxes: dict[str, tuple[str, str]] = {}  # region id -> (kind, label)
    attrs: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    image_level: dict[str, list[tuple[str, str]]] = defaultdict(list)
    counts: dict[str, int] = {}
    for item in items:
        t.report.count("regions")
        if not isinstance(item, dict):
            t.error(None, "item-not-object", "result item is not a JSON object")
            continue
        rid, name = str(item.get("id") or ""), str(item.get("from_name") or "")
        kind = item.get("type")
        raw_value = item.get("value")
        value: dict[str, Any] = raw_value if isinstance(raw_value, dict) else {}
        want = "number" if name.startswith(COUNT_PREFIX) else EXPECTED_TYPE.get(name)
        if want is None:
            t.warning(rid or None, "from-name-unknown", f"from_name {name!r} is not in the "
                      "MUSE schema: the importer ignores it")
            continue
        if kind != want:
            t.error(rid or None, "type-mismatch", f"{name!r} must be a {want} item, got "
                                                  f"type {kind!r}")
            continue
        if kind == "rectanglelabels":
            _check_box(t, boxes, rid, name, item, value, size)
        elif name.startswith(COUNT_PREFIX):
            n = value.get("number")
            if not isinstance(n, int | float) or isinstance(n, bool) or n < 0 or n != int(n):
                t.error(rid or None, "value-invalid", f"{name}: count must be a "
                                                      f"non-negative integer, got {n!r}")
            else:
                counts[name[len(COUNT_PREFIX):].replace("_", " ")] = int(n)
        else:
            raw = value.get("choices", value.get("text"))
            texts = [raw] if isinstance(raw, str) else raw
            if not isinstance(texts, list) or not texts or not all(
                    isinstance(v, str) and v.strip() for v in texts):
                t.error(rid or None, "value-invalid", f"{name}: expected a non-empty list of "
                                                      f"non-empty strings, got {raw!r}")
            elif name in REGION_ATTRIBUTES:
                attrs[rid][name].extend(v.strip() for v in texts)
            else:
                image_level[name].extend((rid, v.strip()) for v in texts)
    _check_attributes(t, boxes, attrs)
    _check_image_level(t, boxes, image_level, counts)


def _check_box(t: _Task, boxes: dict[str, tuple[str, str]], rid: str, name: str,
               item: dict[str, Any], value: dict[str, Any],
               size: tuple[int, int] | None) -> None:
    if not rid:
        t.error(None, "region-id-missing", f"{name} box without an id")
        return
    if rid in boxes:
        t.error(rid, "region-id-duplicate", f"id used by two boxes ({boxes[rid][0]} and "
                                            f"{name})")
        return
    out = _out_of_range(value)
    if out:
        t.error(rid, "box-out-of-range", f"{name} box {out}: Label Studio boxes are "
                                         "percent of the image, 0–100")
        return
    try:
        _, notes = box_from_percent(value, stored_size(item) or size)
    except BoxGeometryError as exc:
        t.error(rid, "box-invalid", f"{name} box: {exc}")
        return
    for note in notes:
        t.warning(rid, "box-adjusted", f"{name} box: {note}")
    labels = value.get("rectanglelabels")
    if not isinstance(labels, list) or len(labels) != 1 or not isinstance(labels[0], str) \
            or not labels[0].strip():
        t.error(rid, "label-invalid", f"{name} box needs exactly one label, got {labels!r}")
        return
    if name == "character" and labels[0].strip() not in PERSON_CATEGORIES:
        t.error(rid, "label-unknown", f"person label {labels[0]!r} is not one of "
                                      f"{', '.join(PERSON_CATEGORIES)}")
        return
    boxes[rid] = (name, labels[0].strip())


def _out_of_range(value: dict[str, Any]) -> str | None:
    """``"x=120, x+width=130"`` for box values outside 0–100 % (beyond the rounding
    tolerance :data:`~heritage_eval.benchmarks.muse.labelstudio_rules.PCT_TOLERANCE`),
    else ``None``; an unrotated box must also end inside the image."""
    try:
        x, y, w, h = (float(value[k]) for k in ("x", "y", "width", "height"))
    except (KeyError, TypeError, ValueError):
        return None  # box_from_percent names the missing or non-numeric value
    lo, hi = -PCT_TOLERANCE, 100.0 + PCT_TOLERANCE
    bad = [f"{k}={v:g}" for k, v in (("x", x), ("y", y), ("width", w), ("height", h))
           if not lo <= v <= hi]
    if not float(value.get("rotation") or 0.0) % 360.0:
        bad += [f"{k}={v:g}" for k, v in (("x+width", x + w), ("y+height", y + h))
                if v > hi]
    return ", ".join(bad) or None


def _check_attributes(t: _Task, boxes: dict[str, tuple[str, str]],
                      attrs: dict[str, dict[str, list[str]]]) -> None:
    for rid, fields in attrs.items():
        for name, values in fields.items():
            want = REGION_ATTRIBUTES[name]
            if rid not in boxes:
                t.error(rid or None, "attribute-orphan", f"{name} refers to no {want} box "
                                                         "with this id")
            elif boxes[rid][0] != want:
                t.error(rid, "attribute-wrong-region", f"{name} belongs on a {want} box, "
                                                       f"not a {boxes[rid][0]} box")
            elif name == "emotion" and (len(values) != 1 or values[0] not in EMOTIONS):
                t.error(rid, "choice-unknown", f"emotion must be one of {', '.join(EMOTIONS)}"
                                               f", got {values!r}")
    for rid, (kind, _) in boxes.items():
        missing = [a for a in REQUIRED.get(kind, ()) if a not in attrs.get(rid, {})]
        if missing:
            t.error(rid, "attribute-missing", f"{kind} box lacks {', '.join(missing)}")
    people = [rid for rid, (kind, _) in boxes.items() if kind == "character"]
    if people and not any("emotion_cause" in attrs.get(rid, {}) for rid in people):
        t.warning(None, "emotion-cause-missing", "no person has an emotion_cause (the "
                                                 "schema asks for the main person's)")
    n_neg = sum(len(f.get("negative_description", [])) for f in attrs.values())
    if any(kind == "activity" for kind, _ in boxes.values()) and n_neg != 1:
        t.warning(None, "negative-description-count", f"{n_neg} negative_description "
                  "item(s); the schema has exactly one per image")


def _check_image_level(t: _Task, boxes: dict[str, tuple[str, str]],
                       image_level: dict[str, list[tuple[str, str]]],
                       counts: dict[str, int]) -> None:
    scenes = image_level.get("scene", [])
    if not scenes:
        t.warning(None, "scene-missing", "no scene label (Scene Classification skips the "
                                         "image)")
    elif len(scenes) > 1:
        t.error(None, "scene-multiple", f"expected one scene label, got "
                                        f"{[v for _, v in scenes]!r}")
    for name, keys in RELATION_KEYS.items():
        for rid, text in image_level.get(name, []):
            rel, suffix, message = parse_relation(text, keys)
            if rel is None:
                t.error(rid or None, "relation-invalid", f"{name}{suffix}: {message}")
                continue
            ends = [rel["a"], rel["b"]]
            if ends[0] == ends[1]:
                t.error(rid or None, "relation-invalid", f"{name} links {ends[0]} to itself")
            for end, label in zip(ends, "AB", strict=True):
                if end not in boxes:
                    t.error(rid or None, "relation-end", f"{name}: {label}={end} refers to "
                                                         "no box")
                elif name == "relative_position" and boxes[end][0] != "character":
                    t.warning(rid or None, "relation-not-person",
                              f"{name}: {label}={end} is a {boxes[end][0]} box; the schema "
                              "relates two person boxes")
    labels = [label for kind, label in boxes.values() if kind == "object"]
    for name, n, k in count_mismatches(counts, labels):
        t.warning(None, "count-mismatch", f"{COUNT_PREFIX}{name.replace(' ', '_')} = {n} but "
                  f"{k} object box(es) labelled {name!r} (one box per counted instance)")
