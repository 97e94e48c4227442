"""Cut jigsaw pieces and build the four distractor kinds (pixels only, no files).

Images are H×W×3 uint8 RGB arrays. A :class:`Placement` is a piece's top-left corner in
the image and its shape mask. The correct piece equals the image's pixels under the mask;
pixels outside the shape are ``background``. Distractors (paper): another piece of the same
image, the true piece combined with a neighbouring cell's piece, a zoomed region around
the true piece, a piece of another image. Every candidate has exactly the true piece's
size and mask (size and silhouette never decide): another piece is cut with the true
piece's mask centred in another cell (:func:`place_like`); the merged piece is the joint
box of the two pieces resampled (area interpolation) to the piece box; the zoomed region
and the other image's piece are resampled to it too.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from heritage_eval.benchmarks.muse.jigsaw.shapes import piece_mask, piece_size


@dataclass(frozen=True)
class Placement:
    """A piece: top-left ``x0, y0`` (pixels) and boolean ``mask`` of shape ``(bh, bw)``."""

    x0: int
    y0: int
    mask: np.ndarray

    @property
    def size(self) -> tuple[int, int]:
        """``(bw, bh)`` in pixels."""
        return self.mask.shape[1], self.mask.shape[0]


def cell_bounds(width: int, height: int, grid: tuple[int, int],
                cell: tuple[int, int]) -> tuple[int, int, int, int]:
    """``(x0, y0, x1, y1)`` (x1, y1 exclusive) of ``cell = (row, col)`` in a
    ``grid = (rows, cols)`` over a ``width × height`` image; edges at ``round(i·W/cols)``."""
    rows, cols = grid
    r, c = cell
    return (round(c * width / cols), round(r * height / rows),
            round((c + 1) * width / cols), round((r + 1) * height / rows))


def place(width: int, height: int, grid: tuple[int, int], cell: tuple[int, int],
          shape: str, edge: str) -> Placement:
    """The piece of ``shape`` / ``edge`` centred in ``cell``."""
    x0, y0, x1, y1 = cell_bounds(width, height, grid, cell)
    bw, bh = piece_size(shape, x1 - x0, y1 - y0)
    return Placement(x0 + (x1 - x0 - bw) // 2, y0 + (y1 - y0 - bh) // 2,
                     piece_mask(shape, edge, bw, bh))


def place_like(pl: Placement, width: int, height: int, grid: tuple[int, int],
               cell: tuple[int, int]) -> Placement:
    """``pl``'s mask centred in ``cell`` (shifted to stay inside the image)."""
    x0, y0, x1, y1 = cell_bounds(width, height, grid, cell)
    bw, bh = pl.size
    x = min(max(0, x0 + (x1 - x0 - bw) // 2), width - bw)
    y = min(max(0, y0 + (y1 - y0 - bh) // 2), height - bh)
    return Placement(x, y, pl.mask)


def _apply(region: np.ndarray, mask: np.ndarray, background: tuple[int, int, int]
           ) -> np.ndarray:
    out = np.empty_like(region)
    out[:] = background
    out[mask] = region[mask]
    return out


def cut(pixels: np.ndarray, pl: Placement, background: tuple[int, int, int]) -> np.ndarray:
    """The piece at ``pl``: image pixels inside the mask, ``background`` outside."""
    bw, bh = pl.size
    return _apply(pixels[pl.y0:pl.y0 + bh, pl.x0:pl.x0 + bw], pl.mask, background)


def punch(pixels: np.ndarray, pl: Placement, color: tuple[int, int, int]) -> np.ndarray:
    """Copy of the image with the piece region filled with ``color``."""
    out = pixels.copy()
    bw, bh = pl.size
    out[pl.y0:pl.y0 + bh, pl.x0:pl.x0 + bw][pl.mask] = color
    return out


def merged(pixels: np.ndarray, a: Placement, b: Placement,
           background: tuple[int, int, int]) -> np.ndarray:
    """Pieces ``a`` (the true one) and ``b`` combined: their joint bounding box resampled
    (area interpolation) to ``a``'s box and masked with ``a``'s mask."""
    x0, y0 = min(a.x0, b.x0), min(a.y0, b.y0)
    x1 = max(a.x0 + a.size[0], b.x0 + b.size[0])
    y1 = max(a.y0 + a.size[1], b.y0 + b.size[1])
    region = cv2.resize(pixels[y0:y1, x0:x1], a.size, interpolation=cv2.INTER_AREA)
    return _apply(region, a.mask, background)


def zoomed(pixels: np.ndarray, pl: Placement, zoom: float,
           background: tuple[int, int, int]) -> np.ndarray:
    """Region ``zoom`` times the piece box around its centre (shifted to stay inside the
    image), resized (area interpolation) to the piece box and masked like the piece."""
    h, w = pixels.shape[:2]
    bw, bh = pl.size
    zw, zh = min(w, round(bw * zoom)), min(h, round(bh * zoom))
    cx, cy = pl.x0 + bw / 2, pl.y0 + bh / 2
    x0 = int(min(max(0, round(cx - zw / 2)), w - zw))
    y0 = int(min(max(0, round(cy - zh / 2)), h - zh))
    region = cv2.resize(pixels[y0:y0 + zh, x0:x0 + zw], (bw, bh), interpolation=cv2.INTER_AREA)
    return _apply(region, pl.mask, background)


def foreign(other: np.ndarray, grid: tuple[int, int], cell: tuple[int, int], pl: Placement,
            shape: str, edge: str, background: tuple[int, int, int]) -> np.ndarray:
    """The same cell / shape cut from another image ``other``, resized to ``pl``'s box and
    masked with ``pl``'s mask."""
    h, w = other.shape[:2]
    src = place(w, h, grid, cell, shape, edge)
    sw, sh = src.size
    region = other[src.y0:src.y0 + sh, src.x0:src.x0 + sw]
    if (sw, sh) != pl.size:
        region = cv2.resize(region, pl.size, interpolation=cv2.INTER_AREA)
    return _apply(region, pl.mask, background)
