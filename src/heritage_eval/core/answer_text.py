"""Answer text before parsing: reasoning blocks dropped, markup and LaTeX wrappers
removed, full-width characters folded (used by :mod:`heritage_eval.core.parsing` and
:mod:`heritage_eval.core.parsing_values`; the rule is written down in
``docs/answer-extraction.md``)."""

from __future__ import annotations

import re

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
    """Drop reasoning (:func:`drop_reasoning`), code fences and markdown emphasis; strip.

    Used for open answers (descriptions) as they are; label and number answers go through
    :func:`prepare_answer`, which adds the steps below.
    """
    text = drop_reasoning(text)
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
_LIST_PREFIX = re.compile(r"(?m)^[ \t]*(?:(?:>[ \t]*)+|[-+•·][ \t]+|\d{1,2}[.)][ \t]+)")


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
    """Remove block-quote, bullet and numbered-item prefixes at line starts (``> B``,
    ``- B``, ``1. B``); applied to label answers only (:func:`prepare_choice`)."""
    return _LIST_PREFIX.sub("", text)


def prepare_answer(text: str) -> str:
    """The text label and number parsers read: reasoning dropped (:func:`drop_reasoning`),
    then :func:`fold_width` (so full-width markup, ``＊＊Ｂ＊＊``, is markup too), then
    :func:`strip_markup`, stripped."""
    return strip_markup(fold_width(drop_reasoning(text))).strip()


def prepare_choice(text: str) -> str:
    """:func:`prepare_answer` plus :func:`strip_list_prefix`: what the label parser reads."""
    return strip_list_prefix(prepare_answer(text)).strip()


def normalize_text(text: str) -> str:
    """Case-folded text with collapsed whitespace and outer punctuation/quotes removed."""
    text = re.sub(r"\s+", " ", fold_width(text).casefold()).strip()
    return text.strip(" \t.,;:!?\"'“”‘’()[]{}<>-–—*_。，：；！？")
