"""The prompt, and reading the model's candidates back from its answer.

Rule: when the answer has a colon (``:`` or ``：``, as in ``Answer: 人`` or ``答：人``),
only the text after the last one is read; from that text, the CJK ideographs are the
candidates, in order, each kept once at its first place, at most ``k``. An answer with no
ideograph is ``unparsed`` (wrong, and counted in the invalid rate).
"""

from __future__ import annotations

import unicodedata

PROMPT_1 = ("This image shows one character of early Chinese writing, as on an "
            "oracle-bone rubbing. Which modern Chinese character is it? Answer with the "
            "character only.")
PROMPT_K = ("This image shows one character of early Chinese writing, as on an "
            "oracle-bone rubbing. Which modern Chinese character is it? Answer with {k} "
            "candidate characters, most likely first, separated by spaces, and nothing "
            "else.")


def prompt(k: int) -> str:
    """The prompt asking for ``k`` candidates (``k >= 1``)."""
    return PROMPT_1 if k == 1 else PROMPT_K.format(k=k)


def is_ideograph(char: str) -> bool:
    """True for a CJK unified or compatibility ideograph (any plane)."""
    return unicodedata.name(char, "").startswith(("CJK UNIFIED IDEOGRAPH",
                                                  "CJK COMPATIBILITY IDEOGRAPH"))


def candidates(text: str, k: int) -> list[str]:
    """The model's first ``k`` distinct candidate characters in ``text`` (module rule)."""
    cut = max(text.rfind(":"), text.rfind("："))
    tail = text[cut + 1:] if cut >= 0 else text
    found = dict.fromkeys(c for c in tail if is_ideograph(c))
    return list(found)[:k]
