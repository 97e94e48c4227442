"""IIIF Image API 2 / 3: the size parameter under a cap, and image request URLs.

A request is ``{service id}/{region}/{size}/{rotation}/{quality}.{format}`` (Image API
2.1 §4 and 3.0 §4); here rotation is ``0``, quality ``default``, format ``jpg``.
:func:`size_param` chooses the size from the service's ``info.json`` (3.0 §5, 2.1 §5):

- the image (or region) already fits in ``cap`` x ``cap`` and the service limits ->
  ``max`` (v3) / ``full`` (v2): the whole thing, never upscaled;
- a level-0 service (no arbitrary sizes; 3.0 §5.3 compliance) -> the largest of its
  listed ``sizes`` that fits, written ``w,h`` (the smallest listed one when none fits;
  ``max`` / ``full`` when none is listed);
- else ``!w,h`` (best fit inside the box, aspect kept) with ``w = min(cap, maxWidth)``
  and ``h = min(cap, maxHeight)`` (``maxHeight`` defaults to ``maxWidth``, 3.0 §5.2);
  when ``maxArea`` would still be exceeded, the box is the largest fitted size within
  it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from heritage_eval.curate.iiif.manifest import ImageService

_XYWH = re.compile(r"^(\d+),(\d+),(\d+),(\d+)$")
_PCT = re.compile(r"^pct:(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),(\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class ServiceInfo:
    """What ``info.json`` says about limits: full ``width``/``height`` (pixels), the
    optional ``max_width``/``max_height``/``max_area``, listed ``sizes`` (``(w, h)``) and
    whether the service is ``level0``."""

    width: int | None
    height: int | None
    max_width: int | None = None
    max_height: int | None = None
    max_area: int | None = None
    sizes: tuple[tuple[int, int], ...] = ()
    level0: bool = False


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and value > 0 else None


def parse_info(data: Any) -> ServiceInfo:
    """:class:`ServiceInfo` of a decoded ``info.json`` (v2: limits may sit in a profile
    object; v3: at the top level). Raises ``ValueError`` for a non-object."""
    if not isinstance(data, dict):
        raise ValueError("info.json is not a JSON object")
    limits: dict[str, Any] = dict(data)
    profiles = data.get("profile")
    profile_list = profiles if isinstance(profiles, list) else [profiles]
    for prof in profile_list:  # Image API 2: [compliance URI, {maxWidth, ...}]
        if isinstance(prof, dict):
            limits = {**prof, **limits}
    names = " ".join(str(p) for p in profile_list if isinstance(p, str))
    level0 = "level0" in names
    sizes = tuple((s["width"], s["height"]) for s in data.get("sizes") or []
                  if isinstance(s, dict) and _int(s.get("width")) and _int(s.get("height")))
    max_width = _int(limits.get("maxWidth"))
    max_height = _int(limits.get("maxHeight")) or max_width
    return ServiceInfo(width=_int(data.get("width")), height=_int(data.get("height")),
                       max_width=max_width, max_height=max_height,
                       max_area=_int(limits.get("maxArea")), sizes=sizes, level0=level0)


def region_pixels(region: str, info: ServiceInfo | None) -> tuple[int, int] | None:
    """Width and height in pixels of a region parameter (``full``, ``square``,
    ``x,y,w,h``, ``pct:x,y,w,h``), clipped to the image when its size is known;
    ``None`` when it cannot be told (a ``pct:`` or ``full`` region without sizes)."""
    full_w, full_h = (info.width, info.height) if info else (None, None)
    m = _XYWH.match(region)
    if m:
        x, y, w, h = (int(g) for g in m.groups())
        if full_w and full_h:
            w, h = min(w, full_w - x), min(h, full_h - y)
        return (w, h) if w > 0 and h > 0 else None
    if full_w is None or full_h is None:
        return None
    if region == "full":
        return full_w, full_h
    if region == "square":
        side = min(full_w, full_h)
        return side, side
    m = _PCT.match(region)
    if m:
        px, py, pw, ph = (float(g) for g in m.groups())
        return (max(1, round(full_w * min(pw, 100 - px) / 100)),
                max(1, round(full_h * min(ph, 100 - py) / 100)))
    return None


def is_region(text: str) -> bool:
    """True for a valid region parameter: ``full``, ``square``, ``x,y,w,h`` (integers,
    ``w`` and ``h`` positive) or ``pct:x,y,w,h`` (``w`` and ``h`` above 0)."""
    if text in ("full", "square"):
        return True
    m = _XYWH.match(text) or _PCT.match(text)
    return m is not None and float(m.group(3)) > 0 and float(m.group(4)) > 0


def _fit(w: int, h: int, box_w: int, box_h: int) -> tuple[int, int]:
    scale = min(box_w / w, box_h / h, 1.0)
    return max(1, math.floor(w * scale)), max(1, math.floor(h * scale))


def size_param(cap: int, version: int, info: ServiceInfo | None,
               region: str = "full") -> str:
    """The size parameter for an image (or ``region``) under a ``cap`` (pixels, longest
    side) on a service of Image API ``version`` (2 or 3); rules in the module docstring.
    Without ``info`` (no ``info.json``) it is ``!cap,cap``."""
    whole = "max" if version >= 3 else "full"
    if info is None:
        return f"!{cap},{cap}"
    box_w = min(cap, info.max_width or cap)
    box_h = min(cap, info.max_height or cap)
    dims = region_pixels(region, info)
    if info.level0:
        if region == "full" and info.sizes:
            fitting = [s for s in info.sizes if s[0] <= box_w and s[1] <= box_h]
            w, h = max(fitting, key=lambda s: s[0] * s[1]) if fitting else \
                min(info.sizes, key=lambda s: s[0] * s[1])
            return f"{w},{h}"
        return whole
    if dims is None:
        return f"!{box_w},{box_h}"
    fitted = _fit(dims[0], dims[1], box_w, box_h)
    if info.max_area and fitted[0] * fitted[1] > info.max_area:
        scale = math.sqrt(info.max_area / (fitted[0] * fitted[1]))
        fitted = (max(1, math.floor(fitted[0] * scale)), max(1, math.floor(fitted[1] * scale)))
        return f"!{fitted[0]},{fitted[1]}"
    if fitted == dims:
        return whole
    return f"!{box_w},{box_h}"


def image_url(service: ImageService, region: str, size: str) -> str:
    """``{service id}/{region}/{size}/0/default.jpg``."""
    return f"{service.id}/{region}/{size}/0/default.jpg"


def info_url(service: ImageService) -> str:
    """``{service id}/info.json``."""
    return f"{service.id}/info.json"
