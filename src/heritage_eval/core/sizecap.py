"""Size caps: of images sent to a model (:class:`SizeCap`) and of everything read from
outside (a light module: no Pillow import).

Every input whose size the toolkit does not choose itself is read under a named cap
(the rules and defaults are written down in ``docs/limits.md``):

=====================  ===============================  =========  ==============================
cap                    what it bounds                   default    environment variable
=====================  ===============================  =========  ==============================
``max_line_bytes``     one JSONL line / one JSON         64 MiB     HERITAGE_EVAL_MAX_LINE_BYTES
                       prediction file
``max_zip_member``     one zip member, uncompressed      256 MiB    HERITAGE_EVAL_MAX_ZIP_MEMBER
``max_zip_ratio``      uncompressed / compressed size    200        HERITAGE_EVAL_MAX_ZIP_RATIO
                       of one zip member (over 1 MiB)
``max_http_body``      one HTTP response body            64 MiB     HERITAGE_EVAL_MAX_HTTP_BODY
``max_export_image``   one image file put in an export   256 MiB    HERITAGE_EVAL_MAX_EXPORT_IMAGE
``max_png_text``       one PNG text chunk, decompressed  1 MiB      HERITAGE_EVAL_MAX_PNG_TEXT
``max_png_text_total`` all PNG text chunks of one file   64 MiB     HERITAGE_EVAL_MAX_PNG_TEXT_TOTAL
=====================  ===============================  =========  ==============================

A cap is read from its environment variable at each use (a plain number of bytes, or
with a ``KiB``/``MiB``/``GiB`` suffix, ``K``/``M``/``G`` alike, binary units); a value
that is not a positive size is ignored with a warning naming the variable, and the
default holds. Environment variables were chosen over command-line options because the
readers sit below every command (``run``, ``score``, ``report``, ``curate`` …) and the
Python API alike: one setting reaches all of them. Every message of a cap met names the
cap, its value, what was met, and the variable that raises it (:meth:`Cap.message`).
"""

from __future__ import annotations

import logging
import math
import os
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, BinaryIO

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SizeCap:
    """Limit on the size of an image sent to a model.

    ``max_side``: longest side in pixels (``None``: no limit). ``max_pixels``: width x
    height (``None``: no limit). Both may be set; the tighter one wins. Aspect ratio is
    kept; images are never upscaled.
    """

    max_side: int | None = None
    max_pixels: int | None = None

    def target_size(self, width: int, height: int) -> tuple[int, int]:
        """Size after applying the cap to a ``width`` x ``height`` image (pixels)."""
        scale = 1.0
        if self.max_side is not None and max(width, height) > self.max_side:
            scale = min(scale, self.max_side / max(width, height))
        if self.max_pixels is not None and width * height > self.max_pixels:
            scale = min(scale, math.sqrt(self.max_pixels / (width * height)))
        if scale >= 1.0:
            return width, height
        return max(1, int(width * scale)), max(1, int(height * scale))


KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
_SIZE = re.compile(r"^\s*(\d+)\s*(?:([kmg])(?:i?b)?|b)?\s*$", re.IGNORECASE)
_UNIT = {None: 1, "k": KIB, "m": MIB, "g": GIB}
_warned: set[tuple[str, str]] = set()


def parse_size(text: str) -> int | None:
    """``"64MiB"``, ``"64M"``, ``"67108864"``, ``"1 GiB"`` → bytes (binary units,
    case-insensitive); ``None`` for anything else, zero included."""
    m = _SIZE.match(text)
    if m is None:
        return None
    value = int(m.group(1)) * _UNIT[m.group(2).lower() if m.group(2) else None]
    return value if value > 0 else None


def human(n: int | float) -> str:
    """``n`` bytes for a message: ``"67,108,864 bytes (64 MiB)"``; plain below 1 KiB."""
    n = int(n)
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size:
            return f"{n:,} bytes ({n / size:.4g} {unit})"
    return f"{n:,} bytes"


class CapExceeded(Exception):
    """An input met a size cap; the message names the input, the cap, its value, what
    was met and how to raise the cap (:meth:`Cap.message`). ``cap``: the cap's name;
    ``reason``: the message without the input's name (:meth:`Cap.reason`)."""

    def __init__(self, message: str, cap: str, reason: str = "") -> None:
        super().__init__(message)
        self.cap = cap
        self.reason = reason or message


@dataclass(frozen=True)
class Cap:
    """A named size cap: ``name`` (as messages and docs call it), ``env`` (the variable
    that sets it), ``default`` (bytes, or a plain number for a ratio), ``unit``
    (``"bytes"`` or ``"ratio"``)."""

    name: str
    env: str
    default: int
    unit: str = "bytes"

    def value(self) -> int:
        """The cap in force: the environment variable's size when it holds one, else
        the default (an unreadable value is logged once and ignored)."""
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default
        got = parse_size(raw) if self.unit == "bytes" else (
            int(raw) if raw.strip().isdigit() and int(raw) > 0 else None)
        if got is None:
            if (self.env, raw) not in _warned:
                _warned.add((self.env, raw))
                log.warning("%s=%r is not a positive %s; the default %s holds", self.env,
                            raw, "size (e.g. 64MiB)" if self.unit == "bytes" else
                            "whole number", self.show(self.default))
            return self.default
        return got

    def show(self, n: int) -> str:
        """``n`` in this cap's unit, for a message."""
        return human(n) if self.unit == "bytes" else f"{n:,}"

    def reason(self, what: str, met: str, limit: int | None = None) -> str:
        """``"<what> (<met>) is over the <name> cap of <value>; raise it with <ENV>=N
        (see docs/limits.md)"`` (the one wording of every cap met)."""
        limit = self.value() if limit is None else limit
        return (f"{what} ({met}) is over the {self.name} cap of {self.show(limit)}; "
                f"raise it with {self.env}=N (see docs/limits.md)")

    def message(self, where: str, what: str, met: str, limit: int | None = None) -> str:
        """``"<where>: "`` + :meth:`reason`."""
        return f"{where}: {self.reason(what, met, limit)}"

    def exceeded(self, where: str, what: str, met: str, limit: int | None = None
                 ) -> CapExceeded:
        """:class:`CapExceeded` with :meth:`message`."""
        why = self.reason(what, met, limit)
        return CapExceeded(f"{where}: {why}", self.name, why)


MAX_LINE = Cap("max_line_bytes", "HERITAGE_EVAL_MAX_LINE_BYTES", 64 * MIB)
MAX_ZIP_MEMBER = Cap("max_zip_member", "HERITAGE_EVAL_MAX_ZIP_MEMBER", 256 * MIB)
MAX_ZIP_RATIO = Cap("max_zip_ratio", "HERITAGE_EVAL_MAX_ZIP_RATIO", 200, unit="ratio")
#: Members smaller than this are never refused for their compression ratio (a 300 KiB
#: blank scan compresses 1000:1 and is harmless).
ZIP_RATIO_FLOOR = 1 * MIB
MAX_HTTP_BODY = Cap("max_http_body", "HERITAGE_EVAL_MAX_HTTP_BODY", 64 * MIB)
MAX_EXPORT_IMAGE = Cap("max_export_image", "HERITAGE_EVAL_MAX_EXPORT_IMAGE", 256 * MIB)
MAX_PNG_TEXT = Cap("max_png_text", "HERITAGE_EVAL_MAX_PNG_TEXT", 1 * MIB)
MAX_PNG_TEXT_TOTAL = Cap("max_png_text_total", "HERITAGE_EVAL_MAX_PNG_TEXT_TOTAL", 64 * MIB)
CAPS = (MAX_LINE, MAX_ZIP_MEMBER, MAX_ZIP_RATIO, MAX_HTTP_BODY, MAX_EXPORT_IMAGE,
        MAX_PNG_TEXT, MAX_PNG_TEXT_TOTAL)

#: Bytes read at a time while copying, or skipping the rest of an over-long line.
CHUNK = 256 * KIB


@dataclass(frozen=True)
class LongLine:
    """A line over :data:`MAX_LINE`, read past and not kept: ``size`` its length in
    bytes (terminator excluded), ``reason`` what is wrong (:meth:`Cap.reason`),
    ``error`` the same naming ``file:line`` first, ``head`` its first
    :data:`LONG_LINE_HEAD` bytes at most (e.g. to name the record the line was)."""

    size: int
    reason: str
    error: str
    head: bytes = b""


#: Bytes of an over-long line kept in :attr:`LongLine.head`.
LONG_LINE_HEAD = 64 * KIB


def iter_lines(fh: IO[bytes], where: str, limit: int | None = None
               ) -> Iterator[tuple[int, bytes | LongLine]]:
    """``(line number, line)`` for each line of the binary file ``fh`` (numbered from
    1; the ``\\n`` kept, as iterating a file gives it), never holding more than
    ``limit`` (default :data:`MAX_LINE`) + 1 bytes of one line.

    A line longer than ``limit`` bytes (its ``\\n`` not counted) is read past in
    :data:`CHUNK` pieces and given as a :class:`LongLine` whose ``error`` names
    ``where:line``, the cap and the line's full length; the next line follows as usual.
    ``OSError`` from the file propagates."""
    cap = MAX_LINE.value() if limit is None else limit
    lineno = 0
    while True:
        line = fh.readline(cap + 1)
        if not line:
            return
        lineno += 1
        if len(line) <= cap or (line.endswith(b"\n") and len(line) == cap + 1):
            yield lineno, line
            continue
        size, head = len(line), line[:LONG_LINE_HEAD]
        while not line.endswith(b"\n"):
            line = fh.readline(CHUNK)
            if not line:
                break
            size += len(line)
        size -= line.endswith(b"\n")
        why = MAX_LINE.reason("line", human(size), cap)
        yield lineno, LongLine(size, why, f"{where}:{lineno}: {why}", head)


def read_capped(fh: BinaryIO | IO[bytes], cap: Cap, where: str, what: str,
                limit: int | None = None) -> bytes:
    """All of ``fh``, or :class:`CapExceeded` as soon as more than the cap
    (``limit``, default ``cap.value()``) has been read: at most cap + 1 bytes held."""
    top = cap.value() if limit is None else limit
    data = fh.read(top + 1)
    if len(data) > top:
        raise cap.exceeded(where, what, f"more than {human(top)}", top)
    return data


def copy_capped(src: IO[bytes], dst: IO[bytes], cap: Cap, where: str, what: str,
                limit: int | None = None) -> int:
    """Copy ``src`` to ``dst`` in :data:`CHUNK` pieces counting the bytes; raises
    :class:`CapExceeded` as soon as the count passes the cap (``limit``, default
    ``cap.value()``), having written at most cap + :data:`CHUNK` bytes. Returns the
    bytes copied."""
    top = cap.value() if limit is None else limit
    done = 0
    while chunk := src.read(min(CHUNK, top + 1 - done)):
        done += len(chunk)
        if done > top:
            raise cap.exceeded(where, what, f"more than {human(top)}", top)
        dst.write(chunk)
    return done


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")


def png_text_problem(fp: IO[bytes], where: str) -> str | None:
    """Why the PNG file ``fp`` must not be opened for its text chunks, else ``None``
    (also for a file that is not a PNG, or ends early: the decoder judges those).

    Walks the chunk headers (seeking past other chunks: nothing but text is read) and
    refuses a ``tEXt`` / ``zTXt`` / ``iTXt`` chunk whose stored or decompressed text is
    over :data:`MAX_PNG_TEXT`, or text chunks adding up to more than
    :data:`MAX_PNG_TEXT_TOTAL` -- the two limits Pillow applies as
    ``PngImagePlugin.MAX_TEXT_CHUNK`` / ``MAX_TEXT_MEMORY``, checked here first with at
    most one chunk's cap held (decompression is bounded by ``max_length``). Leaves
    ``fp`` at offset 0."""
    one, total = MAX_PNG_TEXT.value(), MAX_PNG_TEXT_TOTAL.value()
    seen = 0
    try:
        fp.seek(0)
        if fp.read(8) != PNG_SIGNATURE:
            return None
        while len(head := fp.read(8)) == 8:
            length, kind = struct.unpack(">I4s", head)
            if kind == b"IEND":
                return None
            if kind not in _TEXT_CHUNKS:
                fp.seek(length + 4, os.SEEK_CUR)
                continue
            name = kind.decode("ascii")
            if length > one:
                return MAX_PNG_TEXT.message(where, f"PNG {name} chunk", f"{human(length)} "
                                            "stored", one)
            size = _text_size(kind, fp.read(length), one)
            if size > one:
                return MAX_PNG_TEXT.message(where, f"PNG {name} chunk", "decompresses to "
                                            f"more than {human(one)}", one)
            seen += size
            if seen > total:
                return MAX_PNG_TEXT_TOTAL.message(where, "PNG text chunks",
                                                  f"{human(seen)} so far", total)
            fp.seek(4, os.SEEK_CUR)
        return None
    finally:
        fp.seek(0)


def _text_size(kind: bytes, data: bytes, limit: int) -> int:
    """Length of the text of one text chunk ``data`` (decompressed; at most ``limit`` +
    1 bytes are produced); a chunk the decoder cannot read counts as its stored size."""
    _key, _, rest = data.partition(b"\0")
    if kind == b"zTXt":
        body = rest[1:]
    elif kind == b"iTXt" and rest[:1] == b"\x01":
        body = rest[2:].split(b"\0", 2)[-1]  # language tag, translated keyword
    else:
        return len(data)
    try:
        return len(zlib.decompressobj().decompress(body, limit + 1))
    except zlib.error:
        return len(data)
