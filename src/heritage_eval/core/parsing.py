"""One answer parser for every benchmark: option letters, numbers, tagged open answers, JSON.

Each function returns a :class:`Parsed`: ``value`` (a label, an int, a text or a dict) or
``None`` with ``reason`` saying why nothing valid was found. The caller turns a failed
parse into the ``unparsed`` outcome (counted wrong and in the invalid rate); nothing here
ever guesses a random option (DESIGN.md, rule 1).

Choice answers are read in three tiers; the first tier that finds anything decides, and
two *different* labels inside that tier make the answer ambiguous (unparsed):

1. assertions: the expected tag (``[option] B``, or the generic ``[answer]``/``[option]``),
   a JSON object (``{"answer": "B"}``), an answer phrase (``Answer: B``, ``The answer is
   (B)``, ``I choose B``, ``答案：B``) or an answer that is only the label (``B``, ``(B)``,
   ``B.``, ``B)``, ``**B**``, ``b``);
2. markers: a line starting with ``B.``/``B)``/``(B)``/``B:`` or ``option B`` in a sentence;
3. echoed option text: the whole answer equals one option's text (case-insensitive), else
   exactly one option text occurs as whole words (a longer option text hides a shorter one
   inside it: "Western Europe" is not also "Europe").

A label followed by text that begins with a *different* option's text ("B. Woman" when B is
Man) is a conflict. Single capital "A" and "I" followed by a lower-case word are read as the
English article / pronoun ("A woman is …"), never as labels.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Parsed:
    """Result of parsing one model answer.

    ``value``: label (str), number (int), text (str) or dict; ``None`` when unparsed.
    ``reason``: why the answer is unparsed (``None`` when parsed). ``method``: which rule
    matched (``tag``, ``json``, ``phrase``, ``bare``, ``marker``, ``text``, ``untagged``).
    """

    value: Any = None
    reason: str | None = None
    method: str | None = None

    @property
    def ok(self) -> bool:
        """True when a valid value was extracted."""
        return self.value is not None and self.reason is None


def _fail(reason: str) -> Parsed:
    return Parsed(None, reason)


_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_EMPH = re.compile(r"\*\*|__|`")
_CONNECTIVES = {"because", "since", "as", "which", "for", "given", "so"}


def clean_answer(text: str) -> str:
    """Drop ``<think>…</think>`` blocks, code fences and markdown emphasis; strip."""
    text = _THINK.sub(" ", text or "")
    text = re.sub(r"```[a-zA-Z]*", " ", text)
    return _EMPH.sub("", text).strip()


def normalize_text(text: str) -> str:
    """Case-folded text with collapsed whitespace and outer punctuation/quotes removed."""
    text = re.sub(r"\s+", " ", text.casefold()).strip()
    return text.strip(" \t.,;:!?\"'“”‘’()[]{}<>-–—*_。，：；！？")


# ---------------------------------------------------------------- multiple choice
def _label_alt(labels: Sequence[str]) -> str:
    return "|".join(re.escape(lab) for lab in sorted(labels, key=len, reverse=True))


def _canon(letter: str, labels: Sequence[str]) -> str | None:
    if letter in labels:
        return letter
    hits = [lab for lab in labels if lab.casefold() == letter.casefold()]
    return hits[0] if len(hits) == 1 else None


def _article(letter: str, after: str) -> bool:
    """``A``/``I`` followed by a lower-case word is an article / pronoun, not a label."""
    m = re.match(r"\s+([a-z]+)", after)
    return letter in {"A", "I", "a", "i"} and m is not None and m.group(1) not in _CONNECTIVES


def _text_options(text: str, option_texts: Mapping[str, str] | None,
                  starts: bool = False) -> list[str]:
    """Labels whose option text the text equals / starts with (``starts``) / contains.

    Matches are whole-word and case-insensitive; a match inside a longer match is dropped.
    """
    norm = normalize_text(text)
    if not option_texts or not norm:
        return []
    exact = [lab for lab, t in option_texts.items() if t and normalize_text(t) == norm]
    if exact:
        return exact
    spans: list[tuple[int, int, str]] = []
    for lab, t in option_texts.items():
        nt = normalize_text(t or "")
        if not nt:
            continue
        pat = re.compile(r"(?<!\w)" + re.escape(nt) + r"(?!\w)")
        for m in pat.finditer(norm):
            if not starts or m.start() == 0:
                spans.append((m.start(), m.end(), lab))
    kept = [s for s in spans if not any(o[0] <= s[0] and s[1] <= o[1] and o[1] - o[0] >
                                        s[1] - s[0] for o in spans)]
    return sorted({lab for _, _, lab in kept})


def _check_trailing(label: str, after: str, option_texts: Mapping[str, str] | None
                    ) -> str | None:
    """Reason for a conflict when ``after`` begins with another option's text."""
    line = after.split("\n", 1)[0]
    hits = _text_options(line, option_texts, starts=True)
    if hits and label not in hits:
        return (f"label {label} contradicts the option text that follows it "
                f"(text of option {'/'.join(hits)})")
    return None


def _bare(content: str, labels: Sequence[str], option_texts: Mapping[str, str] | None
          ) -> tuple[list[str], str | None]:
    """Labels asserted by a short answer body (tag content, JSON value, the whole answer)."""
    s = content.strip()
    alt = _label_alt(labels)
    m = re.match(rf"^[\(\[\{{<]?\s*({alt})\s*[\)\]\}}>]?(?:[.:：)、]|(?=\s)|$)", s, re.I)
    if m and not _article(m.group(1), s[m.end():]) and (lab := _canon(m.group(1), labels)):
        return [lab], _check_trailing(lab, s[m.end():], option_texts)
    return _text_options(s, option_texts), None


def _resolve(found: list[str], method: str, conflicts: list[str]) -> Parsed:
    distinct = sorted(set(found))
    if conflicts:
        return Parsed(None, conflicts[0], method)
    if len(distinct) > 1:
        return Parsed(None, f"ambiguous: several options asserted ({', '.join(distinct)})",
                      method)
    return Parsed(distinct[0], None, method)


def parse_choice(text: str, labels: Sequence[str],
                 option_texts: Mapping[str, str] | None = None,
                 tag: str | None = None) -> Parsed:
    """Parse a multiple-choice answer into one of ``labels``.

    ``labels``: the option labels offered (``["A", "B", …]``). ``option_texts``: label ->
    option text, enabling echoed-text answers and conflict checks. ``tag``: the answer tag
    the prompt asked for (``"option"``, ``"emotion"``), without brackets. Returns the label
    or an unparsed :class:`Parsed` (empty answer, no answer found, ambiguous, conflicting).
    """
    body = clean_answer(text)
    if not body:
        return _fail("empty response")
    labels = list(labels)
    alt = _label_alt(labels)
    found: list[str] = []
    conflicts: list[str] = []
    methods: list[str] = []

    def add(labs: list[str], conflict: str | None, method: str) -> None:
        found.extend(labs)
        conflicts.extend([conflict] if conflict else [])
        methods.extend([method] if labs or conflict else [])

    # tier 1: assertions
    tags = {t for t in (tag, "option", "answer") if t}
    for content in _tag_contents(body, tags):
        add(*_bare(content, labels, option_texts), "tag")
    obj = parse_json_object(body)
    if obj.ok:
        for key, val in obj.value.items():
            if str(key).casefold() in {*tags, "choice", "final_answer", "label"} and val:
                add(*_bare(str(val), labels, option_texts), "json")
    phrase = re.compile(
        r"(?i:\b(?:final answer|correct answer|correct option|correct choice|best option|"
        r"right option|answer|choose|chose|select|selected|pick|picked|go with)"
        r"(?:\s+(?:is|would be|should be|will be))?\s*(?:option\s+|choice\s+)?"
        r"[:：=\-]?\s*|答案\s*(?:是|为)?\s*[:：]?\s*)"
        rf"[\(\[]?({alt})(?![\w])[\)\]]?", re.I)
    for m in phrase.finditer(body):
        if _article(m.group(1), body[m.end():]):
            continue
        lab = _canon(m.group(1), labels)
        if lab:
            add([lab], _check_trailing(lab, body[m.end():].lstrip(" .:)"), option_texts),
                "phrase")
    if re.fullmatch(rf"[\(\[]?\s*({alt})\s*[\)\]]?\s*[.。]?", body, re.I):
        lab = _canon(re.sub(r"[^\w]", "", body), labels)
        add([lab] if lab else [], None, "bare")
    if found or conflicts:
        return _resolve(found, methods[0], conflicts)
    # tier 2: line-start markers and "option B"
    marker = re.compile(rf"(?m)^\s*[\(\[]?({alt})[\)\].:：](?=\s|$)")
    for m in marker.finditer(body):
        add([m.group(1)], _check_trailing(m.group(1), body[m.end():], option_texts), "marker")
    for m in re.finditer(rf"(?i:\boption)\s+[\(\[]?({alt})(?![\w])", body):
        add([m.group(1)], None, "marker")
    if found or conflicts:
        return _resolve(found, "marker", conflicts)
    # tier 3: echoed option text
    hits = _text_options(body, option_texts)
    if hits:
        return _resolve(hits, "text", [])
    return _fail("no option label or option text found")


# ---------------------------------------------------------------- tags and JSON
def _tag_contents(text: str, tags: set[str] | Sequence[str]) -> list[str]:
    """Contents of every ``[tag] …`` (or ``tag: …`` at a line start) for any of ``tags``.

    A content runs to the next bracketed tag or the end of the text.
    """
    out = []
    for tag in tags:
        t = re.escape(tag.strip()).replace(r"\ ", r"[\s_]+")
        pat = re.compile(rf"(?:\[\s*{t}\s*\]|(?m:^\s*{t}\s*[:：]))\s*[:：]?\s*"
                         r"(.*?)(?=\[[^\]\n]{1,40}\]|\Z)", re.I | re.S)
        out += [m.group(1).strip() for m in pat.finditer(text)]
    return out


def parse_tagged(text: str, tag: str) -> Parsed:
    """The open answer after ``[tag]`` (e.g. ``[visual clues] the raised brows …``).

    Decision: if no ``[tag]`` is present and the answer carries no other bracketed tag,
    the whole cleaned answer is taken (``method="untagged"``): open answers are scored by
    meaning, and a model that omits the tag still answered the question. An answer that
    only carries *other* tags (``[emotion] Joy`` when visual clues were asked) or is empty
    is unparsed. Several ``[tag]`` sections are joined with a space.
    """
    body = clean_answer(text)
    if not body:
        return _fail("empty response")
    parts = [p for p in _tag_contents(body, [tag]) if p]
    if parts:
        return Parsed(" ".join(parts), None, "tag")
    if _tag_contents(body, [tag]):
        return _fail(f"[{tag}] present but empty")
    other = re.findall(r"\[([^\]\n]{1,40})\]", body)
    if other:
        return _fail(f"expected [{tag}], found only [{other[0]}]")
    return Parsed(body, None, "untagged")


def parse_json_object(text: str) -> Parsed:
    """The first JSON object in the answer (fenced or inline; Python-dict quoting accepted).

    Returns a dict value, or unparsed when no object decodes.
    """
    body = _THINK.sub(" ", text or "")
    start = body.find("{")
    while start != -1:
        depth = 0
        for i in range(start, len(body)):
            depth += {"{": 1, "}": -1}.get(body[i], 0)
            if depth == 0:
                chunk = body[start:i + 1]
                for loader in (json.loads, ast.literal_eval):
                    try:
                        obj = loader(chunk)
                    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                        continue
                    if isinstance(obj, dict):
                        return Parsed(obj, None, "json")
                break
        start = body.find("{", start + 1)
    return _fail("no JSON object found")


# ---------------------------------------------------------------- numbers
_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORDS = {w: i for i, w in enumerate(_ONES)} | {w: 10 * i for i, w in enumerate(_TENS) if w}
_NUM = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?!\w)(?!\.\d)|\b(" + "|".join(_TENS[2:]) +
                  r")(?:[-\s](" + "|".join(_ONES[1:10]) + r"))?\b|\b(" + "|".join(_ONES) +
                  r")\b", re.I)


def _numbers(text: str) -> list[float]:
    """Every number in ``text``: digits, ``twenty-one`` style compounds, single words."""
    return [float(m[1]) if m[1] else float(_WORDS[(m[2] or m[4]).lower()] + (
        _WORDS[m[3].lower()] if m[3] else 0)) for m in _NUM.finditer(text)]


def _one_number(nums: list[float], method: str) -> Parsed:
    distinct = sorted(set(nums))
    if len(distinct) > 1:
        return Parsed(None, f"ambiguous: several numbers ({', '.join(f'{n:g}' for n in distinct)})",
                      method)
    if distinct[0] != int(distinct[0]):
        return Parsed(None, f"not a whole number: {distinct[0]:g}", method)
    return Parsed(int(distinct[0]), None, method)


def parse_number(text: str, tag: str | None = "count") -> Parsed:
    """A whole number (digits or English words up to ninety-nine) from a count answer.

    Order: the ``[tag]`` content, a JSON value (keys ``tag``, ``count``, ``answer``,
    ``number``), an answer phrase (``Answer: 3``, ``total of five``), then every number in
    the text. Several different numbers in the deciding source are ambiguous (unparsed).
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


def parse_position(text: str) -> Parsed:
    """Three tagged dimensions ``[lateral] left|none|right``, ``[depth] front|none|back``,
    ``[vertical] above|none|under`` (or a JSON object with those keys).

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
        contents = _tag_contents(body, [dim])
        contents += [str(v) for k, v in obj.items() if str(k).casefold() == dim]
        if not contents:
            return _fail(f"no [{dim}] answer")
        found: set[str] = set()
        for c in contents:
            first = normalize_text(c.split("\n", 1)[0])
            words = re.findall(r"in front|[a-z]+", first)
            found |= {vocab[w] for w in words if w in vocab}
        if len(found) != 1:
            return _fail(f"[{dim}] answer is " + ("ambiguous" if found else "not one of "
                                                  + "/".join(sorted(set(vocab.values())))))
        out[dim] = found.pop()
    return Parsed(out, None, "tag")
