"""Number and relative-position answers (part of the unified parser, :mod:`.parsing`).

Same conventions as :mod:`heritage_eval.core.parsing`: each function returns a
:class:`~heritage_eval.core.parsing.Parsed` whose ``value`` is ``None`` with a ``reason``
when no single valid answer is found; nothing is ever guessed.
"""

from __future__ import annotations

import re

from heritage_eval.core.answer_text import clean_answer, normalize_text, prepare_answer
from heritage_eval.core.parsing_base import (
    OVERRODE_OTHER,
    REPEATED,
    SEVERAL_BLOCKS,
    SEVERAL_OPTIONS,
    Parsed,
    _fail,
    _tag_contents,
    parse_json_object,
)

# ---------------------------------------------------------------- numbers
_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORDS = {w: i for i, w in enumerate(_ONES)} | {w: 10 * i for i, w in enumerate(_TENS) if w}
_NO_ASCII_BEFORE = r"(?<![0-9A-Za-z_.])"
#: Largest count read (inclusive); a larger number is unparsed, not a count.
MAX_COUNT = 1_000_000
#: Digits: any Unicode decimal digit (category Nd: ASCII, Arabic-Indic ٣, Devanagari ३ …,
#: read by their decimal value); a comma between groups of exactly three digits is a
#: thousands separator (``1,000``; ``1,5`` stays two numbers).
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?!,?\d)|\d+)(?:\.\d+)?"
_NUM = re.compile(r"(?<!第)" + _NO_ASCII_BEFORE +
                  r"((?:(?<![0-9A-Za-z_.-])[-−])?" + _DIGITS + r")(?![0-9A-Za-z_])(?!\.\d)"
                  r"|(?<![A-Za-z])(" + "|".join(_TENS[2:]) + r")(?:[-\s](" + "|".join(_ONES[1:10])
                  + r"))?(?![A-Za-z])|(?<![A-Za-z])(" + "|".join(_ONES) + r")(?![A-Za-z])",
                  re.I)
#: Chinese digits; 两/兩 is "two" before a measure word.
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9, "俩": 2, "倆": 2}
#: 廿 20 and 卅 30 (廿一 21): read, never skipped (a skipped 廿 left 一 read as 1)
_ZH_TENS = {"廿": 20, "卅": 30}
#: Measure words (classifiers) that make a Chinese numeral a count: 三个人, 两匹马.
ZH_MEASURE_WORDS = "个個位名人只隻匹头頭条條棵株座艘朵幅件张張把尊辆輛间間栋棟块塊群对對双雙"
_ZH_CHARS = "零〇一二两兩俩倆三四五六七八九十廿卅百千万萬"
_ZH_NUM = re.compile(rf"(?<![第{_ZH_CHARS}])([{_ZH_CHARS}]+)"
                     rf"(?=\s*[{ZH_MEASURE_WORDS}]|\s*[。.!！]?\s*$)")


def _zh_value(run: str) -> list[float]:
    """Value(s) of a run of Chinese numerals: ``三`` 3, ``十`` 10, ``十二`` 12, ``二十`` 20,
    ``三十五`` 35; two adjacent digits (``三四`` "three or four", ``两三``) give both numbers
    (a hedge, so the answer is ambiguous); any other run (``一百``) gives NaN: unparsed
    as an unreadable numeral rather than skipped (skipping would let another number win)."""
    if len(run) == 1 and run in _ZH_DIGITS:
        return [float(_ZH_DIGITS[run])]
    if run[0] in _ZH_TENS and (len(run) == 1 or (len(run) == 2 and run[1] in _ZH_DIGITS)):
        return [float(_ZH_TENS[run[0]] + (_ZH_DIGITS[run[1]] if len(run) == 2 else 0))]
    if m := re.fullmatch(r"([一二两三四五六七八九]?)十([一二三四五六七八九]?)", run):
        return [float(_ZH_DIGITS.get(m[1], 1) * 10 + _ZH_DIGITS.get(m[2], 0))]
    if len(run) == 2 and all(c in _ZH_DIGITS for c in run) and run[0] != run[1]:
        return [float(_ZH_DIGITS[c]) for c in run]
    return [float("nan")]


#: A fraction (``3/4``, ``3 / 4``, ``3⁄4``): no count, and its digits are not counts either.
_FRACTION = re.compile(r"\d+(?:\.\d+)?\s*[/⁄∕]\s*\d+")


#: Words before which "one" is a pronoun, not a count ("no one", "the one on the left").
_ONE_PRONOUN = re.compile(r"(?i:\b(?:no|any|each|every|some|the|this|that|which|another)\s+)$")


def _pronoun_one(text: str, m: re.Match[str]) -> bool:
    return (m[4] or "").casefold() == "one" and bool(
        _ONE_PRONOUN.search(text[max(0, m.start() - 12):m.start()]))


def _numbers(text: str) -> list[float]:
    """Every number in ``text``, in order of position: ASCII digits (full-width folded by
    :func:`~heritage_eval.core.parsing.prepare_answer`; a CJK character may touch them,
    ``3个人``), English words zero–ninety-nine (``twenty-one``), and Chinese numerals
    (``三``, ``两``, ``十二``) before a measure word or ending the text. An ordinal after
    ``第`` (``第三个``, ``第3个``, "the third") is no count and is skipped. A fraction
    (``3/4``) is one unreadable number (NaN), not two counts."""
    fractions = [(m.start(), m.end()) for m in _FRACTION.finditer(text)]
    found = [(a, float("nan")) for a, _ in fractions]
    found += [(m.start(), float(m[1].replace("−", "-").replace(",", "")) if m[1] else float(
        _WORDS[(m[2] or m[4]).lower()] + (_WORDS[m[3].lower()] if m[3] else 0)))
        for m in _NUM.finditer(text) if not _pronoun_one(text, m)
        and not any(a <= m.start() < b for a, b in fractions)]
    found += [(m.start(), v) for m in _ZH_NUM.finditer(text) for v in _zh_value(m[1])]
    return [v for _, v in sorted(found, key=lambda p: p[0])]


def _one_number(nums: list[float], method: str, flags: set[str] | None = None,
                everywhere: list[float] | None = None, source: str = "") -> Parsed:
    """The one whole number >= 0 (at most :data:`MAX_COUNT`) of ``nums``, read from
    ``source`` (the deciding source), else unparsed. ``everywhere``: all numbers of the
    answer, for :data:`OVERRODE_OTHER`."""
    flags = set(flags or ())
    if any(n != n for n in nums):  # NaN: a fraction, or a Chinese numeral outside the forms
        reason = ("fraction: not a count" if _FRACTION.search(source)
                  else "unreadable Chinese numeral")
        return Parsed(None, reason, method, tuple(sorted(flags)))
    distinct = sorted(set(nums))
    if len(distinct) > 1:
        flags.add(SEVERAL_OPTIONS)
        return Parsed(None, f"ambiguous: several numbers ({', '.join(f'{n:g}' for n in distinct)})",
                      method, tuple(sorted(flags)))
    if len(nums) > 1:
        flags.add(REPEATED)
    if any(n != distinct[0] for n in everywhere or ()):
        flags.add(OVERRODE_OTHER)
    if distinct[0] > MAX_COUNT:
        return Parsed(None, f"count above the maximum {MAX_COUNT}", method,
                      tuple(sorted(flags)))
    if distinct[0] != int(distinct[0]):
        return Parsed(None, f"not a whole number: {distinct[0]:g}", method, tuple(sorted(flags)))
    if distinct[0] < 0:
        return Parsed(None, f"negative count: {distinct[0]:g}", method, tuple(sorted(flags)))
    return Parsed(int(distinct[0]), None, method, tuple(sorted(flags)))


_NUMWORD = r"(?:\d|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|" \
       r"twenty|thirty|forty|fifty)"
_CN = "零〇一二两兩三四五六七八九十廿"
_HEDGES = re.compile(
    r"(?i:\b(?:about|around|approximately|roughly|nearly|almost|at\s+least|at\s+most|"
    r"more\s+than|fewer\s+than|less\s+than)\s+" + _NUMWORD + r")"
    r"|(?i:" + _NUMWORD + r"\w*\s+or\s+(?:more|so|fewer|less)\b)"
    r"|[~≈～≥≤⩾⩽]\s*\d|(?<![\w\"'/])[<>]\s*\d|\d\s*\+(?!\s*\d)"
    r"|(?:约|大约|大概|将近|至少|最多|超过|不止)\s*[\d" + _CN + r"]"
    r"|[\d" + _CN + r"]\s*[个個人位匹只头頭件]?\s*(?:左右|上下|以上|多个|多人)")


def hedged(text: str) -> bool:
    """Whether ``text`` gives an approximate or one-sided count (``about 3``, ``~3``,
    ``at least 3``, ``three or more``, ``3+``, ``≥3``, ``> 3``, ``约三个``, ``3人左右``):
    never an exact answer."""
    return bool(_HEDGES.search(text))


def parse_number(text: str, tag: str | None = "count") -> Parsed:
    """A whole number >= 0 from a count answer; the count rule, the same for every model.

    The text is first normalised by :func:`~heritage_eval.core.parsing.prepare_answer`
    (``<think>`` dropped, markdown/LaTeX wrappers removed, full-width folded). Numbers are
    Unicode decimal digits (ASCII, full-width, Arabic-Indic ``٣``, Devanagari ``३`` …; ``1,000``
    with thousands commas), English words zero–ninety-nine (``Three.``, ``twenty-one``) and Chinese
    numerals 零/〇, 一 … 十, 两/兩 and 十一 … 九十九 (read before a measure word — ``三个人``,
    ``两匹马`` — or when they end the text, ``三``; ``第三`` is an ordinal, skipped).

    Sources, in order; the first that contains any number decides:

    1. the ``[tag]`` answers (``[count] 3``; ``<count>3</count>``): the first line of each
       (several tags: flagged ``several_blocks``, and they must agree);
    2. a JSON value under ``tag``/``count``/``answer``/``number``;
    3. an answer phrase: the number right after ``Answer:``, ``答案：``, ``count is``,
       ``total of`` …;
    4. every number in the whole text.

    Two different numbers in the deciding source are ambiguous (unparsed): ``three or
    four``, ``三四个``, ``3 people and 2 horses`` (no tagged answer names one), whereas
    ``[count] 3\nThere are 3 people and 2 horses`` is 3 (the tag decides). A negative
    number (``-1``, ``−1``; not a hyphen between numbers as in ``3-4``) or a fraction is
    unparsed, since a count cannot be either (``3/4`` is not 3). A hedged or one-sided
    count — ``about 3``, ``~3``, ``at least 3``, ``3+``, ``≥3``, ``three or more``,
    ``约三个``, ``3人左右`` — is unparsed too, and so is a count above :data:`MAX_COUNT`
    (10**6). Nothing is guessed.
    """
    body = prepare_answer(text)
    if not body:
        return _fail("empty response")
    lines = [c.strip().split("\n", 1)[0] for c in _tag_contents(body, [tag] if tag else [])]
    flags = {SEVERAL_BLOCKS} if len(lines) > 1 else set()
    if numbered := [line for line in lines if _numbers(line)]:
        if hedges := [line for line in numbered if hedged(line)]:
            return _fail(f"hedged count: {hedges[0]!r}", flags)
        return _one_number([n for line in numbered for n in _numbers(line)], "tag", flags,
                           _numbers(body), "\n".join(numbered))
    if hedged(body):
        return _fail("hedged count (about, at least, 左右 …): not an exact number")
    keys = {k for k in (tag, "count", "answer", "number") if k}
    vals = [str(v) for k, v in (parse_json_object(body).value or {}).items()
            if str(k).casefold() in keys]
    if nums := [n for v in vals for n in _numbers(v)]:
        return _one_number(nums, "json", flags, source="\n".join(vals))
    phrase = re.compile(r"(?i:\b(?:answer|count|total|number)\b"
                        r"(?:\s+(?:is|are|of)\b|\s*[:：=])|答案\s*(?:是|为|為)?\s*[:：]?)"
                        r"\s*(" + _FRACTION.pattern + r"|\S+(?:[-\s]\w+)?)")
    groups = [m.group(1) for m in phrase.finditer(body)]
    if nums := [n for g in groups for n in _numbers(g)]:
        return _one_number(nums, "phrase", flags, _numbers(body), "\n".join(groups))
    if nums := _numbers(body):
        return _one_number(nums, "text", flags, source=body)
    return _fail("no number found", flags)


# ---------------------------------------------------------------- relative position
POSITION_VALUES: dict[str, dict[str, str]] = {
    "lateral": {"left": "left", "right": "right", "none": "none"},
    "depth": {"front": "front", "in front": "front", "back": "back", "behind": "back",
              "none": "none"},
    "vertical": {"above": "above", "over": "above", "under": "under", "below": "under",
                 "beneath": "under", "none": "none"},
}


_DIM_END = r"(?=[\[<,;\n]|\b(?:lateral|depth|vertical)\s*[:：=]|\Z)"


def _dim_contents(body: str, dim: str) -> list[str]:
    """Values given for ``dim``: ``[dim] v``, ``<dim>v</dim>`` or ``dim: v`` / ``dim = v``
    anywhere; a value ends at a newline, ``,``, ``;``, a bracket or the next dimension."""
    pat = rf"(?:\[\s*{dim}\s*\]|<\s*{dim}\s*>|\b{dim}\s*[:：=])\s*[:：]?\s*(.*?){_DIM_END}"
    return [m.group(1) for m in re.finditer(pat, body, re.I)]


def parse_position(text: str) -> Parsed:
    """Three dimensions ``[lateral] left|none|right``, ``[depth] front|none|back``,
    ``[vertical] above|none|under`` (also ``lateral: left, depth: back, …`` on one line,
    ``<lateral>left</lateral>``, or a JSON object with those keys).

    Synonyms: behind -> back, below/beneath -> under, over -> above. Returns a dict with all
    three dimensions; a missing, unknown or self-contradicting dimension makes the whole
    answer unparsed (the format asks for all three lines), with the dimension named.
    """
    body = clean_answer(text)
    if not body:
        return _fail("empty response")
    obj = parse_json_object(body).value or {}
    out: dict[str, str] = {}
    for dim, vocab in POSITION_VALUES.items():
        contents = [str(v) for k, v in obj.items() if str(k).casefold() == dim]
        contents = contents or _dim_contents(body, dim)
        if not contents:
            return _fail(f"no [{dim}] answer")
        found: set[str] = set()
        for c in contents:
            words = re.findall(r"in front|[a-z]+", normalize_text(c))
            found |= {vocab[w] for w in words if w in vocab}
        if len(found) != 1:
            return _fail(f"[{dim}] answer is " + ("ambiguous" if found else "not one of "
                                                  + "/".join(sorted(set(vocab.values())))))
        out[dim] = found.pop()
    return Parsed(out, None, "tag")
