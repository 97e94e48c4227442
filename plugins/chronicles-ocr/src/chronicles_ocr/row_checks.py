"""The fields of a release row that each task reads, checked before the task is used.

A value of the wrong shape would otherwise be read silently as "nothing" (no reference
box, an empty reference text), so that even a perfect answer scores 0. Each check
returns ``None`` when the fields are usable, else one sentence naming the field (the
loader prefixes ``file:line``; the sample becomes a data-error record, never sent and
never scored):

- ``spotting`` (read by spotting and recognition): present, a list; each item an object
  whose ``bbox`` is ``{"x1", "y1", "x2", "y2"}`` or a list of 4 values, each a finite
  number (JSON number, or text that ``float`` reads, as the official reader reads it;
  not ``true`` / ``false``) within :data:`MAX_COORD` pixels of 0. An empty list is
  usable (an image with nothing to find). A box of no positive size is *not* an error:
  the official judge drops it (:mod:`chronicles_ocr.boxes`).
- ``width`` / ``height`` (read by spotting, which scales the reference boxes with them):
  present and a positive whole number as the official judge reads it (``int(value)``: a
  JSON number or numeric text; not ``true`` / ``false``).
- ``annotation`` (read by parsing): present and text (``""`` is usable).
"""

from __future__ import annotations

import math
from typing import Any

#: the largest distance (pixels) from 0 of a reference coordinate: no image is that large,
#: and larger values overflow the 0–1000 scaling and the areas of the IoU
MAX_COORD = 1_000_000.0
_SHOWN = 60


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 1] + "…"


def _coordinate(value: Any) -> bool:
    """Whether ``value`` is a usable coordinate (module docstring)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return False
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return False
    return math.isfinite(number) and abs(number) <= MAX_COORD


def _bbox_problem(bbox: Any) -> str | None:
    if isinstance(bbox, dict):
        missing = [k for k in ("x1", "y1", "x2", "y2") if k not in bbox]
        if missing:
            return f"has no {', '.join(missing)}"
        values = [bbox[k] for k in ("x1", "y1", "x2", "y2")]
    elif isinstance(bbox, list) and len(bbox) == 4:
        values = bbox
    else:
        return "is neither {x1, y1, x2, y2} nor a list of 4 numbers"
    if not all(_coordinate(v) for v in values):
        return f"has a value that is not a finite number within ±{MAX_COORD:,.0f}"
    return None


def _absent(row: dict[str, Any], name: str, what: str) -> str:
    return f"{name} is {'null' if name in row else 'missing'} ({what})"


def spotting_problem(row: dict[str, Any]) -> str | None:
    """Why the row's ``spotting`` cannot be read (module docstring), or ``None``."""
    if row.get("spotting") is None:
        return _absent(row, "spotting", "the reference boxes")
    spotting = row["spotting"]
    if not isinstance(spotting, list):
        return f"spotting is {_shown(spotting)}, not a list of boxes"
    for index, item in enumerate(spotting):
        if not isinstance(item, dict):
            return f"spotting[{index}] is {_shown(item)}, not an object"
        why = _bbox_problem(item.get("bbox"))
        if why:
            return f"spotting[{index}].bbox {_shown(item.get('bbox'))} {why}"
    return None


def size_problem(row: dict[str, Any]) -> str | None:
    """Why the row's ``width`` / ``height`` cannot scale the boxes, or ``None``."""
    for name in ("width", "height"):
        value = row.get(name)
        if value is None:
            return _absent(row, name, "spotting scales the reference boxes with it")
        try:
            number = None if isinstance(value, bool) else int(value)
        except (TypeError, ValueError, OverflowError):
            number = None
        if number is None or number <= 0:
            return f"{name} {_shown(value)} is not a positive number"
    return None


def annotation_problem(row: dict[str, Any]) -> str | None:
    """Why the row's ``annotation`` is not a reference text, or ``None``."""
    value = row.get("annotation")
    if value is None:
        return _absent(row, "annotation", "the reference text")
    if not isinstance(value, str):
        return f"annotation is {_shown(value)}, not text"
    return None


def task_problem(task: str, row: dict[str, Any]) -> str | None:
    """The first problem of the fields ``task`` reads (module docstring), or ``None``."""
    if task == "spotting":
        return spotting_problem(row) or size_problem(row)
    if task == "recognition":
        return spotting_problem(row)
    if task == "parsing":
        return annotation_problem(row)
    return None
