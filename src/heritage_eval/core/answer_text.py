"""Answer text before parsing: reasoning blocks dropped, markup and LaTeX wrappers
removed, full-width characters folded (used by :mod:`heritage_eval.core.parsing` and
:mod:`heritage_eval.core.parsing_values`; the rule is written down in
``docs/answer-extraction.md``)."""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_THINK_OPEN = re.compile(r"<think>", re.I)
_THINK_CLOSE = re.compile(r"</think>", re.I)
_EMPH = re.compile(r"\*\*|__|`")


def drop_reasoning(text: str) -> str:
    """``text`` without reasoning: every ``<think>…</think>`` block, then an unclosed
    ``<think>`` with everything after it (a cut-off reasoning block), then everything up
    to a stray ``</think>`` (a reply whose opening tag was removed upstream). Reasoning
    is never the answer."""
    text = _THINK.sub(" ", text or "")
    if m := _THINK_OPEN.search(text):
        text = text[:m.start()]
    parts = _THINK_CLOSE.split(text)
    return parts[-1]


def clean_answer(text: str) -> str:
    """Drop reasoning (:func:`drop_reasoning`), invisible characters
    (:func:`drop_format_chars`: format characters such as U+200B, variation selectors),
    code fences and markdown emphasis; strip. An answer of only invisible characters is
    empty.

    Used for open answers (descriptions) as they are; label and number answers go through
    :func:`prepare_answer`, which adds the steps below.
    """
    text = drop_format_chars(drop_reasoning(text))
    text = re.sub(r"```[a-zA-Z]*", " ", text)
    return _EMPH.sub("", text).strip()


# Composable normalisation steps for label / number answers (applied in this order by
# prepare_answer; each is a pure str -> str function, so a new wrapper is one more step).
_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
#: CJK corner / lenticular brackets read as square brackets around a label (【B】).
_BRACKETS = str.maketrans("【〔〖［「『】〕〗］」』", "[[[[[[]]]]]]")
_LATEX_CMD = re.compile(r"\\(?:boxed|text|textbf|textit|textrm|textsf|texttt|mathrm|mathbf|"
                        r"mathit|mathsf|fbox|emph|underline|operatorname)\s*\{([^{}]*)\}")
#: LaTeX inline / display math delimiters ``\(``, ``\)``, ``\[``, ``\]``.
_LATEX_DELIM = re.compile(r"\\[()\[\]]")
#: Markdown headings (``## B``), for labels and numbers alike.
_HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+")
#: Markdown block quotes (``> B``, ``>> B``), bullets (``- B``, ``+ B``, ``• B``; ``* B``
#: loses its star with the emphasis) and numbered items (``1. B``, ``2) B``): labels only,
#: since ``> 3`` and ``- 3`` mean something in a count.
#: Symbol and emoji prefixes (``✅ B``, ``👉 B``, ``→ B``, ``★ B``) count as bullets; the
#: negative marks ``❌ ❎ ✕ ✖ ✗ ✘ ⛔ 🚫 👎`` do not (``❌ A`` declares nothing).
_NEGATIVE_MARKS = "❌❎✕✖✗✘⛔🚫👎"
_SYMBOLS = ("\u2190-\u21ff\u2300-\u23ff\u25a0-\u27bf\u27f0-\u27ff\u2900-\u297f"
            "\u2b00-\u2bff\U0001f300-\U0001faff")
_LIST_PREFIX = re.compile(r"(?m)^[ \t]*(?:(?:>[ \t]*)+|[-+•·][ \t]+|\d{1,2}[.)][ \t]+|"
                          rf"(?:(?![{_NEGATIVE_MARKS}])[{_SYMBOLS}])+[ \t]*)")


#: Variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF) and Mongolian free variation
#: selectors (U+180B–U+180D, U+180F): category Mn, but invisible like the format characters.
_VARIATION_SELECTORS = "\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef"


@cache
def _invisible() -> re.Pattern[str]:
    """One character class of every format character (general category Cf in the
    interpreter's Unicode database) and every variation selector; built once, on first
    use (a scan of all code points, about 0.15 s)."""
    cf = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    ranges: list[tuple[int, int]] = []
    for c in cf:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    body = "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "")
                   for a, b in ranges)
    return re.compile(f"[{body}{_VARIATION_SELECTORS}]+")


def drop_format_chars(text: str) -> str:
    """``text`` without invisible characters: every Unicode format character (general
    category Cf — zero-width space U+200B, ZWNJ/ZWJ U+200C/U+200D, the marks U+200E/U+200F,
    embeddings and isolates U+202A–U+202E / U+2066–U+2069, word joiner U+2060, BOM U+FEFF,
    soft hyphen U+00AD, tag characters …) and every variation selector (U+FE0F …). They
    change nothing a reader sees, so they must change nothing the parser reads: ``Answer:
    \\u200bB`` is ``Answer: B``. ASCII text is returned as it is."""
    return text if text.isascii() else _invisible().sub("", text)


#: Quotation marks read as wrappers around a lone label (``"B"``, ``'B'``, ``“B”``,
#: ``«B»``, ``‹B›``, ``„B“``, ``《B》``); CJK corner brackets are folded to ``[]`` before.
_QUOTES = "'\"‘’‚‛“”„‟«»‹›〝〞〟《》〈〉"
_QUOTED_LABEL = re.compile(rf"(?<![A-Za-z0-9])[{_QUOTES}][ \t]*([^\W_]{{1,2}})[ \t]*"
                           rf"[{_QUOTES}](?![A-Za-z0-9])")


def unquote_labels(text: str) -> str:
    """Quotation marks around a lone label (one or two letters or digits) removed:
    ``Answer: "B"`` → ``Answer: B``, ``选“C”`` → ``选C``. An opening quote right after an
    ASCII letter or digit (``isn't``) or a closing one right before one opens / closes
    nothing.
    Applied to label answers only (:func:`prepare_choice`)."""
    return _QUOTED_LABEL.sub(r"\1", text)


def fold_width(text: str) -> str:
    """Full-width ASCII forms (U+FF01–U+FF5E: ``Ｄ``, ``３``, ``：``, ``（``) to ASCII, the
    ideographic space to a space and CJK brackets (``【】〔〕〖〗「」『』``) to ``[]``; other
    characters (``。``, ``、``, CJK) unchanged."""
    return text.translate(_WIDTH).translate(_BRACKETS)


def strip_markup(text: str) -> str:
    """Remove markdown and LaTeX wrappers around a label or number, keeping the content.

    ``**A**``, ``*E*``, ``***[option]***``, ``__B__``, `` `C` `` (emphasis and code),
    ``$A$``, ``$\\text{B}$``, ``\\boxed{C}``, ``\\textbf{D}``, ``\\(E\\)`` (LaTeX), and
    markdown headings (``## B``). Every ``*`` and ``$`` is dropped:
    neither is meaningful in a label or count answer.
    """
    for _ in range(3):  # nested commands: \boxed{\text{A}}
        text = _LATEX_CMD.sub(r"\1", text)
    text = _LATEX_DELIM.sub(" ", text)
    text = re.sub(r"```[a-zA-Z]*", " ", text)
    text = re.sub(r"[*$`]+|__", "", text)
    return _HEADING.sub("", text)


def strip_list_prefix(text: str) -> str:
    """Remove block-quote, bullet, numbered-item and symbol / emoji prefixes at line starts
    (``> B``, ``- B``, ``1. B``, ``✅ B``, ``👉 B``; not a negative mark such as ``❌``);
    applied to label answers only (:func:`prepare_choice`)."""
    return _LIST_PREFIX.sub("", text)


def prepare_answer(text: str) -> str:
    """The text label and number parsers read: invisible characters dropped
    (:func:`drop_format_chars`), reasoning dropped (:func:`drop_reasoning`), then
    :func:`fold_width` (so full-width markup, ``＊＊Ｂ＊＊``, is markup too), then
    :func:`strip_markup`, stripped."""
    return strip_markup(fold_width(drop_reasoning(drop_format_chars(text or "")))).strip()


def prepare_choice(text: str) -> str:
    """:func:`prepare_answer`, :func:`strip_list_prefix` and :func:`unquote_labels`: what
    the label parser reads."""
    return unquote_labels(strip_list_prefix(prepare_answer(text))).strip()


def normalize_text(text: str) -> str:
    """Case-folded text with invisible characters (:func:`drop_format_chars`) dropped,
    collapsed whitespace and outer punctuation/quotes removed."""
    text = re.sub(r"\s+", " ", fold_width(drop_format_chars(text)).casefold()).strip()
    return text.strip(" \t.,;:!?\"'“”‘’()[]{}<>-–—*_。，：；！？")
