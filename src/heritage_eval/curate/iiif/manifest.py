"""Read a IIIF Presentation 3 manifest into the canvases to fetch.

The manifest is read as plain JSON, not through the ``iiif-prezi3`` models: those parse
every ``id`` into a pydantic URL, which normalises it (``http://host`` becomes
``http://host/``), and the image URLs built here must start with the service id exactly
as the publisher wrote it (IIIF Image API 3.0 §3: ``{scheme}://{server}/{prefix}/
{identifier}``). Only the parts used are read: ``items`` (canvases) -> ``items``
(annotation pages) -> ``items`` (annotations, motivation ``painting``) -> ``body`` (an
``Image``, possibly inside a ``Choice``) and its ``service`` (Image API 2 or 3), plus the
manifest's ``label``, ``rights``, ``requiredStatement`` and ``metadata``
(Presentation API 3.0 §3).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class ManifestError(ValueError):
    """A manifest that is not JSON or not a IIIF Presentation 3 manifest; the message
    names the source."""


@dataclass(frozen=True)
class ImageService:
    """An image service: ``id`` (base URI, trailing ``/`` removed) and ``version`` 2 or 3."""

    id: str
    version: int


@dataclass(frozen=True)
class CanvasImage:
    """One canvas to fetch: ``index`` (1-based position in ``items``), its ``canvas_id``,
    plain-text ``label``, the painting body's ``body_id`` (a full image URL) and its
    image ``service`` (``None`` when the body has none)."""

    index: int
    canvas_id: str
    label: str
    body_id: str | None
    service: ImageService | None
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class Manifest:
    """The manifest's ``id``, plain ``label`` and its rights fields as written
    (``rights`` a URI or ``None``; ``required_statement`` and ``metadata`` the JSON
    values), plus its :class:`CanvasImage` list in order."""

    id: str
    label: str
    rights: str | None
    required_statement: Any
    metadata: Any
    canvases: list[CanvasImage] = field(default_factory=list)


def label_text(value: Any) -> str:
    """Plain text of a language map (``{"en": ["A", "B"]}`` -> ``"A B"``): the ``none``
    entry first, then ``en``, then the first language; a plain string is returned as is
    (Presentation 2 style); anything else gives ``""``."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict) or not value:
        return ""
    for key in ("none", "en", *value.keys()):
        texts = value.get(key)
        if isinstance(texts, list) and texts:
            return " ".join(str(t) for t in texts)
        if isinstance(texts, str):
            return texts
    return ""


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _service(body: dict[str, Any]) -> ImageService | None:
    """The first Image API 2 or 3 service of ``body`` (``@id``/``@type`` for v2,
    ``id``/``type`` for v3; an untyped service with an image-API ``profile`` counts)."""
    for svc in _list(body.get("service")):
        if not isinstance(svc, dict):
            continue
        sid = svc.get("id") or svc.get("@id")
        kind = str(svc.get("type") or svc.get("@type") or "")
        profile = " ".join(str(p) for p in _list(svc.get("profile")) if isinstance(p, str))
        if not isinstance(sid, str) or not sid:
            continue
        if kind == "ImageService3" or "image/3" in str(svc.get("@context", "")):
            return ImageService(sid.rstrip("/"), 3)
        if kind in ("ImageService2", "ImageService1", "iiif:ImageProfile") or \
                "image/2" in profile or "image/2" in str(svc.get("@context", "")):
            return ImageService(sid.rstrip("/"), 2)
    return None


def _image_body(annotation: dict[str, Any]) -> dict[str, Any] | None:
    for body in _list(annotation.get("body")):
        if not isinstance(body, dict):
            continue
        if body.get("type") == "Choice":  # first image among the choices (the default)
            for item in _list(body.get("items")):
                if isinstance(item, dict) and item.get("type") == "Image":
                    return item
        if body.get("type") == "Image":
            return body
    return None


def _canvas(index: int, canvas: dict[str, Any]) -> CanvasImage:
    body: dict[str, Any] | None = None
    for page in _list(canvas.get("items")):
        for anno in _list(page.get("items") if isinstance(page, dict) else None):
            if isinstance(anno, dict) and anno.get("motivation", "painting") == "painting":
                body = _image_body(anno)
                if body is not None:
                    break
        if body is not None:
            break
    body_id = body.get("id") if body else None
    width, height = canvas.get("width"), canvas.get("height")
    return CanvasImage(
        index=index, canvas_id=str(canvas.get("id", "")), label=label_text(canvas.get("label")),
        body_id=body_id if isinstance(body_id, str) else None,
        service=_service(body) if body else None,
        width=width if isinstance(width, int) else None,
        height=height if isinstance(height, int) else None)


def parse_manifest(data: Any, source: str) -> Manifest:
    """:class:`Manifest` of a decoded Presentation 3 manifest; ``source`` names it in
    errors. Raises :class:`ManifestError` when ``data`` is not an object of type
    ``Manifest`` with an ``items`` list (a Presentation 2 manifest, with ``sequences``,
    is named as such)."""
    if not isinstance(data, dict):
        raise ManifestError(f"{source}: expected a JSON object (a IIIF manifest)")
    if "sequences" in data or data.get("@type") == "sc:Manifest":
        raise ManifestError(f"{source}: a IIIF Presentation 2 manifest; only Presentation 3 "
                            "is read (convert it, e.g. with the IIIF upgrader)")
    if data.get("type") != "Manifest":
        raise ManifestError(f"{source}: 'type' is {data.get('type')!r}, not 'Manifest'")
    items = data.get("items")
    if not isinstance(items, list):
        raise ManifestError(f"{source}: the manifest has no 'items' list of canvases")
    canvases = [_canvas(i, c) for i, c in enumerate(items, start=1)
                if isinstance(c, dict) and c.get("type", "Canvas") == "Canvas"]
    rights = data.get("rights")
    return Manifest(id=str(data.get("id", "")), label=label_text(data.get("label")),
                    rights=rights if isinstance(rights, str) else None,
                    required_statement=data.get("requiredStatement"),
                    metadata=data.get("metadata"), canvases=canvases)


def decode_manifest(text: str, source: str) -> Manifest:
    """:func:`parse_manifest` of JSON ``text``; invalid JSON raises :class:`ManifestError`
    with the line and column."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{source}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from exc
    return parse_manifest(data, source)
