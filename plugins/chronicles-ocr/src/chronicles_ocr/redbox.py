"""The recognition task's target: which reference character, and the red box around it.

Rules of the official code (``prompts/referring.py``), written here from their behaviour:

- Candidates: the row's ``spotting`` items, in file order, whose character is not an
  ``[UNK]`` form and whose box reads with positive width and height
  (:func:`~chronicles_ocr.boxes.item_box`).
- Choice: a ``random.Random`` seeded with the first 16 hex digits of
  ``MD5("{seed}::{key}")`` picks one with ``choice``; ``seed`` is 42 by default
  (``infer.py --seed``); ``key`` joins ``image_path=…`` (also ``img_path=…`` /
  ``image=…`` when the row has those fields) and ``sp_fp=`` + the first 12 hex digits
  of MD5 of the ``spotting`` list as JSON (sorted keys, non-ASCII kept) with ``|``.
- Drawing: the image converted to RGB, a rectangle outline of colour (255, 0, 0) and
  width ``round(0.006 * min(W, H))`` clipped to 3..12 pixels, at the box's corners
  clipped to ``0..W-1`` / ``0..H-1``; saved as PNG.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronicles_ocr.boxes import Box, item_box, item_char
from chronicles_ocr.text_rules import is_unk

DEFAULT_SEED = 42
RED = (255, 0, 0)
WIDTH_SHARE = 0.006
MIN_WIDTH, MAX_WIDTH = 3, 12


@dataclass(frozen=True)
class Target:
    """The picked reference: ``char``, ``box`` (pixel corners), ``index`` in
    ``spotting``, ``key`` (the sampling key)."""

    char: str
    box: Box
    index: int
    key: str


def sample_key(row: dict[str, Any]) -> str:
    """The sampling key of a release row (module docstring)."""
    parts = [f"{name}={row[name]}" for name in ("image_path", "img_path", "image")
             if row.get(name)]
    spotting = row.get("spotting")
    if isinstance(spotting, list) and spotting:
        text = json.dumps(spotting, ensure_ascii=False, sort_keys=True)
        parts.append("sp_fp=" + hashlib.md5(text.encode("utf-8")).hexdigest()[:12])
    return "|".join(parts)


def pick_target(row: dict[str, Any], seed: int = DEFAULT_SEED) -> Target | None:
    """The recognition target of ``row``, or ``None`` when it has no candidate."""
    spotting = row.get("spotting") or []
    if not isinstance(spotting, list):
        return None
    candidates: list[tuple[int, str, Box]] = []
    for index, raw in enumerate(spotting):
        if not isinstance(raw, dict):
            continue
        char = item_char(raw)
        box = item_box(raw)
        if is_unk(char) or box is None or not (box[2] > box[0] and box[3] > box[1]):
            continue
        candidates.append((index, char, box))
    if not candidates:
        return None
    key = sample_key(row) or "no-key"
    digest = hashlib.md5(f"{seed}::{key}".encode()).hexdigest()
    index, char, box = random.Random(int(digest[:16], 16)).choice(candidates)
    return Target(char=char, box=box, index=index, key=key)


def line_width(width: int, height: int) -> int:
    """The outline width in pixels for an image of ``width`` × ``height``."""
    short = max(1, min(width, height))
    return max(MIN_WIDTH, min(MAX_WIDTH, round(short * WIDTH_SHARE)))


def clipped(box: Box, width: int, height: int) -> Box:
    """``box`` with x clipped to ``0..width-1`` and y to ``0..height-1``."""
    x1, y1, x2, y2 = box
    return (max(0.0, min(width - 1.0, x1)), max(0.0, min(height - 1.0, y1)),
            max(0.0, min(width - 1.0, x2)), max(0.0, min(height - 1.0, y2)))


def draw(image: Path | str, box: Box, folder: Path | str) -> Path:
    """The image with the red box, written (once) as ``folder/<stem>_<hash>.png``; the
    name's hash covers the image's bytes and the box, so the same inputs give the same
    file. Raises ``OSError`` when the image cannot be read or the file written."""
    from PIL import Image, ImageDraw

    source = Path(image)
    data = source.read_bytes()
    tag = hashlib.sha256(data + repr(tuple(box)).encode()).hexdigest()[:16]
    out = Path(folder) / f"{source.stem}_redbox_{tag}.png"
    if out.is_file():
        return out
    with Image.open(source) as opened:
        picture = opened.convert("RGB")
    w, h = picture.size
    corners = clipped(box, w, h)
    ImageDraw.Draw(picture).rectangle(list(corners), outline=RED, width=line_width(w, h))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    picture.save(partial, format="PNG")
    os.replace(partial, out)
    return out
