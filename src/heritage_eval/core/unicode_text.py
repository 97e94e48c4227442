"""Lone UTF-16 surrogates in text read from JSON.

JSON may escape a lone surrogate (``"\\ud800"``), which decodes to a Python ``str`` that
cannot be encoded as UTF-8: writing it to ``samples.jsonl`` or the cache would fail. A
surrogate pair decodes to one astral character, so any surrogate code point left in a
decoded string is a lone one.
"""

from __future__ import annotations

import re

_LONE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def lone_surrogate(text: str) -> int | None:
    """Index (0-based, in characters) of the first lone surrogate of ``text``, or ``None``."""
    m = _LONE.search(text)
    return m.start() if m else None


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (one character for one, so an
    edit distance or a character count over the text is unchanged unless the other side
    holds U+FFFD or that same surrogate)."""
    return _LONE.sub(REPLACEMENT, text) if _LONE.search(text) else text


def unusable_file_name(name: str) -> str | None:
    """What makes ``name`` unusable as a file name — ``"a NUL character"`` (``os.stat``
    raises ``ValueError``) or ``"a lone surrogate (U+DCFF)"`` (it cannot be encoded) —
    or ``None``. Loaders turn a reference holding one into that record's data error."""
    if "\x00" in name:
        return "a NUL character"
    at = lone_surrogate(name)
    return None if at is None else f"a lone surrogate (U+{ord(name[at]):04X})"
