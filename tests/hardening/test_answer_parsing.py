"""Issue 10, items 4–6: answer parsing cases from real bug reports (exact inputs).

Each case names the kind of failure it guards against; the expected values were read by
hand from the answer text (options A–H, one answer per item; ``None`` = unparsed, which
counts wrong and in the invalid rate).
"""

from __future__ import annotations

import pytest

from heritage_eval.core.parsing import fold_width, parse_choice, prepare_answer, strip_markup
from heritage_eval.core.parsing_values import parse_number

LABELS = list("ABCDEFGH")


@pytest.mark.parametrize(("answer", "tag", "expected"), [
    # kind: Chinese answer markers (simplified and traditional) not recognised
    ("答案：B", None, "B"),
    ("我選擇 B", None, "B"),          # traditional 選擇 (was unparsed)
    ("故选C。", None, "C"),
    ("答案為D", None, "D"),           # traditional 為
    # kind: full-width letters not normalised to ASCII (U+FF24 'Ｄ')
    ("答案：Ｄ", None, "D"),
    ("（Ｂ）", None, "B"),
    # kind: two options for a single-answer item read as the first one (was A)
    ("答案：A、C", None, None),
    ("答案：A和C", None, None),
    ("[option] A, C", "option", None),
    ("Answer: C; D", None, None),
    # ... while a comma followed by prose is still one answer
    ("Answer: B, because the robe is red", None, "B"),
    ("答案：B，因为笔画方折", None, "B"),
    # kind: markdown / LaTeX wrappers around the letter
    ("ANSWER: **A**", None, "A"),
    ("ANSWER: $A$", None, "A"),       # was unparsed
    ("**[option] B**", "option", "B"),
    ("[emotion] **H**", "emotion", "H"),
    ("[option] (C)", "option", "C"),
    ("***[option]*** *E*", "option", "E"),  # single-asterisk emphasis (was unparsed)
    ("答案是 $\\boxed{C}$", None, "C"),
    ("$\\boxed{\\text{D}}$", None, "D"),
    # kind: whatever cannot be parsed stays unparsed (never a guessed option)
    ("[option] **Z**", "option", None),
    ("I cannot tell.", None, None),
])
def test_choice_markers_wrappers_and_lists(answer: str, tag: str | None,
                                           expected: str | None) -> None:
    got = parse_choice(answer, LABELS, tag=tag)
    assert got.value == expected, (answer, got)
    if expected is None:
        assert got.reason  # the reason goes into the record


def test_two_options_reason_names_both() -> None:
    # kind: an ambiguous answer must say why it is unparsed, naming both labels
    got = parse_choice("答案：A、C", LABELS)
    assert got.reason == "ambiguous: several options asserted (A, C)"


def test_label_then_other_options_text_is_a_conflict() -> None:
    # kind: "B, Man" (B is Woman) was read as E from the echoed text "Man"
    opts = {"A": "Boy", "B": "Woman", "E": "Man"}
    assert parse_choice("B, Man", list(opts), opts).value is None
    assert parse_choice("B, Woman", list(opts), opts).value == "B"


def test_normalisation_steps_compose() -> None:
    # kind: each step is a small pure function; their order is the documented one
    assert fold_width("答案：Ｄ（３）") == "答案:D(3)"
    assert fold_width("。、") == "。、"  # CJK punctuation outside U+FF01–FF5E unchanged
    assert strip_markup("***[option]*** *E* `F` __G__ $H$") == "[option] E F G H"
    assert prepare_answer("<think>maybe A</think> **Ｂ**") == "B"


@pytest.mark.parametrize(("answer", "expected"), [
    # kind: English number words and a sentence around the count
    ("Three.", 3),
    ("There are 3 figures in the painting.", 3),
    # kind: Chinese numerals and a digit touching a CJK measure word (were unparsed)
    ("三个人", 3),
    ("3个人", 3),
    ("两匹马", 2),
    ("画面中有十二位仕女", 12),
    ("二十三个", 23),
    ("答案：三", 3),
    ("３", 3),                        # full-width digit
    ("Answer: **3**", 3),
    ("画中一共有三个人。", 3),         # 一共 ("altogether") is no number
    ("第三个人", None),                # 第三 is an ordinal ("the third"), not a count
    # kind: a hedge or two counts without a tagged answer must not pick one
    ("three or four", None),
    ("三四个人", None),                # 三四 = "three or four"
    ("3 people and 2 horses", None),
    ("一个人和两匹马", None),
    ("一百个人和三匹马", None),        # 一百 is outside the documented forms: not skipped
    # ... unless a tagged answer names one (the tag's first line decides)
    ("[count] 3\nThere are 3 people and 2 horses.", 3),
    ("[count] 3 people and 2 horses", None),
])
def test_count_rule(answer: str, expected: int | None) -> None:
    got = parse_number(answer, tag="count")
    assert got.value == expected, (answer, got)
    assert got.ok is (expected is not None)


def test_count_reasons() -> None:
    # kind: the unparsed reason tells a reviewer what went wrong
    assert parse_number("three or four").reason == "ambiguous: several numbers (3, 4)"
    assert parse_number("一百个人和三匹马").reason == "unreadable Chinese numeral"
