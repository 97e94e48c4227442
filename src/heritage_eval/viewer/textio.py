"""Writing the site's text files so that no text from a run can stop the build.

Text read from a run (a model name, a sample id, a file name) may hold a lone UTF-16
surrogate: JSON allows the escape ``"\\udc80"``, and :func:`os.fsdecode` turns a file name
that is not valid UTF-8 into one. Such text cannot be encoded as UTF-8 as it is, so every
text file of the site is written through this module:

- HTML and JavaScript (:func:`encode_text`, :func:`write_text`): a lone surrogate is
  written as its ``\\uXXXX`` escape; inside a JavaScript string that is the same
  character, in HTML it shows as that text.
- the list of originals the server may send (:func:`encode_path_line`): a file name's
  own bytes (``surrogateescape``), so the line names the file; a surrogate no file name
  can hold as its ``\\uXXXX`` escape.
"""

from __future__ import annotations

from pathlib import Path


def encode_text(text: str) -> bytes:
    """``text`` as UTF-8, each lone surrogate as its ``\\uXXXX`` escape (6 ASCII bytes)."""
    return text.encode("utf-8", "backslashreplace")


def write_text(path: Path, text: str) -> int:
    """Write ``text`` to ``path`` with :func:`encode_text`; returns the size in bytes.
    Raises :class:`OSError` when the file cannot be written."""
    data = encode_text(text)
    path.write_bytes(data)
    return len(data)


def encode_path_line(path: str) -> bytes:
    """``path`` and a newline as bytes: the file name's own bytes where it came from
    :func:`os.fsdecode`, else UTF-8 with ``\\uXXXX`` escapes."""
    try:
        return path.encode("utf-8", "surrogateescape") + b"\n"
    except UnicodeEncodeError:
        return encode_text(path) + b"\n"


def decode_path_line(line: bytes) -> str:
    """The inverse of :func:`encode_path_line` for a file name (newline stripped)."""
    return line.rstrip(b"\n").decode("utf-8", "surrogateescape")
