"""One answer parser for every benchmark: option letters, tagged open answers, JSON.

Numbers (counts) and relative positions are parsed by :mod:`.parsing_values` with the
same conventions.

Each function returns a :class:`Parsed`: ``value`` (a label, an int, a text or a dict) or
``None`` with ``reason`` saying why nothing valid was found. The caller turns a failed
parse into the ``unparsed`` outcome (counted wrong and in the invalid rate); nothing here
ever guesses a random option (DESIGN.md, rule 1).

Label and number answers are first normalised by small composable steps
(:func:`prepare_answer`): ``<think>`` blocks dropped, markdown and LaTeX wrappers removed
(:func:`strip_markup`: ``**A**``, ``*E*``, ``$A$``, ``\\boxed{C}``), full-width forms folded
to ASCII (:func:`fold_width`: ``Ｄ`` -> ``D``). Open answers keep :func:`clean_answer`.

Choice answers are read in three tiers; the first tier that finds anything decides, and
two *different* labels inside that tier make the answer ambiguous (unparsed):

1. assertions: the expected tag (``[option] B``, ``<option>B</option>``, or the generic
   ``[answer]``/``<answer>B</answer>``), a JSON object (``{"answer": "B"}``), an answer
   phrase (``Answer: B``, ``The answer is (B)``, ``I choose B``, ``C is correct``,
   ``The correct candidate is D``, ``The matching candidate is B``, ``答案：B``, ``选C``),
   a copula after it/this/that (``It is a C``, ``This is candidate D``) or an answer that is
   only the label (``B``, ``(B)``, ``B.``, ``B)``, ``**B**``, ``b``, ``Candidate C``,
   ``option b.``);
2. markers: a line starting with ``B.``/``B)``/``(B)``/``B:`` or ``option B`` /
   ``candidate B`` in a sentence;
3. echoed option: the whole answer equals one option's text (case-insensitive), else
   exactly one option text occurs as whole words (a longer option text hides a shorter one
   inside it: "Western Europe" is not also "Europe"); or an echoed bounding box (below).

Echoed boxes (decision, for box options such as MUSE activity localization, whose options
are boxes shown as ``[x, y, w, h]`` with no option text): a group of four numbers in
brackets or parentheses in the answer selects the option whose box (``option_boxes``)
matches it within :data:`BOX_TOLERANCE` on every coordinate. The prompt prints boxes with
3 decimals, so a faithful echo differs by at most 0.0005; 0.01 also accepts a model that
rounds to 2 decimals. A box matching no option is ignored; one matching two options, or two
boxes matching different options, is ambiguous (unparsed).

A label followed by text that begins with a *different* option's text ("B. Woman" when B is
Man) is a conflict. Single capital "A" and "I" followed by a lower-case word are read as the
English article / pronoun ("A woman is …"), never as labels. Decision for an article
before a single capital ("It is a C", "The answer is a C"): the article is skipped and the
capital is the label (labels are capitals; "a C" was read as label A before). A hedge
("C or D", "It is a C or a D") asserts both labels: ambiguous; so does a list after an
asserted label (``答案：A、C``, ``A, C``, ``A和C``, ``A/C``): a single-answer item given two
different options is unparsed, never the first of them. Chinese answer phrases are read
in simplified and traditional forms (``答案：B``, ``我选择 B``/``我選擇 B``, ``故选C``).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from heritage_eval.core.answer_text import _THINK, clean_answer, normalize_text, prepare_answer
from heritage_eval.core.answer_text import fold_width as fold_width  # re-exported
from heritage_eval.core.answer_text import strip_markup as strip_markup  # re-exported


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


#: Largest per-coordinate difference (normalized 0–1 units) for an echoed box to match.
BOX_TOLERANCE = 0.01
_BOX = re.compile(r"[\[\(]\s*" + r"\s*,\s*".join([r"(-?\d*\.?\d+)"] * 4) + r"\s*[\]\)]")

#: After a label: no further ASCII letter or digit (a CJK character may follow: "选C作为答案").
_LABEL_END = r"(?![^\W\u3400-\u9fff\uf900-\ufaff])"
#: An article before a single capital label ("The answer is a C"): skipped, never read as
#: the label "A" itself.
_LABEL_ARTICLE = r"(?:(?-i:an?|An?|the|The)\s+(?=(?-i:[A-Z])(?![A-Za-z0-9])))?"
_CONNECTIVES = {"because", "since", "as", "which", "for", "given", "so"}


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


def _box_options(text: str, option_boxes: Mapping[str, Sequence[float]] | None
                 ) -> list[str]:
    """Labels whose box an ``[x, y, w, h]`` group in ``text`` echoes (see module doc)."""
    if not option_boxes:
        return []
    found: set[str] = set()
    for m in _BOX.finditer(text):
        vals = [float(v) for v in m.groups()]
        found |= {lab for lab, box in option_boxes.items() if len(box) == 4 and all(
            abs(a - b) <= BOX_TOLERANCE + 1e-9 for a, b in zip(vals, box, strict=True))}
    return sorted(found)


def _check_trailing(label: str, after: str, option_texts: Mapping[str, str] | None
                    ) -> str | None:
    """Reason for a conflict when ``after`` begins with another option's text."""
    line = after.split("\n", 1)[0]
    hits = _text_options(line, option_texts, starts=True)
    if hits and label not in hits:
        return (f"label {label} contradicts the option text that follows it "
                f"(text of option {'/'.join(hits)})")
    return None


def _bare(content: str, labels: Sequence[str], option_texts: Mapping[str, str] | None,
          option_boxes: Mapping[str, Sequence[float]] | None = None
          ) -> tuple[list[str], str | None]:
    """Labels asserted by a short answer body (tag content, JSON value, the whole answer)."""
    s = content.strip()
    alt = _label_alt(labels)
    m = re.match(rf"^[\(\[\{{<]?\s*({alt})\s*[\)\]\}}>]?(?:[.:：)、,，]|(?=\s)|$)", s, re.I)
    if m and not _article(m.group(1), s[m.end():]) and (lab := _canon(m.group(1), labels)):
        after = s[m.end() - 1:] if s[m.end() - 1:m.end()] in "、,，" else s[m.end():]
        return [lab, *_also_asserted(after, labels)], _check_trailing(lab, after, option_texts)
    return _text_options(s, option_texts) or _box_options(s, option_boxes), None


def _also_asserted(after: str, labels: Sequence[str]) -> list[str]:
    """Further labels listed right after an asserted one: a hedge or a list (``A or B``,
    ``A/B``, ``A and B``, ``A、C``, ``A, C``, ``A或C``). The caller then sees two
    different labels and makes a single-answer item unparsed. After a comma or ``、`` the
    next label must be a capital exactly as offered, and ``A``/``I`` before a lower-case
    word stay the article / pronoun (``B, a boy``, ``C, I think`` add nothing).
    """
    out: list[str] = []
    alt = _label_alt(labels)
    pat = re.compile(r"\s*(?:(or|and|/|或者|或|和|与|與|及)|([、,，;；&]))\s*"
                     r"(?:(?:an?|the)\s+)?(?:candidate\s+|option\s+)?[\(\[]?"
                     rf"({alt}){_LABEL_END}[\)\]]?", re.I)
    while (m := pat.match(after)) and not _article(m.group(3), after[m.end():]):
        lab = m.group(3) if m.group(2) else _canon(m.group(3), labels)
        if lab is None or lab not in labels:
            break
        out.append(lab)
        after = after[m.end():]
    return out


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
                 tag: str | None = None,
                 option_boxes: Mapping[str, Sequence[float]] | None = None) -> Parsed:
    """Parse a multiple-choice answer into one of ``labels``.

    ``labels``: the option labels offered (``["A", "B", …]``). ``option_texts``: label ->
    option text, enabling echoed-text answers and conflict checks. ``tag``: the answer tag
    the prompt asked for (``"option"``, ``"emotion"``), without brackets. ``option_boxes``:
    label -> COCO ``[x, y, w, h]`` box (normalized 0–1) of box options, enabling echoed
    boxes (module doc). Returns the label or an unparsed :class:`Parsed` (empty answer, no
    answer found, ambiguous, conflicting).
    """
    body = prepare_answer(text)
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
        add(*_bare(content, labels, option_texts, option_boxes), "tag")
    obj = parse_json_object(body)
    if obj.ok:
        for key, val in obj.value.items():
            if str(key).casefold() in {*tags, "choice", "final_answer", "label"} and val:
                add(*_bare(str(val), labels, option_texts, option_boxes), "json")
    phrase = re.compile(
        r"(?i:\b(?:final answer|correct answer|correct option|correct choice|best option|"
        r"right option|(?:correct|right|best|matching|closest) (?:candidate|match)|"
        r"answer|choose|chose|select|selected|pick|picked|go with)"
        r"(?:\s+(?:is|would be|should be|will be))?\s*(?:option\s+|choice\s+|candidate\s+)?"
        rf"[:：=\-]?\s*{_LABEL_ARTICLE}|答案\s*(?:是|为|為|应为|應為)?\s*[:：]?\s*|"
        r"(?<!候)(?:选择|選擇|选项|選項|选|選)\s*(?:是|为|為)?\s*[:：]?\s*|"
        r"(?:我认为|我認為|认为|認為|应该|應該|应|應)\s*(?:是|为|為|选|選)\s*[:：]?\s*)"
        rf"[\(\[]?({alt}){_LABEL_END}[\)\]]?", re.I)
    # "It is a C", "This is candidate D": a copula after it/this/that asserts the label
    # (labels are capitals here, so "It is a C" reads the article "a", then the label C)
    copula = re.compile(
        r"(?i:\b(?:it|this|that|the (?:target|image|character|match))"
        r"(?:'s|’s|\s+is|\s+must be|\s+would be|\s+should be)\s+"
        r"(?:(?:an?|the)\s+)?(?:candidate\s+|option\s+)?)"
        rf"[\(\[]?({alt}){_LABEL_END}[\)\]]?")
    for m in [*phrase.finditer(body), *copula.finditer(body)]:
        if _article(m.group(1), body[m.end():]):
            continue
        lab = _canon(m.group(1), labels)
        if lab:
            add([lab, *_also_asserted(body[m.end():], labels)],
                _check_trailing(lab, body[m.end():].lstrip(" .:)"), option_texts), "phrase")
    # "C is correct", "(B) is the right answer": the verb makes "A is" a label, not an article
    for m in re.finditer(rf"(?<![\w])[\(\[]?({alt})[\)\]]?\s+is\s+(?:the\s+)?"
                         r"(?:correct|right|best)\b", body, re.I):
        add([lab] if (lab := _canon(m.group(1), labels)) else [], None, "phrase")
    bare = re.fullmatch(rf"(?:(?:the\s+)?(?:candidate|option|choice)\s*)?[\(\[]?\s*({alt})\s*"
                        r"[\)\]]?\s*[.。]?", body, re.I)
    if bare:
        lab = _canon(bare.group(1), labels)
        add([lab] if lab else [], None, "bare")
    if found or conflicts:
        return _resolve(found, methods[0], conflicts)
    # tier 2: line-start markers and "option B"
    marker = re.compile(rf"(?m)^\s*[\(\[]?({alt})(?:[\)\].:：]|(?=[,，、]))(?=[\s,，、]|$)")
    for m in marker.finditer(body):
        add([m.group(1), *_also_asserted(body[m.end():], labels)],
            _check_trailing(m.group(1), body[m.end():], option_texts), "marker")
    for m in re.finditer(rf"(?i:\b(?:option|candidate))\s+[\(\[]?({alt})(?![\w])", body):
        add([m.group(1)], None, "marker")
    if found or conflicts:
        return _resolve(found, "marker", conflicts)
    # tier 3: echoed option text or option box
    hits = sorted(set(_text_options(body, option_texts)) | set(_box_options(body, option_boxes)))
    if hits:
        return _resolve(hits, "text", [])
    return _fail("no option label or option text found")


# ---------------------------------------------------------------- tags and JSON
def _tag_contents(text: str, tags: set[str] | Sequence[str]) -> list[str]:
    """Contents of every ``[tag] …`` (or ``tag: …`` at a line start, or ``<tag>…</tag>``)
    for any of ``tags``. A ``[tag]`` content runs to the next bracketed tag or the end."""
    out = []
    for tag in tags:
        t = re.escape(tag.strip()).replace(r"\ ", r"[\s_]+")
        pat = re.compile(rf"(?:\[\s*{t}\s*\]|(?m:^\s*{t}\s*[:：]))\s*[:：]?\s*"
                         r"(.*?)(?=\[[^\]\n]{1,40}\]|\Z)", re.I | re.S)
        out += [m.group(1).strip() for m in pat.finditer(text)]
        xml = re.compile(rf"<\s*{t}\s*>(.*?)<\s*/\s*{t}\s*>", re.I | re.S)
        out += [m.group(1).strip() for m in xml.finditer(text)]
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
