"""Generated images of a question file: ``<question file stem>_assets/<image id>/…png``.

PNG (lossless, so a jigsaw piece equals the missing pixels exactly); Pillow writes no
timestamp, so the same pixels give byte-identical files. Boxes drawn for ``draw_boxes``
are red rectangles (3 px on a 1000 px side, scaled) with their option label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from heritage_eval.benchmarks.muse.annotation import Box

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """File-name-safe version of ``text`` (runs of other characters become ``_``)."""
    return _UNSAFE.sub("_", text).strip("._") or "_"


class AssetWriter:
    """Writes PNGs under ``root`` (absolute); returns paths relative to the question file's
    folder, i.e. prefixed with ``rel_root`` (the assets folder name)."""

    def __init__(self, root: Path, rel_root: str) -> None:
        self.root = root
        self.rel_root = rel_root
        self.n_written = 0

    def save(self, image_id: str, name: str, pixels: np.ndarray, compress_level: int = 6) -> str:
        """Save ``pixels`` (H×W×3 uint8 RGB) as ``<image id>/<name>.png``; returns the
        relative path (POSIX separators)."""
        folder = safe_name(image_id)
        (self.root / folder).mkdir(parents=True, exist_ok=True)
        filename = f"{safe_name(name)}.png"
        Image.fromarray(pixels).save(self.root / folder / filename, format="PNG",
                                     compress_level=compress_level)
        self.n_written += 1
        return f"{self.rel_root}/{folder}/{filename}"


def draw_boxes(pixels: np.ndarray, boxes: Sequence[tuple[str, Box]]) -> np.ndarray:
    """Copy of ``pixels`` (H×W×3 uint8 RGB) with each ``(label, box)`` drawn in red and
    labelled at its top-left corner; boxes are normalized COCO."""
    out = np.ascontiguousarray(pixels.copy())
    h, w = out.shape[:2]
    thick = max(1, round(3 * max(h, w) / 1000))
    scale = max(0.4, max(h, w) / 1400)
    for label, box in boxes:
        x0, y0 = round(box.x * w), round(box.y * h)
        x1, y1 = round((box.x + box.w) * w) - 1, round((box.y + box.h) * h) - 1
        cv2.rectangle(out, (x0, y0), (x1, y1), (255, 0, 0), thick)
        if label:
            (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
            ty = max(th + base, y0)
            cv2.rectangle(out, (x0, ty - th - base), (x0 + tw + 2, ty), (255, 0, 0), -1)
            cv2.putText(out, label, (x0 + 1, ty - base), cv2.FONT_HERSHEY_SIMPLEX, scale,
                        (255, 255, 255), thick, cv2.LINE_AA)
    return out
