"""Open answers (parse_tagged, clean_answer) read past invisible characters, as label
answers already did: a format character (Unicode category Cf) or a variation selector
changes nothing a reader sees, so it changes nothing parsed (docs/answer-extraction.md).
Kind: zero-width spaces, joiners, BOMs, bidi marks and selectors anywhere in the answer;
an answer made only of them is empty (unparsed), never an answer to embed."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.core.answer_text import clean_answer
from heritage_eval.core.parsing import parse_tagged

# every Cf code point of the BMP that is not a surrogate, plus the variation selectors
INVISIBLE = [chr(c) for c in range(0x10000) if unicodedata.category(chr(c)) == "Cf"] + \
    [chr(c) for c in range(0xFE00, 0xFE10)]
ANSWERS = ["[visual clues] the raised brows and open mouth",
           "[visual clues] 眉头紧锁，嘴角下垂", "the figure leans forward",
           "[emotion] Joy", "[visual clues]", ""]


def _sprinkle(text: str, marks: list[str], where: list[int]) -> str:
    out = list(text)
    for mark, pos in zip(marks, where, strict=False):
        out.insert(pos % (len(out) + 1), mark)
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(answer=st.sampled_from(ANSWERS),
       marks=st.lists(st.sampled_from(INVISIBLE), min_size=1, max_size=6),
       where=st.lists(st.integers(0, 200), min_size=6, max_size=6))
def test_invisible_characters_change_nothing_parsed(answer: str, marks: list[str],
                                                    where: list[int]) -> None:
    noisy = _sprinkle(answer, marks, where)
    assert parse_tagged(noisy, "visual clues") == parse_tagged(answer, "visual clues")
    assert clean_answer(noisy) == clean_answer(answer)


def test_only_invisible_characters_is_an_empty_answer() -> None:
    # hand-made: ZWSP + word joiner + BOM + VS16 reads as nothing at all
    parsed = parse_tagged("\u200b\u2060\ufeff\ufe0f", "visual clues")
    assert parsed.value is None and parsed.reason == "empty response"
