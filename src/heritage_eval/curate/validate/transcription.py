"""Checks of one Ancient-Bench ground-truth transcription against the annotation standard.

The standard is the Ancient-Bench paper's §4.2.2–§4.2.4 (symbol, character and parsing
standardisation, "what you see is what you get"):

- ``□`` (U+25A1) marks a damaged / illegible character (one per character; one for a
  whole region of unknown length in silk manuscripts); other squares are look-alikes;
- ``<unrecognizable>`` marks a character not encoded in Unicode (``<undeciphered>`` is
  the evaluator's second placeholder, ``<space>`` the inter-column spacing mark);
- ``=`` and ``-`` are repetition marks, kept as written;
- ``<note>…</note>`` (marginal annotations) and ``<ignore>…</ignore>`` (centre seam,
  book ears) enclose zones of printed editions: each opened tag is closed, same-name
  tags do not nest;
- line breaks are ``\\n``; the text is traditional / variant forms as written.

:func:`check_transcription` returns ``(level, code, message)`` triples; the empty-GT test
uses the project's normalisation (official protocol,
:mod:`heritage_eval.benchmarks.ancient_bench.normalize`), i.e. what the scorer compares.
Simplified forms are found with OpenCC's character table (``STCharacters.txt`` of
opencc-python-reimplemented, the table behind ``s2t``): a character is reported when
``s2t`` changes it and the table does not list the character itself among its
traditional forms (``于`` → ``於 于`` is a valid traditional character, ``将`` → ``將`` is
not).
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from pathlib import Path

from heritage_eval.benchmarks.ancient_bench.normalize import (
    DROPPED_BLOCK_TAGS,
    KEPT_PUNCTUATION,
    PROTOCOLS,
    SPECIAL_TOKENS,
    normalize_text,
)

Check = tuple[str, str, str]  # (level, code, message)

#: Paired layout tags of §4.2.4 (editions).
PAIRED_TAGS = ("note", "ignore")
#: Single tags of the standard: placeholders and the inter-column spacing mark.
SINGLE_TAGS = (*(t.strip("<>") for t in SPECIAL_TOKENS), "space")
#: The damage placeholder of §4.2.2 and its look-alikes (scored as other characters).
DAMAGE_MARK = "□"
PLACEHOLDER_LOOKALIKES = frozenset("▢☐◻◽⬜▯")
#: Wrong forms of the repetition marks ``=`` / ``-`` and the mark they stand for.
REPETITION_LOOKALIKES = {"＝": "=", "－": "-", "‐": "-", "‑": "-", "–": "-", "—": "-"}
#: Brackets of the double-line interlinear notes in editions (released ground truth).
INTERLINEAR_BRACKETS = frozenset("（）")

_TAG = re.compile(r"<(/?)([A-Za-z_]+)>")
_OFFICIAL = PROTOCOLS["official"]


def check_transcription(text: str) -> list[Check]:
    """Every problem of ``text`` (module doc): errors ``gt-empty``, ``tag-unknown``,
    ``tag-unbalanced``, ``tag-nested``; warnings ``placeholder-form``,
    ``repetition-mark-form``, ``stray-angle-bracket``, ``stray-punctuation``,
    ``escaped-newline``, ``simplified-form``."""
    out: list[Check] = []
    if not normalize_text(text, _OFFICIAL).strip():
        out.append(("error", "gt-empty", "ground truth is empty after the evaluator's "
                    "normalisation (tags <note>/<ignore> removed, punctuation and "
                    f"whitespace dropped): {text[:40]!r}"))
    out += _tags(text)
    rest = _TAG.sub("", text)  # text outside tags
    if "<" in rest or ">" in rest:
        out.append(("warning", "stray-angle-bracket", "'<' or '>' outside a tag of the "
                    "standard (the evaluator keeps it, so it is scored as a character)"))
    looks = sorted({c for c in rest if c in PLACEHOLDER_LOOKALIKES})
    if looks:
        out.append(("warning", "placeholder-form", f"{_names(looks)}: the damage "
                    f"placeholder is {DAMAGE_MARK} (U+25A1, §4.2.2); a look-alike is "
                    "scored as a different character"))
    reps = sorted({c for c in rest if c in REPETITION_LOOKALIKES})
    if reps:
        forms = ", ".join(f"{_name(c)} for {REPETITION_LOOKALIKES[c]!r}" for c in reps)
        out.append(("warning", "repetition-mark-form", f"{forms}: repetition marks are "
                    "written '=' and '-' (§4.2.2; the evaluator keeps only these)"))
    stray = sorted({c for c in rest if unicodedata.category(c).startswith("P")
                    and c not in KEPT_PUNCTUATION and c not in INTERLINEAR_BRACKETS
                    and c not in REPETITION_LOOKALIKES})
    if stray:
        out.append(("warning", "stray-punctuation", f"punctuation {_names(stray)} is not an "
                    "annotation symbol of the standard (WYSIWYG: only marks carved or "
                    "written on the artifact); the evaluator drops it"))
    if "\\n" in text:
        out.append(("warning", "escaped-newline", "literal backslash-n ('\\\\n') in the "
                    "text: a line break escaped twice? Line breaks are real newlines"))
    simplified = simplified_forms(rest)
    if simplified:
        pairs = ", ".join(f"{c}→{'/'.join(t)}" for c, t in simplified.items())
        out.append(("warning", "simplified-form", f"simplified form(s) in a traditional "
                    f"transcription: {pairs} (OpenCC s2t); keep only if the artifact "
                    "writes them so"))
    return out


def _tags(text: str) -> list[Check]:
    out: list[Check] = []
    known = set(PAIRED_TAGS) | set(SINGLE_TAGS)
    stack: list[str] = []
    for m in _TAG.finditer(text):
        closing, name = m.group(1) == "/", m.group(2)
        if name not in known or (closing and name in SINGLE_TAGS):
            out.append(("error", "tag-unknown", _unknown_tag(m.group(0), name, known)))
        elif name in PAIRED_TAGS and not closing:
            if name in stack:
                out.append(("error", "tag-nested", f"<{name}> opened again inside "
                            f"<{name}> (column {m.start() + 1} of the text)"))
            stack.append(name)
        elif name in PAIRED_TAGS:
            if not stack or stack[-1] != name:
                where = f"inside <{stack[-1]}>" if stack else "without an opening tag"
                out.append(("error", "tag-unbalanced", f"</{name}> {where} (column "
                            f"{m.start() + 1} of the text)"))
                if name in stack:
                    del stack[len(stack) - 1 - stack[::-1].index(name):]
            else:
                stack.pop()
    for name in stack:
        out.append(("error", "tag-unbalanced", f"<{name}> is never closed"))
    return out


def _unknown_tag(tag: str, name: str, known: set[str]) -> str:
    if name in DROPPED_BLOCK_TAGS:
        return (f"{tag}: a tag the evaluator removes from predictions only; in ground "
                "truth it is scored as characters")
    guess = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f" (did you mean <{guess[0]}>?)" if guess else ""
    return (f"{tag} is not a tag of the standard{hint}; known: "
            + ", ".join(f"<{t}>" for t in (*SINGLE_TAGS, *PAIRED_TAGS)))


def _name(c: str) -> str:
    return f"'{c}' (U+{ord(c):04X})"


def _names(chars: list[str]) -> str:
    return ", ".join(_name(c) for c in chars)


@functools.cache
def _st_table() -> dict[str, tuple[str, ...]]:
    """OpenCC's simplified → traditional candidates, one entry per character."""
    import opencc

    path = Path(opencc.__file__).parent / "dictionary" / "STCharacters.txt"
    table: dict[str, tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, _, values = line.partition("\t")
        if key and values:
            table[key] = tuple(values.split())
    return table


def simplified_forms(text: str) -> dict[str, tuple[str, ...]]:
    """Characters of ``text`` that are simplified-only forms, in order of first
    appearance, each with its traditional forms (module doc)."""
    table = _st_table()
    out: dict[str, tuple[str, ...]] = {}
    for c in text:
        forms = table.get(c)
        if forms and c not in forms and c not in out:
            out[c] = forms
    return out
