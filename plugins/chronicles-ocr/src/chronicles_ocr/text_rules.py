"""Text rules shared by the answer readers and the judges, as the official code applies
them (Chronicles-OCR, ``Opensource/prompts/_text.py``, ``judges/_text.py``,
``utils/unk.py``); written here from their behaviour, not copied.

Answer side:

- :func:`final_answer` keeps the final answer of a reasoning model: the body of an
  ``<answer>…</answer>`` pair when there is one; else what follows the last closing
  ``</think>`` / ``</thinking>`` / ``</reasoning>`` tag; else, with an opening tag and no
  closing one, what precedes it (``""`` when nothing does); else the whole text. Tags are
  matched case-insensitively and may hold spaces (``< /think >``).
- :func:`unfence` removes one Markdown code fence around the whole text, or else
  backticks at both ends.
- :func:`clean` unfences, then strips spaces and the marks ``。.；;，,"'“”‘’`` at both
  ends.
- :func:`after_prefix` reads the answer written after ``PREFIX:`` / ``PREFIX：`` (the
  last such prefix in the text wins), see its docstring.

Judge side:

- :func:`squeeze` drops the two-character sequence backslash + ``n``, backslash +
  newline, and every space, U+3000, tab, CR and LF; :func:`squeeze_punct` then also drops
  the ASCII punctuation and the Chinese marks of :data:`PUNCT`.
- ``[UNK]`` forms: :func:`is_unk` (a single-character field meaning "unreadable");
  :func:`drop_unk` (removes ``[UNK]`` / ``<UNK>`` in any case and the block placeholders
  □ ■ ▢ ◻ ◼ from a text).
"""

from __future__ import annotations

import re

_ANSWER = re.compile(r"<\s*answer\s*>([\s\S]*?)<\s*/\s*answer\s*>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*(?:think|thinking|reasoning)\s*>", re.IGNORECASE)
_OPEN = re.compile(r"<\s*(?:think|thinking|reasoning)\s*>", re.IGNORECASE)
_LEAD_ANSWER = re.compile(r"^\s*<\s*answer\s*>\s*", re.IGNORECASE)
_TRAIL_ANSWER = re.compile(r"\s*<\s*/?\s*answer\s*>\s*$", re.IGNORECASE)
_FENCED = re.compile(r"^`{3,}[^\n`]*\n?(.*?)\n?`{3,}\s*$", re.DOTALL)
_FENCE_HEAD = re.compile(r"^`{3,}[^\n`]*")
_FENCE_CLOSE = re.compile(r"\n?`{3,}\s*(\n|$)")
#: a line that starts another answer field: ends a multi-line value (anchored)
_NEXT_FIELD = re.compile(
    r"^(?:字体分类|字体|分类|提取文本|提取结果|识别结果|识别文本|文本)\s*[:：]")
_EDGE_MARKS = "。.；;，,\"'“”‘’"

#: punctuation removed before the parsing score: ASCII punctuation and Chinese marks
PUNCT = (r"""!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"""
         "，。、；：「」『』（）【】〔〕〈〉《》！？…—–·．“”‘’〝〞"
         "￥％＃＆＊＠／＼｜＋－＝＿～｀＾")
_NO_PUNCT = str.maketrans("", "", PUNCT)
#: block characters standing for an unreadable character
UNK_BLOCKS = frozenset("\u25a1\u25a0\u25a2\u25fb\u25fc")  # □ ■ ▢ ◻ ◼
#: whole-field spellings of an unreadable character (compared lower-cased)
UNK_WORDS = frozenset({"[unk]", "<unk>", "unk"})
_UNK_IN_TEXT = re.compile(r"\[UNK\]|<UNK>|[" + "".join(sorted(UNK_BLOCKS)) + "]",
                          re.IGNORECASE)


def final_answer(text: str | None) -> str:
    """The final answer in ``text`` (module docstring), stripped."""
    if not text:
        return ""
    found = _ANSWER.search(text)
    if found:
        return found.group(1).strip()
    closes = list(_CLOSE.finditer(text))
    if closes:
        tail = text[closes[-1].end():].strip()
        tail = _TRAIL_ANSWER.sub("", _LEAD_ANSWER.sub("", tail))
        return tail.strip()
    opened = _OPEN.search(text)
    if opened:
        return text[:opened.start()].strip()
    return text.strip()


def unfence(text: str | None) -> str:
    """``text`` without one code fence around it (or backticks at its ends), stripped."""
    if text is None:
        return ""
    text = text.strip()
    fenced = _FENCED.match(text)
    return fenced.group(1).strip() if fenced else text.strip("`").strip()


def clean(text: str | None) -> str:
    """``text`` unfenced, with spaces and the marks ``。.；;，,"'“”‘’`` cut at both ends."""
    if not text:
        return ""
    return unfence(text).strip().strip(_EDGE_MARKS).strip()


def _bare(line: str) -> str:
    return line.strip().strip("`").strip()


def after_prefix(text: str, prefixes: list[str] | tuple[str, ...],
                 multiline: bool = False) -> str:
    """The value written after the last ``PREFIX`` + optional spaces + ``:``/``：`` in
    ``text`` (any of ``prefixes``; ``""`` when none occurs).

    When the rest of that line holds text (and does not open a code fence), the value is
    that text, :func:`clean`-ed; with ``multiline`` the following non-empty lines are
    added too (each cleaned, or kept as is when cleaning empties it; backticks and
    spaces at their ends dropped), up to a line that starts another answer field
    (``字体分类:``, ``提取文本:`` …), joined by newlines. Otherwise (the prefix ends its
    line, or a fence opens there) the value is the following lines — up to the closing
    fence when one was opened — without empty ones: one line is cleaned, several are
    each cleaned (or kept) and joined by newlines.
    """
    if not text:
        return ""
    head = re.compile("(?:" + "|".join(re.escape(p) for p in prefixes) + r")\s*[:：]")
    hits = list(head.finditer(text))
    if not hits:
        return ""
    first, _, rest = text[hits[-1].end():].partition("\n")
    first = first.strip()
    opens_fence = bool(re.match(r"^`{3,}", first))
    first_value = _FENCE_HEAD.sub("", first).strip("` ").strip()
    if not opens_fence and first_value:
        if not multiline:
            return clean(first_value)
        follow: list[str] = []
        for line in rest.splitlines():
            bare = _bare(line)
            if not bare:
                continue
            if _NEXT_FIELD.search(bare):
                break
            follow.append(bare)
        lead = clean(first_value)
        if not follow:
            return lead
        return "\n".join([lead, *(clean(x) or x for x in follow)]).strip()
    body = rest
    if opens_fence:
        closing = _FENCE_CLOSE.search(rest)
        if closing:
            body = rest[:closing.start()]
    lines = [b for b in (_bare(x) for x in body.splitlines()) if b]
    if not lines:
        return ""
    if len(lines) == 1:
        return clean(lines[0])
    return "\n".join(clean(x) or x for x in lines).strip()


def squeeze(text: str | None) -> str:
    """``text`` without literal ``\\n`` escapes and whitespace (module docstring)."""
    if not text:
        return ""
    text = text.replace("\\n", "").replace("\\\n", "")
    for gap in (" ", "\u3000", "\t", "\r", "\n"):
        text = text.replace(gap, "")
    return text


def squeeze_punct(text: str | None) -> str:
    """:func:`squeeze`, then every character of :data:`PUNCT` removed."""
    return squeeze(text).translate(_NO_PUNCT)


def is_unk(field: str | None) -> bool:
    """True when a one-character field means "unreadable": empty or blank, ``[UNK]`` /
    ``<UNK>`` / ``UNK`` in any case (spaces around ignored), or only block
    placeholders."""
    if not field or not field.strip():
        return True
    bare = field.strip()
    return bare.lower() in UNK_WORDS or all(c in UNK_BLOCKS for c in bare)


def drop_unk(text: str | None) -> str:
    """``text`` without ``[UNK]`` / ``<UNK>`` (any case) and block placeholders. A bare
    ``UNK`` is kept (the official rule lists only the bracketed forms)."""
    if not text:
        return ""
    return _UNK_IN_TEXT.sub("", text)
