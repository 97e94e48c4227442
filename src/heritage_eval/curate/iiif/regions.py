"""The ``--regions`` file: which parts of which canvases to crop through the Image API.

CSV with a header ``canvas,region`` (one crop per row), or JSON: an object mapping a
canvas to a region or a list of regions, or a list of ``{"canvas": ..., "region": ...}``
objects. A canvas is named by its ``id`` or by its 1-based position in the manifest
(``2``); a region is a IIIF region parameter (``x,y,w,h`` in pixels or
``pct:x,y,w,h`` in percent of the full image; ``full``, ``square``).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from heritage_eval.curate.iiif.imageapi import is_region

#: canvas key (its id, or its 1-based index as a decimal string) -> regions in file order.
Regions = dict[str, list[str]]


class RegionsError(ValueError):
    """A regions file that cannot be used; the message names the file (and line)."""


def _add(out: Regions, canvas: Any, region: Any, where: str) -> None:
    if isinstance(canvas, bool) or not isinstance(canvas, (str, int)) or str(canvas) == "":
        raise RegionsError(f"{where}: 'canvas' must be a canvas id or a 1-based index")
    if not isinstance(region, str) or not is_region(region.strip()):
        raise RegionsError(f"{where}: {region!r} is not a IIIF region (x,y,w,h or "
                           "pct:x,y,w,h, w and h above 0; or full / square)")
    out.setdefault(str(canvas).strip(), []).append(region.strip())


def _from_csv(text: str, path: Path) -> Regions:
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or not {"canvas", "region"} <= set(reader.fieldnames):
        raise RegionsError(f"{path}:1: expected a header with columns 'canvas,region'")
    out: Regions = {}
    for row in reader:
        _add(out, (row.get("canvas") or "").strip(), row.get("region"),
             f"{path}:{reader.line_num}")
    return out


def _from_json(text: str, path: Path) -> Regions:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RegionsError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from exc
    out: Regions = {}
    if isinstance(data, dict):
        for canvas, value in data.items():
            for region in value if isinstance(value, list) else [value]:
                _add(out, canvas, region, f"{path}: entry {canvas!r}")
    elif isinstance(data, list):
        for i, item in enumerate(data):
            if not isinstance(item, dict):
                raise RegionsError(f"{path}: item {i} is not an object with canvas, region")
            _add(out, item.get("canvas"), item.get("region"), f"{path}: item {i}")
    else:
        raise RegionsError(f"{path}: expected an object or a list")
    return out


def load_regions(path: Path) -> Regions:
    """The regions of ``path`` (``.json`` read as JSON, anything else as CSV). Raises
    :class:`RegionsError` naming the file (and line) for unreadable files, a missing
    header, a canvas that is neither an id nor an index, or an invalid region."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RegionsError(f"cannot read regions file {path}: {exc}") from exc
    return _from_json(text, path) if path.suffix.lower() == ".json" else _from_csv(text, path)
