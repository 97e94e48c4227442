"""Reference boxes, IoU and the one-to-one matching of the spotting judge.

Reference boxes (``spotting`` of a release row) come in three shapes, read as the
official code reads them (``judges/spotting.py`` ``_parse_gt``; ``prompts/referring.py``
``_bbox_to_xyxy`` reads them the same way for the red box):

- ``{"x1", "y1", "x2", "y2"}`` (an object): corners;
- a list of 4 numbers in an item that has ``modern_char``: ``[x, y, w, h]``;
- a list of 4 numbers otherwise: corners, unless ``x2 < x1`` or ``y2 < y1``, when it is
  read as ``[x, y, w, h]`` too.

A box with no positive width and height, or with a value that is not a number, is left
out. The character is ``modern_char``, else ``text``, stripped. Pixel boxes are scaled to
the 0–1000 frame of the answers with the row's ``width`` / ``height`` (not the image
file's size); a row without them has no reference box.

Matching (:func:`match`): every (prediction, reference) pair whose IoU reaches the
threshold — and, when characters must agree, whose characters are equal — is a
candidate; candidates are taken by decreasing IoU (ties in prediction order, then
reference order) and a pair is kept when neither side is taken yet. F1 is 0 when
nothing matched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Item:
    """One box (``x1, y1, x2, y2``) and its character."""

    box: Box
    char: str


def item_char(item: dict[str, Any]) -> str:
    """The reference character of a ``spotting`` item: ``modern_char``, else ``text``."""
    char = item.get("modern_char")
    if char is None:
        char = item.get("text", "")
    return str(char or "").strip()


def item_box(item: dict[str, Any]) -> Box | None:
    """The corners of a ``spotting`` item's ``bbox`` in pixels (module docstring), before
    the size check, or ``None`` when it has no readable box."""
    bbox = item.get("bbox")
    try:
        if isinstance(bbox, dict):
            x1, y1, x2, y2 = (float(bbox[k]) for k in ("x1", "y1", "x2", "y2"))
        elif isinstance(bbox, list | tuple) and len(bbox) == 4:
            a, b, c, d = (float(v) for v in bbox)
            if c < a or d < b or "modern_char" in item:
                x1, y1, x2, y2 = a, b, a + c, b + d
            else:
                x1, y1, x2, y2 = a, b, c, d
        else:
            return None
    except (KeyError, TypeError, ValueError):
        return None
    return (x1, y1, x2, y2)


def reference_items(row: dict[str, Any]) -> list[Item]:
    """The reference boxes of a release row in pixels, in file order, as the judge keeps
    them: a box is dropped when ``x2 <= x1`` or ``y2 <= y1`` (so a NaN coordinate, for
    which both comparisons are false, is kept and then never matches)."""
    out = []
    spotting = row.get("spotting")
    for raw in spotting if isinstance(spotting, list) else []:
        if isinstance(raw, dict):
            box = item_box(raw)
            if box is not None and not (box[2] <= box[0] or box[3] <= box[1]):
                out.append(Item(box, item_char(raw)))
    return out


def row_size(row: dict[str, Any]) -> tuple[int, int]:
    """``(width, height)`` of a row as the judge reads them: ``int(value or 0)``. Raises
    ``TypeError`` / ``ValueError`` for a value ``int`` refuses (the official judge then
    fails on the row, and its summary leaves the image out of spotting)."""
    return int(row.get("width") or 0), int(row.get("height") or 0)


def to_thousandths(items: Sequence[Item], width: int, height: int) -> list[Item]:
    """``items`` scaled from pixels to the 0–1000 frame (``[]`` without a size)."""
    if width <= 0 or height <= 0:
        return []
    sx, sy = 1000.0 / width, 1000.0 / height
    return [Item((i.box[0] * sx, i.box[1] * sy, i.box[2] * sx, i.box[3] * sy), i.char)
            for i in items]


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two corner boxes (0 for an empty box or no overlap)."""
    if a[2] <= a[0] or a[3] <= a[1] or b[2] <= b[0] or b[3] <= b[1]:
        return 0.0
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


@dataclass(frozen=True)
class Counts:
    """True positives, false positives, false negatives of one image."""

    tp: int
    fp: int
    fn: int

    def f1(self) -> float:
        """2PR / (P + R); 0 when ``tp`` is 0."""
        if self.tp == 0:
            return 0.0
        p, r = self.tp / (self.tp + self.fp), self.tp / (self.tp + self.fn)
        return 2 * p * r / (p + r)

    def as_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn}


def passes(value: float, threshold: float, strict: bool) -> bool:
    """Whether an IoU counts: ``value > threshold`` when ``strict``, else ``>=``."""
    return value > threshold if strict else value >= threshold


def match(preds: Sequence[Item], refs: Sequence[Item], threshold: float, *,
          same_char: bool, strict: bool) -> Counts:
    """Greedy one-to-one matching (module docstring)."""
    if not preds or not refs:
        return Counts(0, len(preds), len(refs))
    pairs = []
    for pi, p in enumerate(preds):
        for ri, r in enumerate(refs):
            if same_char and p.char != r.char:
                continue
            value = iou(p.box, r.box)
            if passes(value, threshold, strict):
                pairs.append((value, pi, ri))
    pairs.sort(key=lambda t: t[0], reverse=True)  # stable: ties keep (pi, ri) order
    used_p: set[int] = set()
    used_r: set[int] = set()
    for _, pi, ri in pairs:
        if pi not in used_p and ri not in used_r:
            used_p.add(pi)
            used_r.add(ri)
    tp = len(used_p)
    return Counts(tp, len(preds) - tp, len(refs) - tp)


