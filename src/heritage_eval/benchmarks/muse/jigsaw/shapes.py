"""Jigsaw piece shapes and edge styles as binary masks (OpenCV polygon fill).

A piece lives inside one grid cell of ``cw × ch`` pixels. Its bounding box (``bw × bh``,
centred in the cell) depends on the shape:

- ``square``: side ``min(cw, ch)``;
- ``rect_wide`` (landscape): ``cw × min(ch, 0.6·cw)``; ``rect_tall`` (portrait):
  ``min(cw, 0.6·ch) × ch``;
- ``hexagon_stretched``: flat-top hexagon in a wide box like ``rect_wide``;
- ``hexagon_upright``: pointy-top hexagon in a tall box ``min(cw, 0.8·ch) × ch``;
- ``hexagon_balanced``: regular flat-top hexagon (height = √3/2 · width), as large as fits.

Edge styles change every corner of the outline: ``sharp`` keeps it, ``angled`` cuts it
(chamfer), ``rounded`` replaces it by a quadratic Bézier arc; the corner size is 15 % of
the shorter side of the box.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

_FLAT_HEX = [(0.0, 0.5), (0.25, 0.0), (0.75, 0.0), (1.0, 0.5), (0.75, 1.0), (0.25, 1.0)]
_POINTY_HEX = [(0.5, 0.0), (1.0, 0.25), (1.0, 0.75), (0.5, 1.0), (0.0, 0.75), (0.0, 0.25)]
_RECT = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
CORNER_FRACTION = 0.15


def piece_size(shape: str, cw: int, ch: int) -> tuple[int, int]:
    """``(bw, bh)`` in pixels of a ``shape`` piece in a ``cw × ch`` cell; ``ValueError``
    for an unknown shape."""
    if shape == "square":
        s = min(cw, ch)
        return s, s
    if shape in ("rect_wide", "hexagon_stretched"):
        return cw, min(ch, round(0.6 * cw))
    if shape == "rect_tall":
        return min(cw, round(0.6 * ch)), ch
    if shape == "hexagon_upright":
        return min(cw, round(0.8 * ch)), ch
    if shape == "hexagon_balanced":
        bw = min(cw, round(ch * 2 / math.sqrt(3)))
        return bw, min(ch, round(bw * math.sqrt(3) / 2))
    raise ValueError(f"unknown piece shape {shape!r}")


def outline(shape: str, bw: int, bh: int) -> np.ndarray:
    """Polygon vertices ``(k, 2)`` float (x, y) of ``shape`` spanning a ``bw × bh`` box
    (pixel centres 0 … bw-1, 0 … bh-1)."""
    unit = (_FLAT_HEX if shape in ("hexagon_stretched", "hexagon_balanced")
            else _POINTY_HEX if shape == "hexagon_upright" else _RECT)
    return np.array([(x * (bw - 1), y * (bh - 1)) for x, y in unit], dtype=np.float64)


def soften(poly: np.ndarray, edge: str, radius: float) -> np.ndarray:
    """Apply an edge style to every corner of ``poly``: ``sharp`` (unchanged), ``angled``
    (chamfer) or ``rounded`` (8-point Bézier arc); ``ValueError`` for another style."""
    if edge == "sharp":
        return poly
    if edge not in ("angled", "rounded"):
        raise ValueError(f"unknown edge style {edge!r}")
    out: list[np.ndarray] = []
    k = len(poly)
    for i in range(k):
        prev, v, nxt = poly[i - 1], poly[i], poly[(i + 1) % k]
        a = v + (prev - v) * min(0.45, radius / max(float(np.linalg.norm(prev - v)), 1e-9))
        b = v + (nxt - v) * min(0.45, radius / max(float(np.linalg.norm(nxt - v)), 1e-9))
        if edge == "angled":
            out += [a, b]
        else:
            for t in np.linspace(0.0, 1.0, 8):
                out.append((1 - t) ** 2 * a + 2 * t * (1 - t) * v + t**2 * b)
    return np.array(out)


def piece_mask(shape: str, edge: str, bw: int, bh: int) -> np.ndarray:
    """Boolean mask ``(bh, bw)`` of a piece: True inside the shape."""
    poly = soften(outline(shape, bw, bh), edge, CORNER_FRACTION * min(bw, bh))
    mask = np.zeros((bh, bw), dtype=np.uint8)
    cv2.fillPoly(mask, [np.round(poly).astype(np.int32)], 1)
    return mask.astype(bool)
