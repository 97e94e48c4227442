"""Column kinds of an export: Arrow types, Hugging Face ``datasets`` feature encoding.

An image column holds the ``datasets`` ``Image`` feature's storage: a struct
``{bytes: binary, path: string}`` with the file's original bytes (never re-encoded, so
pixels are the source's) and its file name. ``datasets`` decodes such a column as an
image when the parquet schema's ``huggingface`` metadata key holds
``{"info": {"features": {...}}}`` naming it ``{"_type": "Image"}``; a list of images is
written ``[{"_type": "Image"}]`` (the list form every ``datasets`` version reads).
Reference: ``datasets`` ``features/image.py`` (storage type) and
``arrow_writer.py`` / ``features.py`` (``Features.from_arrow_schema`` reads that key).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from heritage_eval.core.datapath import open_regular
from heritage_eval.core.sizecap import MAX_EXPORT_IMAGE, CapExceeded, human, read_capped
from heritage_eval.curate.hf.spec import FORMAT, Column

__all__ = ["FORMAT", "Column", "arrow_schema", "card_features", "cell_bytes", "image_bytes",
           "image_cell", "oversized_image"]
log = logging.getLogger(__name__)

#: Parquet schema metadata key of our own provenance (benchmark name, format version, …).
META_KEY = "heritage_eval"
#: Schema metadata key the ``datasets`` library reads its features from.
HF_META_KEY = "huggingface"

IMAGE_STRUCT = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
_ARROW: dict[str, pa.DataType] = {
    "string": pa.string(), "int64": pa.int64(), "image": IMAGE_STRUCT,
    "images": pa.list_(IMAGE_STRUCT), "strings": pa.list_(pa.string())}
_HF: dict[str, Any] = {
    "string": {"dtype": "string", "_type": "Value"},
    "int64": {"dtype": "int64", "_type": "Value"},
    "image": {"_type": "Image"},
    "images": [{"_type": "Image"}],
    "strings": [{"dtype": "string", "_type": "Value"}]}
_CARD: dict[str, dict[str, str]] = {
    "string": {"dtype": "string"}, "int64": {"dtype": "int64"}, "image": {"dtype": "image"},
    "images": {"sequence": "image"}, "strings": {"sequence": "string"}}


def image_cell(data: bytes | None, path: str | None) -> dict[str, Any] | None:
    """The stored value of one image: ``{"bytes": data, "path": path}``; ``None`` (a
    null cell) when there is no image."""
    if data is None:
        return None
    return {"bytes": data, "path": path}


def oversized_image(path: str | os.PathLike[str]) -> str | None:
    """Why the image file ``path`` is not put in an export, else ``None``: its size is
    over the ``max_export_image`` cap (docs/limits.md). Only ``stat`` is asked; a file
    that cannot be stat-ed is left to the reader."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return None
    if size > MAX_EXPORT_IMAGE.value():
        return MAX_EXPORT_IMAGE.message(f"image {os.fspath(path)}", "file size", human(size))
    return None


def image_bytes(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes of the image file ``path`` for an export (a regular file only, read
    with at most the ``max_export_image`` cap + 1 bytes held); ``None``, logged, when the
    file has grown over the cap since :func:`oversized_image` passed it. Raises
    ``OSError`` as :func:`heritage_eval.core.datapath.open_regular`."""
    try:
        with open_regular(path) as fh:
            return read_capped(fh, MAX_EXPORT_IMAGE, f"image {os.fspath(path)}", "file size")
    except CapExceeded as exc:
        log.warning("%s: exported as a null image", exc)
        return None


def arrow_schema(columns: Sequence[Column], meta: dict[str, Any]) -> pa.Schema:
    """The Arrow schema of ``columns`` with the ``huggingface`` feature metadata and
    ``meta`` (JSON) under :data:`META_KEY`."""
    features = {c.name: _HF[c.kind] for c in columns}
    metadata = {HF_META_KEY: json.dumps({"info": {"features": features}}),
                META_KEY: json.dumps(meta, ensure_ascii=False, sort_keys=True)}
    return pa.schema([pa.field(c.name, _ARROW[c.kind]) for c in columns], metadata=metadata)


def card_features(columns: Sequence[Column]) -> list[dict[str, str]]:
    """The ``dataset_info.features`` list of the card's YAML (``name`` plus ``dtype`` or
    ``sequence``)."""
    return [{"name": c.name, **_CARD[c.kind]} for c in columns]


def cell_bytes(value: Any) -> int:
    """Rough in-memory size of one cell in bytes (image bytes, text length), used to cut
    row groups and shards."""
    if value is None:
        return 1
    if isinstance(value, dict):
        return sum(cell_bytes(v) for v in value.values())
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, list):
        return sum(cell_bytes(v) for v in value) + 8
    return 8
