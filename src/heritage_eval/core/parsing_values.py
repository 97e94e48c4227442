"""Number and relative-position answers (part of the unified parser, :mod:`.parsing`).

Same conventions as :mod:`heritage_eval.core.parsing`: each function returns a
:class:`~heritage_eval.core.parsing.Parsed` whose ``value`` is ``None`` with a ``reason``
when no single valid answer is found; nothing is ever guessed.
"""

from __future__ import annotations

import re

from heritage_eval.core.parsing import (
    Parsed,
    _fail,
    _tag_contents,
    clean_answer,
    normalize_text,
    parse_json_object,
)

# ---------------------------------------------------------------- numbers
_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORDS = {w: i for i, w in enumerate(_ONES)} | {w: 10 * i for i, w in enumerate(_TENS) if w}
_NUM = re.compile(r"(?<![\w.])((?:(?<![\w.-])[-−])?\d+(?:\.\d+)?)(?!\w)(?!\.\d)"
                  r"|\b(" + "|".join(_TENS[2:]) + r")(?:[-\s](" + "|".join(_ONES[1:10])
                  + r"))?\b|\b(" + "|".join(_ONES) + r")\b", re.I)


def _numbers(text: str) -> list[float]:
    """Every number in ``text``: digits, ``twenty-one`` style compounds, single words."""
    return [float(m[1].replace("−", "-")) if m[1] else float(_WORDS[(m[2] or m[4]).lower()] + (
        _WORDS[m[3].lower()] if m[3] else 0)) for m in _NUM.finditer(text)]


def _one_number(nums: list[float], method: str) -> Parsed:
    distinct = sorted(set(nums))
    if len(distinct) > 1:
        return Parsed(None, f"ambiguous: several numbers ({', '.join(f'{n:g}' for n in distinct)})",
                      method)
    if distinct[0] != int(distinct[0]):
        return Parsed(None, f"not a whole number: {distinct[0]:g}", method)
    if distinct[0] < 0:
        return Parsed(None, f"negative count: {distinct[0]:g}", method)
    return Parsed(int(distinct[0]), None, method)


def parse_number(text: str, tag: str | None = "count") -> Parsed:
    """A whole number >= 0 (digits or English words up to ninety-nine) from a count answer.

    Order: the ``[tag]`` content, a JSON value (keys ``tag``, ``count``, ``answer``,
    ``number``), an answer phrase (``Answer: 3``, ``total of five``), then every number in
    the text. Several different numbers in the deciding source are ambiguous (unparsed);
    a negative number (``-1``, ``−1``; not a hyphen between numbers as in ``3-4``) or a
    fraction is unparsed, since a count cannot be either.
    """
    body = clean_answer(text)
    if not body:
        return _fail("empty response")
    for content in _tag_contents(body, [tag] if tag else []):
        if nums := _numbers(content):
            return _one_number(nums, "tag")
    keys = {k for k in (tag, "count", "answer", "number") if k}
    vals = [str(v) for k, v in (parse_json_object(body).value or {}).items()
            if str(k).casefold() in keys]
    if nums := [n for v in vals for n in _numbers(v)]:
        return _one_number(nums, "json")
    phrase = re.compile(r"(?i:\b(?:answer|count|total|number)\b"
                        r"(?:\s+(?:is|are|of)\b|\s*[:：=]))\s*(\S+(?:[-\s]\w+)?)")
    if nums := [n for m in phrase.finditer(body) for n in _numbers(m.group(1))[:1]]:
        return _one_number(nums, "phrase")
    if nums := _numbers(body):
        return _one_number(nums, "text")
    return _fail("no number found")


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
