"""The answer-extraction rule (docs/answer-extraction.md) tested over generated answers.

Each property is stated over a whole kind of input, not one example: the expected value is
known by construction (the generator places exactly one declared option, or none, or two),
so no test here copies the parser's own output.
"""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heritage_eval.core import parsing_base as pb
from heritage_eval.core.parsing import (
    Parsed,
    block_flags,
    parse_choice,
    parse_json_object,
    parse_tagged,
)
from heritage_eval.core.parsing_values import parse_number, parse_position

# KINDS_N raises the example count for a longer search (default 200, kept modest).
SETTINGS = settings(max_examples=int(os.environ.get("KINDS_N", "200")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
LABELS = list("ABCDEFGH")  # HCSU 8-way discrimination
TEXTS = {"A": "Running script", "B": "Clerical script", "C": "Seal script",
         "D": "Regular script", "E": "Cursive script", "F": "Slender gold",
         "G": "Bird-worm seal", "H": "Semi-cursive"}
KNOWN_FLAGS = {v for k, v in vars(pb).items() if k.isupper() and isinstance(v, str)}

# Reasoning that declares nothing: it names no option letter standing alone and no option
# text, yet is full of capitals A-H inside words, articles and pronouns.
REASONING = [
    "Let's think step by step.", "Based on the brushwork, the strokes are thin.",
    "Clearly the ink is dark and even.", "I think the characters look balanced.",
    "Each stroke ends abruptly, e.g. the final hooks.", "A careful look helps here.",
    "Hence the Dense Black ink, i.e. heavy loading.", "Grand and Heavy forms dominate.",
    "笔画方折，结构严谨。", "根据笔画特征来看，墨色较重。", "这幅作品的风格很Bold。",
    "Hmm, the composition is Firm and Even.", "Definitely a Good Hand at work.",
]
# Ordinary words and phrases for the "no letter out of a word" property, including the
# words that introduce a declaration elsewhere (answer, choose, maybe, option, 选择 …).
WORDS = [
    "Based", "Clearly", "Each", "Deep", "Fine", "Good", "Hence", "Art", "Bold", "Calm",
    "Dense", "Even", "Firm", "Grand", "Heavy", "about", "brush", "called", "design",
    "effect", "form", "gold", "height", "A woman", "A scholar", "I think", "I guess",
    "maybe", "perhaps", "answer", "the answer depends on", "choose carefully", "option",
    "options", "actually", "no wait", "final answer pending", "It is", "This is",
    "e.g.", "i.e.", "C-shaped", "A-grade", "答案在于", "选择Bold风格", "我认为是Dense笔触",
    "可能", "最终答案未定", "Candidates", "Eh", "Ah", "Oh", "and", ",", ".", "\n", ":",
    "so", "So,", "Therefore", "is the answer", "is my answer", "My choice", "项", "A+",
    "'", '"', "“", "»", "✅", "\u200b",
]

WRAPPERS = ["{}", "**{}**", "*{}*", "`{}`", "__{}__", "${}$", "$\\text{{{}}}$",
            "\\boxed{{{}}}", "$\\boxed{{{}}}$", "\\textbf{{{}}}", "\\({}\\)", "({})", "[{}]",
            "【{}】", "{}.", "{})", "{}:", "**({})**", "\\boxed{{\\text{{{}}}}}",
            '"{}"', "'{}'", "“{}”", "‘{}’", "«{}»", "「{}」", "『{}』", "《{}》"]
MARKERS = ["", "Answer: ", "ANSWER: ", "Answer - ", "The answer is ", "My answer is ",
           "The correct option is ", "The correct answer is: ", "答案：", "答案是", "答案为",
           "选", "选择", "我选择", "Option ", "option ", "Candidate ", "I choose ",
           "I would go with ", "final answer: ", "Final Answer: ", "最终答案：", "故选",
           "My choice: ", "The most likely option is ", "Answer — ", "Answer – ", "答：",
           "正确的是", "正确答案是", "Final answer — "]
LINE_FORMS = ["{}", "## {}", "> {}", "- {}", "* {}", "1. {}", "<answer>{}</answer>",
              "[option] {}", "<option>{}</option>", "✅ {}", "👉 {}", "➡\ufe0f {}"]
FINAL_MARKERS = {"final answer: ", "Final Answer: ", "最终答案：", "Final answer — "}


def full_width(text: str) -> str:
    """ASCII U+0021–U+007E to the full-width forms U+FF01–U+FF5E (the Unicode block's
    definition), other characters unchanged."""
    return "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in text)


@st.composite
def declaration(draw: st.DrawFn, label: str, markers: list[str] = MARKERS,
                forms: list[str] | None = None) -> str:
    """One line declaring ``label``: wrapper x marker x line form x case x width."""
    letter = label.lower() if draw(st.booleans()) else label
    marker = draw(st.sampled_from(markers))
    line = draw(st.sampled_from(forms or LINE_FORMS)).format(
        marker + draw(st.sampled_from(WRAPPERS)).format(letter))
    return full_width(line) if draw(st.booleans()) else line


@st.composite
def reasoning(draw: st.DrawFn) -> str:
    return " ".join(draw(st.lists(st.sampled_from(REASONING), max_size=3)))


@st.composite
def one_declared(draw: st.DrawFn) -> tuple[str, str]:
    label = draw(st.sampled_from(LABELS))
    before, after = draw(reasoning()), draw(reasoning())
    return "\n".join(p for p in (before, draw(declaration(label)), after) if p), label


@given(one_declared())
@SETTINGS
def test_one_declared_option_is_read_whatever_wraps_it(case: tuple[str, str]) -> None:
    # property 1: the generator declares exactly `label`, once; nothing else names one
    text, label = case
    got = parse_choice(text, LABELS, TEXTS, tag="option")
    assert (got.value, got.reason) == (label, None), (text, got)
    assert got.flags == (), (text, got)  # one declaration is nothing unusual


@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=14),
       st.sampled_from([" ", "  ", "\n"]), st.sampled_from([LABELS, list("ABCDEFGHIJK")]))
@SETTINGS
def test_no_letter_is_read_out_of_an_ordinary_word(words: list[str], sep: str,
                                                   labels: list[str]) -> None:
    # property 2: no option is declared, so the answer is unparsed, never a letter;
    # also with the 11 MUSE emotion labels, where "I" is an option
    text = sep.join(words)
    got = parse_choice(text, labels, TEXTS, tag="option")
    assert got.value is None and got.reason, (text, got)


# Arbitrary text: every code point (surrogates and NUL included) mixed with fragments of
# the forms the parser reads, sometimes repeated to a large size.
FRAGMENTS = ["<answer>", "</answer>", "[option]", "[count]", "<res>", "</res>", "{", "}",
             '{"answer": ', "\\boxed{", "答案：", "选", "A", "b", " or ", "或", "**", "$",
             "<think>", "</think>", "Final answer:", "No wait,", "三个", "twenty-", "3",
             "[lateral]", "(0.5, 0.5, 0.1, 0.1)", "\n", "、", "，"]
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
ANY_TEXT = st.lists(st.one_of(st.text(ANY_CHAR, max_size=20), st.sampled_from(FRAGMENTS)),
                    max_size=30).map("".join)


def _valid(got: Parsed) -> None:
    assert isinstance(got, Parsed)
    assert (got.value is None) == (got.reason is not None) or got.value is None
    assert got.ok is (got.value is not None and got.reason is None)
    assert list(got.flags) == sorted(set(got.flags)) and set(got.flags) <= KNOWN_FLAGS


@given(ANY_TEXT, st.sampled_from([1, 1, 1, 50, 2000]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_parsers_never_raise(text: str, repeat: int) -> None:
    # property 3: any str is parsed or refused, never an exception
    text = text * repeat
    got = parse_choice(text, LABELS, TEXTS, tag="option",
                       option_boxes={"A": [0.5, 0.5, 0.1, 0.1]})
    _valid(got)
    assert got.value is None or got.value in LABELS
    for other in (parse_number(text), parse_tagged(text, "visual clues"),
                  parse_position(text), parse_json_object(text)):
        _valid(other)
    assert set(block_flags(text)) <= KNOWN_FLAGS


def test_huge_and_pathological_inputs_finish() -> None:
    # linear-time guard: 200k unbalanced braces used to cost a quadratic JSON scan
    for text in ("{" * 200_000, "A. " * 50_000, "答案：" * 50_000, "<answer>" * 30_000,
                 "\x00\ud800" * 50_000):
        _valid(parse_choice(text, LABELS, TEXTS, tag="option"))
        _valid(parse_number(text))


# A separator ending in a newline puts the second declaration on a line of its own; the
# others lead into it on the same line (a revision), where only inline forms make sense.
SEPARATORS = ["\n", "\nHmm.\n", "\nNo wait, ", "\nActually, ", "\n不对，",
              "\nLet me double-check.\n"]
INLINE_FORMS = ["{}", "<answer>{}</answer>", "[option] {}"]


@st.composite
def two_declared(draw: st.DrawFn) -> tuple[str, str, str]:
    first, second = draw(st.lists(st.sampled_from(LABELS), min_size=2, max_size=2,
                                  unique=True))
    plain = [m for m in MARKERS if m not in FINAL_MARKERS]
    sep = draw(st.sampled_from(SEPARATORS))
    a = draw(declaration(first, plain))
    b = draw(declaration(second, plain, None if sep.endswith("\n") else INLINE_FORMS))
    return a + sep + b, first, second


@given(two_declared())
@SETTINGS
def test_two_declared_options_without_final_marker_are_unparsed(
        case: tuple[str, str, str]) -> None:
    # property 4: two different declared options, nothing decisive -> unparsed, flagged
    text, _, _ = case
    got = parse_choice(text, LABELS, TEXTS, tag="option")
    assert got.value is None and got.reason, (text, got)
    assert pb.SEVERAL_OPTIONS in got.flags, (text, got)


@given(two_declared(), st.sampled_from(sorted(FINAL_MARKERS)), st.booleans())
@SETTINGS
def test_a_final_marker_decides_and_is_flagged(case: tuple[str, str, str],
                                               final: str, keep_first: bool) -> None:
    # documented tie rule: one "final answer" declaration decides over earlier ones,
    # whichever of them it repeats
    text, first, second = case
    chosen = first if keep_first else second
    text = f"{text}\n{final}{chosen}"
    got = parse_choice(text, LABELS, TEXTS, tag="option")
    assert got.value == chosen, (text, got)
    assert pb.OVERRODE_OTHER in got.flags, (text, got)


@given(st.sampled_from(LABELS), st.sampled_from(LABELS),
       st.sampled_from([" or ", " / ", "或", " or maybe ", "、", ", "]))
@SETTINGS
def test_hedges_and_lists_of_two_options_are_unparsed(a: str, b: str, sep: str) -> None:
    text = f"The answer is {a}{sep}{b}."
    got = parse_choice(text, LABELS, TEXTS, tag="option")
    if a == b:
        assert got.value == a, (text, got)
    else:
        assert got.value is None and pb.SEVERAL_OPTIONS in got.flags, (text, got)
        assert (pb.HEDGED in got.flags) is ("or" in sep or sep == "或"), (text, got)


@given(st.sampled_from(LABELS), st.sampled_from(["maybe ", "Maybe ", "Perhaps ",
                                                  "probably option ", "可能是", "也许选"]))
@SETTINGS
def test_an_option_read_from_a_hedge_is_flagged(label: str, hedge: str) -> None:
    got = parse_choice(f"Hard to say. {hedge}{label}.", LABELS, TEXTS)
    assert (got.value, pb.HEDGED in got.flags) == (label, True), got


@given(st.sampled_from(LABELS), st.sampled_from(LABELS), st.sampled_from([". ", ") ", ": "]))
@SETTINGS
def test_echoed_option_text_must_agree_with_the_label(label: str, text_of: str,
                                                      punct: str) -> None:
    got = parse_choice(f"{label}{punct}{TEXTS[text_of]}", LABELS, TEXTS)
    if label == text_of:
        assert got.value == label, got
    else:
        assert got.value is None and pb.TEXT_CONFLICT in got.flags, got


@given(st.sampled_from(LABELS), st.sampled_from(MARKERS[1:8]), reasoning())
@SETTINGS
def test_restatement_of_the_same_option_is_read_and_flagged(label: str, marker: str,
                                                            why: str) -> None:
    text = f"{label}\n{why}\nSo {marker.lower()}{label}."
    got = parse_choice(text, LABELS, TEXTS)
    assert got.value == label and pb.REPEATED in got.flags, (text, got)


@given(st.sampled_from(LABELS), st.sampled_from(LABELS), st.booleans())
@SETTINGS
def test_several_answer_blocks(a: str, b: str, xml: bool) -> None:
    block = "<answer>{}</answer>" if xml else "[option] {}\n"
    got = parse_choice(block.format(a) + " " + block.format(b), LABELS, tag="option")
    assert pb.SEVERAL_BLOCKS in got.flags, got
    assert got.value == (a if a == b else None), got


# ---------------------------------------------------------------- counts
_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
         "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
         "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
         "ninety"]
_ZH = "零一二三四五六七八九"


def english(n: int, sep: str) -> str:
    """English cardinal for 0-99, written independently of the parser's tables."""
    if n < 20:
        return _ONES[n]
    return _TENS[n // 10] + (sep + _ONES[n % 10] if n % 10 else "")


def chinese(n: int) -> str:
    """Chinese numeral for 0-99 (十 for 10, 十五 for 15, 二十三 for 23)."""
    if n < 10:
        return _ZH[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else _ZH[tens]) + "十" + (_ZH[ones] if ones else "")


@st.composite
def count_answer(draw: st.DrawFn) -> tuple[str, int]:
    n = draw(st.integers(0, 99))
    form = draw(st.sampled_from(["digits", "wide", "english", "chinese"]))
    word = {"digits": str(n), "wide": full_width(str(n)),
            "english": english(n, draw(st.sampled_from(["-", " "]))),
            "chinese": chinese(n)}[form]
    if form == "english" and draw(st.booleans()):
        word = word.capitalize()
    unit = "个人" if form == "chinese" else draw(st.sampled_from(["", " figures", "个"]))
    line = draw(st.sampled_from(["{}", "[count] {}", "<count>{}</count>", "Answer: {}",
                                 "答案：{}", "The count is {}", "**{}**", "\\boxed{{{}}}",
                                 "There are {} in total"])).format(word + unit)
    why = draw(st.sampled_from(["", "Looking at the painting closely.\n",
                                "Someone stands near the gate, often in tone.\n",
                                "画面中人物众多。\n"]))
    return why + line, n


@given(count_answer())
@SETTINGS
def test_one_count_is_read_in_any_form(case: tuple[str, int]) -> None:
    text, n = case
    got = parse_number(text)
    assert (got.value, got.reason) == (n, None), (text, got)


@given(st.lists(st.sampled_from(["someone", "often", "tone", "weight", "tenth", "bone",
                                 "phone", "no one", "each one", "the one", "Tennis",
                                 "eightfold", "第三", "一共", "people", "figures"]),
                min_size=1, max_size=8))
@SETTINGS
def test_no_count_is_read_out_of_an_ordinary_word(words: list[str]) -> None:
    text = " ".join(words)
    got = parse_number(text)
    assert got.value is None, (text, got)


@given(st.integers(0, 99), st.integers(0, 99))
@SETTINGS
def test_two_count_tags_must_agree(a: int, b: int) -> None:
    got = parse_number(f"[count] {a}\n[count] {b}")
    assert got.value == (a if a == b else None), got
    assert pb.SEVERAL_BLOCKS in got.flags


# ---------------------------------------------------------------- <res> blocks
@given(st.lists(st.text(st.characters(exclude_characters="<>"), max_size=6), max_size=3),
       st.booleans())
@SETTINGS
def test_res_block_flags(contents: list[str], unclosed: bool) -> None:
    text = "".join(f"<res>{c}</res>" for c in contents) + ("<res>cut" if unclosed else "")
    flags = set(block_flags(text))
    assert (pb.SEVERAL_BLOCKS in flags) is (len(contents) > 1)
    assert (pb.BLOCKS_DIFFER in flags) is (len({c.strip() for c in contents}) > 1)
    assert (pb.UNCLOSED_BLOCK in flags) is unclosed


def test_flags_reach_the_records() -> None:
    # the MUSE row carries the flags into details["parse_flags"] (samples.jsonl)
    from heritage_eval.benchmarks.muse.questions import OptionRecord, Question, QuestionTurn
    from heritage_eval.benchmarks.muse.scoring import score_turn
    from heritage_eval.core.types import Response

    turn = QuestionTurn(task="object_classification", tag="option", prompt="who?",
                        answer_format="choice", answer="B",
                        options=[OptionRecord(label=lab, text=t, distractor_type="x")
                                 for lab, t in (("A", "Boy"), ("B", "Woman"))])
    q = Question(id="q:0", image_id="q", turns=[turn])
    row = score_turn(q, 0, Response(text="<answer>B</answer> <answer>B</answer>"))
    assert row.parse_flags == [pb.REPEATED, pb.SEVERAL_BLOCKS]
    assert re.fullmatch(r"scored", row.state.value)


def test_res_flags_reach_the_ancient_bench_record() -> None:
    # the scored row keeps the official first-block extraction; the envelope flags it
    from heritage_eval.benchmarks.ancient_bench.envelope import to_envelope
    from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
    from heritage_eval.benchmarks.ancient_bench.records import build_record
    from heritage_eval.core.types import Sample

    sample = Sample(id="s1", category="seals", target="甲乙")
    for answer, flags in (("<res>甲乙</res>", None),
                          ("<res>甲乙</res><res>丙</res>",
                           [pb.BLOCKS_DIFFER, pb.SEVERAL_BLOCKS])):
        row = build_record(sample, "m", answer, None, NormalizationFlags())
        assert row.extracted_text == "甲乙"  # first block, as the official evaluator
        rec = to_envelope(row, sample, prompt="p", prompt_used=True, root=None,
                          response=None)
        assert rec.details.get("parse_flags") == flags
