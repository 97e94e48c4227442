"""Answer text before parsing: reasoning blocks dropped, markup and LaTeX wrappers
removed, full-width characters folded (used by :mod:`heritage_eval.core.parsing` and
:mod:`heritage_eval.core.parsing_values`)."""

from __future__ import annotations

import re

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_EMPH = re.compile(r"\*\*|__|`")


def clean_answer(text: str) -> str:
    """Drop ``<think>…</think>`` blocks, code fences and markdown emphasis; strip.

    Used for open answers (descriptions) as they are; label and number answers go through
    :func:`prepare_answer`, which adds the steps below.
    """
    text = _THINK.sub(" ", text or "")
    text = re.sub(r"```[a-zA-Z]*", " ", text)
    return _EMPH.sub("", text).strip()


# Composable normalisation steps for label / number answers (applied in this order by
# prepare_answer; each is a pure str -> str function, so a new wrapper is one more step).
_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_LATEX_CMD = re.compile(r"\\(?:boxed|text|textbf|textrm|mathrm|mathbf|fbox)\s*\{([^{}]*)\}")


def fold_width(text: str) -> str:
    """Full-width ASCII forms (U+FF01–U+FF5E: ``Ｄ``, ``３``, ``：``, ``（``) to ASCII and
    the ideographic space to a space; other characters (``。``, ``、``, CJK) unchanged."""
    return text.translate(_WIDTH)


def strip_markup(text: str) -> str:
    """Remove markdown and LaTeX wrappers around a label or number, keeping the content.

    ``**A**``, ``*E*``, ``***[option]***``, ``__B__``, `` `C` `` (emphasis and code),
    ``$A$``, ``$\\text{B}$``, ``\\boxed{C}`` (LaTeX). Every ``*`` and ``$`` is dropped:
    neither is meaningful in a label or count answer.
    """
    for _ in range(3):  # nested commands: \boxed{\text{A}}
        text = _LATEX_CMD.sub(r"\1", text)
    text = re.sub(r"```[a-zA-Z]*", " ", text)
    return re.sub(r"[*$`]+|__", "", text)


def prepare_answer(text: str) -> str:
    """The text label and number parsers read: reasoning dropped (``<think>`` blocks),
    then :func:`strip_markup`, then :func:`fold_width`, stripped."""
    return fold_width(strip_markup(_THINK.sub(" ", text or ""))).strip()


def normalize_text(text: str) -> str:
    """Case-folded text with collapsed whitespace and outer punctuation/quotes removed."""
    text = re.sub(r"\s+", " ", fold_width(text).casefold()).strip()
    return text.strip(" \t.,;:!?\"'“”‘’()[]{}<>-–—*_。，：；！？")


# ---------------------------------------------------------------- multiple choice
