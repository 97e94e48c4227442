"""Read a JSON array from a text file one element at a time (an annotation file).

``json.loads`` of a whole ``*_annotations.json`` holds the file's text and every record
as a dict at once: for 100,000 records about 0.3 GB, for a moment. :func:`iter_json_array`
reads the file in chunks and decodes one element at a time with the standard decoder
(``json.JSONDecoder.raw_decode``), so only a chunk and one element are held.

It accepts exactly what ``json.loads`` accepts *as an array*: anything else (not an
array, a syntax error, trailing data, a decoding error) raises :class:`NotAStreamableArray`
after the elements before it were yielded; the caller then reads the file whole the old
way, which gives the old error message (or, should the two ever disagree, the old result).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO

#: Characters read at a time.
CHUNK = 1 << 18
#: JSON's whitespace (what ``json.loads`` skips around values).
_WHITESPACE = " \t\n\r"
#: What may follow an element of an array.
_AFTER = frozenset(_WHITESPACE + ",]")
_DECODER = json.JSONDecoder()


class NotAStreamableArray(Exception):
    """The text is not one JSON array (or could not be read as one): read it whole."""


class _Buffer:
    """The unread text of ``fh`` from ``pos``; :meth:`more` reads another chunk."""

    def __init__(self, fh: IO[str], chunk: int) -> None:
        self.fh, self.chunk = fh, chunk
        self.text, self.pos, self.eof = "", 0, False

    def more(self) -> bool:
        """Read a chunk (dropping the consumed text); ``False`` at the end of the file."""
        if self.eof:
            return False
        got = self.fh.read(self.chunk)
        if not got:
            self.eof = True
            return False
        self.text = self.text[self.pos:] + got
        self.pos = 0
        return True

    def skip_space(self) -> str:
        """The next non-whitespace character after skipping whitespace ("" at the end)."""
        while True:
            text, pos = self.text, self.pos
            while pos < len(text) and text[pos] in _WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < len(text):
                return text[pos]
            if not self.more():
                return ""

    def value(self) -> object:
        """Decode the value starting at :attr:`pos`, reading more text while it is cut
        off: a value is taken only when what an array element may be followed by
        (whitespace, ``,``, ``]``) follows it, or at the end of the file, so a number
        is never taken cut (``0`` of ``0.5``)."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                if self.more():
                    continue
                raise NotAStreamableArray from None
            if (end < len(self.text) and self.text[end] in _AFTER) or not self.more():
                self.pos = end
                return value


def iter_json_array(fh: IO[str], chunk: int | None = None) -> Iterator[object]:
    """The elements of the JSON array that is the whole text of ``fh``, in order, read
    ``chunk`` characters at a time (default :data:`CHUNK`).

    Raises :class:`NotAStreamableArray` (possibly after some elements) when the text is
    not exactly one JSON array with optional whitespace around it; read errors of ``fh``
    (``OSError``, ``UnicodeDecodeError``) propagate."""
    buf = _Buffer(fh, max(1, CHUNK if chunk is None else chunk))
    if buf.skip_space() != "[":
        raise NotAStreamableArray
    buf.pos += 1
    first = True
    while True:
        nxt = buf.skip_space()
        if nxt == "]":
            buf.pos += 1
            break
        if not first:
            if nxt != ",":
                raise NotAStreamableArray
            buf.pos += 1
            if buf.skip_space() in ("", "]"):  # a trailing comma, or the end
                raise NotAStreamableArray
        elif nxt == "":
            raise NotAStreamableArray
        first = False
        yield buf.value()
    if buf.skip_space() != "":
        raise NotAStreamableArray  # trailing data
