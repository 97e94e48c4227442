"""Every kind of image that cannot be read, made from a good image (tests of the rule in
:mod:`heritage_eval.core.data_errors`), with the words its error message must hold."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from heritage_eval.core.images import MAX_PIXELS

#: kind -> words the ``ImageLoadError`` message must contain (besides the file's path)
KINDS: dict[str, str] = {
    "missing": "not found",
    "zero_bytes": "empty file (0 bytes)",
    "truncated": "truncated",
    "not_an_image": "not an image",
    "unsupported_format": "not an image, or a format that cannot be read",
    "over_pixel_cap": "decode limit",
}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def over_cap_png(side: int = 30_000) -> bytes:
    """A valid-looking PNG whose header declares ``side`` x ``side`` pixels (9e8 for the
    default, over :data:`MAX_PIXELS`), a few dozen bytes long."""
    assert side * side > MAX_PIXELS
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)  # 8-bit greyscale
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr)
            + _chunk(b"IDAT", zlib.compress(b"\x00")) + _chunk(b"IEND", b""))


def break_image(path: Path, kind: str) -> None:
    """Replace the (good) image at ``path`` by one of :data:`KINDS`: deleted, emptied, cut
    to half its bytes, replaced by text, by an SVG (a real image format Pillow cannot
    read) or by a PNG header declaring 9e8 pixels."""
    good = path.read_bytes()
    if kind == "missing":
        path.unlink()
    elif kind == "zero_bytes":
        path.write_bytes(b"")
    elif kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "not_an_image":
        path.write_text("this is not an image\n", encoding="utf-8")
    elif kind == "unsupported_format":
        path.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8">'
                        '<rect width="8" height="8"/></svg>\n', encoding="utf-8")
    elif kind == "over_pixel_cap":
        path.write_bytes(over_cap_png())
    else:
        raise ValueError(kind)
