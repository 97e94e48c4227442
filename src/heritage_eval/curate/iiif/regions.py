"""The ``--regions`` file: which parts of which canvases to crop through the Image API.

CSV with a header ``canvas,region`` (one crop per row), or JSON: an object mapping a
canvas to a region or a list of regions, or a list of ``{"canvas": ..., "region": ...}``
objects. A canvas is named by its ``id`` or by its 1-based position in the manifest
(``2``); a region is a IIIF region parameter (``x,y,w,h`` in pixels or
``pct:x,y,w,h`` in percent of the full image; ``full``, ``square``). In CSV a region
with commas must be quoted (``1,"0,0,100,100"``). :func:`check_regions` refuses a canvas
the manifest does not have.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from heritage_eval.core.datapath import read_regular_text
from heritage_eval.curate.iiif.imageapi import is_region
from heritage_eval.curate.iiif.manifest import CanvasImage


class Regions(dict[str, list[str]]):
    """Canvas key (its id, or its 1-based index as a decimal string) -> regions in file
    order; ``where[key]`` is where the key first appears (``"file:line"`` or ``"file:
    entry …"``), for error messages."""

    def __init__(self) -> None:
        super().__init__()
        self.where: dict[str, str] = {}


class RegionsError(ValueError):
    """A regions file that cannot be used; the message names the file (and line)."""


def _add(out: Regions, canvas: Any, region: Any, where: str) -> None:
    if isinstance(canvas, bool) or not isinstance(canvas, (str, int)) or str(canvas) == "":
        raise RegionsError(f"{where}: 'canvas' must be a canvas id or a 1-based index")
    if not isinstance(region, str) or not is_region(region.strip()):
        raise RegionsError(f"{where}: {region!r} is not a IIIF region (x,y,w,h or "
                           "pct:x,y,w,h, w and h above 0; or full / square)")
    key = str(canvas).strip()
    out.where.setdefault(key, where)
    out.setdefault(key, []).append(region.strip())


def _from_csv(text: str, path: Path) -> Regions:
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or not {"canvas", "region"} <= set(reader.fieldnames):
        raise RegionsError(f"{path}:1: expected a header with columns 'canvas,region'")
    out = Regions()
    for row in reader:
        where = f"{path}:{reader.line_num}"
        extra = row.get(None)  # DictReader restkey: fields past the header
        if extra:
            raise RegionsError(
                f"{where}: {len(extra)} more field(s) than the header 'canvas,region' "
                f"(region read as {row.get('region')!r}); a region with commas must be "
                'quoted in CSV, e.g. 1,"0,0,100,100"')
        _add(out, (row.get("canvas") or "").strip(), row.get("region"), where)
    return out


def _from_json(text: str, path: Path) -> Regions:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RegionsError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from exc
    out = Regions()
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


def check_regions(regions: Regions, canvases: list[CanvasImage]) -> None:
    """Raise :class:`RegionsError` naming the file line and the manifest's canvases when
    a key of ``regions`` is neither a canvas id nor a 1-based position of
    ``canvases``."""
    known = {c.canvas_id for c in canvases} | {str(c.index) for c in canvases}
    for key in regions:
        if key in known:
            continue
        ids = ", ".join(repr(c.canvas_id) for c in canvases[:5])
        more = f" and {len(canvases) - 5} more" if len(canvases) > 5 else ""
        span = (f"positions 1-{len(canvases)}" if len(canvases) > 1 else "position 1") \
            if canvases else "none"
        raise RegionsError(f"{regions.where.get(key, 'regions file')}: canvas {key!r} is "
                           f"not in the manifest; its canvases are {span}, ids "
                           f"{ids or '-'}{more}")


def load_regions(path: Path) -> Regions:
    """The regions of ``path`` (``.json`` read as JSON, anything else as CSV). Raises
    :class:`RegionsError` naming the file (and line) for unreadable files, a missing
    header, a canvas that is neither an id nor an index, or an invalid region."""
    try:
        text = read_regular_text(path, encoding="utf-8-sig")  # a FIFO: refused
    except (OSError, UnicodeDecodeError) as exc:
        raise RegionsError(f"cannot read regions file {path}: {exc}") from exc
    return _from_json(text, path) if path.suffix.lower() == ".json" else _from_csv(text, path)
