"""Neighbours of the documented answer forms (docs/answer-extraction.md), generated.

Invisible format characters, quoted labels, trailing phrasings ("B is the answer", "So,
C."), labels outside the offered set, operator-suffixed labels ("A+") and count forms
(Unicode digits, thousands commas, fractions, "3+", the count maximum). As in
``test_parsing_kinds``, every expected value is known by construction.
"""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from heritage_eval.core import parsing_base as pb
from heritage_eval.core.parsing import MAX_COUNT, parse_choice, parse_number
from tests.core.test_parsing_kinds import (
    LABELS,
    MARKERS,
    REASONING,
    SETTINGS,
    TEXTS,
    declaration,
    one_declared,
)

# Invisible characters: every format character (Cf, from hypothesis's own Unicode tables)
# and the variation selectors, which are Mn but invisible (Unicode's definition).
INVISIBLE = st.one_of(
    st.characters(categories=["Cf"]),
    st.sampled_from([chr(c) for c in (*range(0xFE00, 0xFE10), 0xE0100, 0xE01EF, 0x180B)]))


@given(one_declared(), st.lists(st.tuples(st.integers(0, 10**6), INVISIBLE), max_size=6))
@SETTINGS
def test_invisible_characters_change_nothing(case: tuple[str, str],
                                             inserts: list[tuple[int, str]]) -> None:
    # rule 1 (normalisation): format characters and variation selectors are removed first,
    # wherever they stand (inside the marker, between marker and label, around the label)
    text, label = case
    for where, char in inserts:
        i = where % (len(text) + 1)
        text = text[:i] + char + text[i:]
    got = parse_choice(text, LABELS, TEXTS, tag="option")
    assert (got.value, got.reason, got.flags) == (label, None, ()), (ascii(text), got)


SUFFIXES = [" is the answer", " is the answer.", " is my answer.", " is the correct answer",
            " is my final answer", "项", "項", "选项"]
CONCLUSIONS = ["So, {}.", "So {}.", "Therefore {}", "Therefore, {}.", "Thus {}.", "Hence {}",
               "So, {}. The strokes agree."]
PLAIN_WRAPPERS = ["{}", "({})", "**{}**", '"{}"', "“{}”", "「{}」"]


@given(st.sampled_from(LABELS), st.sampled_from(PLAIN_WRAPPERS),
       st.one_of(st.sampled_from(SUFFIXES).map(lambda s: "{}" + s),
                 st.sampled_from(CONCLUSIONS)),
       st.lists(st.sampled_from(REASONING), max_size=2))
@SETTINGS
def test_trailing_and_conclusion_phrasings(label: str, wrapper: str, form: str,
                                           why: list[str]) -> None:
    # rule 2 (levels): "B is the answer", "C项", a conclusion line "So, C." declare C
    text = "\n".join([*why, form.format(wrapper.format(label))])
    got = parse_choice(text, LABELS, TEXTS, tag="option")
    assert (got.value, got.reason, got.flags) == (label, None, ()), (text, got)


@given(st.sampled_from(LABELS), st.sampled_from(["So {} woman came.", "so {} is wrong",
                                                  "Therefore {} seems unlikely.",
                                                  "So {}-shaped strokes"]))
@SETTINGS
def test_conclusion_words_need_a_label_that_ends_the_sentence(label: str, form: str) -> None:
    # "So" / "Therefore" before a label that does not end the sentence declares nothing
    got = parse_choice(form.format(label), LABELS, TEXTS)
    assert got.value is None, (form, got)


OFFERED = list("ABCD")
PLAIN = [m for m in MARKERS if "inal" not in m and "最终" not in m]


@st.composite
def in_and_out(draw: st.DrawFn) -> tuple[str, str, str]:
    """Two declarations, one of an offered label (A–D), one of a letter E–Z, any order."""
    good = draw(st.sampled_from(OFFERED))
    bad = draw(st.sampled_from([c for c in "EFGHIJKLMNOPQRSTUVWXYZ"]))
    a, b = draw(declaration(good, PLAIN)), draw(declaration(bad, PLAIN))
    first, second = (a, b) if draw(st.booleans()) else (b, a)
    return first + draw(st.sampled_from(["\n", "\nHmm.\n"])) + second, good, bad


@given(in_and_out())
@SETTINGS
def test_an_out_of_set_label_is_never_returned(case: tuple[str, str, str]) -> None:
    # rule 4: a declared label outside the set is a declaration of another option: two
    # labels at one level are unparsed (several_options), flagged out_of_set
    text, _, _ = case
    got = parse_choice(text, OFFERED, tag="option")
    assert got.value is None and pb.OUT_OF_SET in got.flags, (text, got)
    assert pb.SEVERAL_OPTIONS in got.flags, (text, got)


@given(st.sampled_from("EFGHIJKLMNOPQRSTUVWXYZ").flatmap(lambda bad: declaration(bad, PLAIN)))
@SETTINGS
def test_an_out_of_set_label_alone_is_unparsed(text: str) -> None:
    got = parse_choice(text, OFFERED, tag="option")
    assert got.value is None and pb.OUT_OF_SET in got.flags, (text, got)


@given(in_and_out())
@SETTINGS
def test_a_final_answer_decides_over_an_out_of_set_label(case: tuple[str, str, str]) -> None:
    text, good, bad = case
    got = parse_choice(f"{text}\nFinal answer: {good}", OFFERED, tag="option")
    assert got.value == good, (text, got)
    assert {pb.OUT_OF_SET, pb.OVERRODE_OTHER} <= set(got.flags), (text, got)
    got = parse_choice(f"{text}\nFinal answer: {bad}", OFFERED, tag="option")
    assert got.value is None and pb.OUT_OF_SET in got.flags, (text, got)


@given(st.sampled_from(OFFERED), st.sampled_from(["Answer: ", "[option] ", "The answer is "]),
       st.booleans())
@SETTINGS
def test_two_declarations_that_agree_are_repeated(label: str, marker: str, xml: bool) -> None:
    block = "<answer>{}</answer>" if xml else marker + "{}"
    got = parse_choice(block.format(label) + "\n" + block.format(label), OFFERED, tag="option")
    assert got.value == label and pb.REPEATED in got.flags, got


@given(st.sampled_from(LABELS), st.sampled_from(["Answer: ", "The answer is ", "选", "",
                                                  "Final answer: ", "[option] "]),
       st.sampled_from(["+", "-", "=", "#", "^", "~", "%", "±", "++", "+."]))
@SETTINGS
def test_a_label_with_an_operator_is_no_declaration(label: str, marker: str, op: str) -> None:
    # rule 5: "A+" is a grade, not option A: unparsed
    got = parse_choice(f"{marker}{label}{op}", LABELS, TEXTS, tag="option")
    assert got.value is None, (marker, label, op, got)


# ---------------------------------------------------------------- counts
#: The zero of every Unicode decimal-digit script (category Nd, digits 0–9 contiguous by
#: Unicode's stability policy), from the interpreter's Unicode database.
ZEROS = [c for c in range(sys.maxunicode + 1)
         if unicodedata.category(chr(c)) == "Nd" and unicodedata.digit(chr(c)) == 0]


@given(st.integers(0, 10**6), st.sampled_from(ZEROS),
       st.sampled_from(["{}", "[count] {}", "Answer: {}", "答案：{}个", "There are {} figures."]))
@SETTINGS
def test_counts_in_any_decimal_digit_script(n: int, zero: int, form: str) -> None:
    # rule 6: any Nd digit is a digit, read by its decimal value
    digits = "".join(chr(zero + int(d)) for d in str(n))
    got = parse_number(form.format(digits))
    assert (got.value, got.reason) == (n, None), (ascii(digits), got)


@given(st.integers(1000, MAX_COUNT), st.sampled_from(["{}", "[count] {}", "Answer: {} people"]))
@SETTINGS
def test_thousands_commas(n: int, form: str) -> None:
    got = parse_number(form.format(f"{n:,}"))
    assert (got.value, got.reason) == (n, None), (f"{n:,}", got)


@given(st.integers(0, 999), st.integers(0, 99), st.sampled_from(["{},{}", "{}, {}"]))
@SETTINGS
def test_a_comma_not_grouping_three_digits_separates_numbers(a: int, b: int,
                                                             form: str) -> None:
    # "1,5" / "3, 4": two numbers (b has one or two digits), unparsed unless they are equal
    got = parse_number(form.format(a, b))
    assert got.value == (a if a == b else None), got


@given(st.integers(MAX_COUNT + 1, 10**30), st.sampled_from(["{}", "[count] {}", "Answer: {}"]))
@SETTINGS
def test_a_count_above_the_maximum_is_unparsed(n: int, form: str) -> None:
    got = parse_number(form.format(n))
    assert got.value is None and got.reason, got


@given(st.integers(0, 99), st.integers(1, 99),
       st.sampled_from(["{}/{}", "{} / {}", "{}⁄{}"]),
       st.sampled_from(["{}", "[count] {}", "Answer: {}", "About {} of them"]))
@SETTINGS
def test_a_fraction_is_no_count(a: int, b: int, frac: str, form: str) -> None:
    got = parse_number(form.format(frac.format(a, b)))
    assert got.value is None and got.reason, got


@given(st.integers(0, 99), st.sampled_from(["{}+", "{} +", "≥{}", "≥ {}", "> {}", "<{}"]),
       st.sampled_from(["{}", "[count] {}", "Answer: {}", "There are {} people."]))
@SETTINGS
def test_a_one_sided_count_is_unparsed(n: int, op: str, form: str) -> None:
    got = parse_number(form.format(op.format(n)))
    assert got.value is None and got.reason, got
