"""Line numbers of the elements of a top-level JSON list (for ``file:line`` messages about
an annotation file or a Label Studio export, which are one JSON document each)."""

from __future__ import annotations

import json
from typing import Any

_WS = " \t\n\r"


def read_list_with_lines(text: str) -> tuple[list[Any], list[int]] | None:
    """``(elements, first line of each element)`` of ``text`` when it is a JSON list
    (1-based lines; a byte-order mark is skipped), ``None`` when the top-level value is
    not a list. Raises ``json.JSONDecodeError`` (with ``lineno``) for malformed JSON."""
    text = text.removeprefix("\ufeff")
    value = json.loads(text)  # the error, if any, with Python's own line and column
    if not isinstance(value, list):
        return None
    decoder = json.JSONDecoder()
    lines: list[int] = []
    i = _skip(text, 0) + 1  # past "["
    line = 1 + text.count("\n", 0, i)
    for _ in value:
        j = _skip(text, i)
        if text[j] == ",":
            j = _skip(text, j + 1)
        line += text.count("\n", i, j)
        lines.append(line)
        _, end = decoder.raw_decode(text, j)
        line += text.count("\n", j, end)
        i = end
    return value, lines


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i
