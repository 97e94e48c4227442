"""Multiple-choice answers: one option label, or unparsed (the rule in
``docs/answer-extraction.md``; summarised in :mod:`heritage_eval.core.parsing`).

The answer (after :func:`~heritage_eval.core.answer_text.prepare_choice`) is read into
*declarations*: ``(label, level, position, kind)``. Levels, strongest first:

0. final: ``Final answer: C``, ``最终答案：C``;
1. assertion: a tag (``[option] B``, ``<answer>B</answer>``, ``Answer: B`` line), a JSON
   answer, an answer phrase (``The answer is (B)``, ``答案是B``, ``选B``, ``I choose B``,
   ``C is correct``, ``It is a C``), a line that is only the label (``B``, ``(B)``,
   ``B.``, ``Option b``), a revision (``No wait, B``, ``不对，选B``);
2. mention: a line starting ``B.``/``B)``/``(B)``/``B:``, ``option B`` in a sentence, a
   hedge (``maybe B``, ``可能是B``);
3. echo: the option's text or box (``Running script``, ``[0.35, 0.27, 0.36, 0.71]``).

The strongest level present decides; two different labels there are unparsed. A label
used negatively (``B is wrong``, ``B不对``), an article or pronoun (``A woman``, ``I
think``) and a letter inside a word or abbreviation (``Based``, ``e.g.``, ``C-shaped``)
declare nothing, and so does a label followed by an operator (``A+``, ``C#``). A label
outside the offered set (``E`` when ``A``–``D`` are offered) counts as a declaration of
another option at levels 0–1, is flagged ``out_of_set`` and is never returned.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from heritage_eval.core.answer_text import (
    normalize_text,
    prepare_answer,
    strip_list_prefix,
    unquote_labels,
)
from heritage_eval.core.parsing_base import (
    HEDGED,
    OUT_OF_SET,
    OVERRODE_OTHER,
    REPEATED,
    REVISED,
    SEVERAL_BLOCKS,
    SEVERAL_OPTIONS,
    TEXT_CONFLICT,
    Parsed,
    _fail,
    _tag_blocks,
    parse_json_object,
)
from heritage_eval.core.parsing_forms import (
    _BARE_LINE,
    _CONCLUSION,
    _CONNECTIVES,
    _COPULA,
    _FINAL,
    _HEDGE,
    _LABEL_END,
    _NEGATED,
    _NO_ARTICLE_BEFORE,
    _PHRASE,
    _REVISION,
    _TAIL,
)

#: Largest per-coordinate difference (normalized 0–1 units) for an echoed box to match.
BOX_TOLERANCE = 0.01
_BOX = re.compile(r"[\[\(]\s*" + r"\s*,\s*".join([r"(-?\d*\.?\d+)"] * 4) + r"\s*[\]\)]")


@dataclass(frozen=True)
class _Decl:
    label: str
    level: int  # 0 final, 1 assertion, 2 mention, 3 echo
    pos: int  # offset of the label in the prepared answer (negative: JSON, no offset)
    kind: str  # final, tag, json, phrase, bare, revision, marker, mention, hedge, or, text


def _with_out_of_set(labels: Sequence[str]) -> list[str]:
    """``labels`` followed by the other letters of their alphabet (``A``–``Z`` for capital
    single-letter labels, ``a``–``z`` for lower-case ones), which are read too so that a
    declared label outside the offered set is seen (and never returned); other label sets
    are returned as they are."""
    out = list(labels)
    if out and all(len(lab) == 1 and lab.isascii() and lab.isalpha() for lab in out):
        case = {lab.isupper() for lab in out}
        if len(case) == 1:
            letters = string.ascii_uppercase if case.pop() else string.ascii_lowercase
            out += [c for c in letters if c not in out]
    return out


def _label_alt(labels: Sequence[str]) -> str:
    return "|".join(re.escape(lab) for lab in sorted(labels, key=len, reverse=True))


def _canon(letter: str, labels: Sequence[str]) -> str | None:
    if letter in labels:
        return letter
    hits = [lab for lab in labels if lab.casefold() == letter.casefold()]
    return hits[0] if len(hits) == 1 else None


def _article(letter: str, after: str) -> bool:
    """An article / pronoun, not a label: ``A``/``I`` followed on the same line by a
    lower-case word (``A woman``, ``I think``), or lower-case ``a``/``i`` followed by any
    word (``maybe a Chinese work``); a connective (``A because …``) ends the label."""
    m = re.match(r"[ \t]+([A-Za-z]+)", after)
    if m is None or m.group(1).casefold() in (
            _NO_ARTICLE_BEFORE if letter in "Aa" else _CONNECTIVES):
        return False
    return letter in {"a", "i"} or (letter in {"A", "I"} and m.group(1).islower())


def _declares(letter: str, after: str) -> bool:
    """Whether a label read before ``after`` is declared: not an article / pronoun and
    not used negatively."""
    return not _article(letter, after) and not _NEGATED.match(after)


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
    line = after.lstrip(" .:)]").split("\n", 1)[0]
    hits = _text_options(line, option_texts, starts=True)
    if hits and label not in hits:
        return (f"label {label} contradicts the option text that follows it "
                f"(text of option {'/'.join(hits)})")
    return None


def _also_asserted(after: str, labels: Sequence[str], offset: int
                   ) -> list[tuple[str, int, bool]]:
    """Further labels listed right after an asserted one, as ``(label, position, or)``:
    a hedge or a list (``A or B``, ``A/B``, ``A and B``, ``A、C``, ``A, C``, ``A或C``);
    ``or`` is true for a hedge (``or``/``或``). After a comma or ``、`` the next label
    must be a capital exactly as offered, and ``A``/``I`` before a lower-case word stay
    the article / pronoun (``B, a boy``, ``C, I think`` add nothing). ``offset``: where
    ``after`` starts in the answer."""
    out: list[tuple[str, int, bool]] = []
    alt = _label_alt(labels)
    pat = re.compile(r"[ \t]*(?:(or|and|/|或者|或|和|与|與|及)|([、,，;；&]))[ \t]*"
                     r"(?:(?:maybe|perhaps|possibly|probably|也许|可能)[ \t]*)?"
                     r"(?:(?:an?|the)\s+)?(?:candidate\s+|option\s+)?[\(\[]?"
                     rf"({alt}){_LABEL_END}[\)\]]?", re.I)
    pos = 0
    while (m := pat.match(after, pos)) and _declares(m.group(3), after[m.end():]):
        lab = m.group(3) if m.group(2) else _canon(m.group(3), labels)
        if lab is None or lab not in labels:
            break
        out.append((lab, offset + m.start(3), bool(m.group(1)) and
                    m.group(1).casefold() in {"or", "或", "或者"}))
        pos = m.end()
    return out


class _Reader:
    """Collects the declarations of one answer (see the module docstring)."""

    def __init__(self, body: str, labels: Sequence[str],
                 option_texts: Mapping[str, str] | None,
                 option_boxes: Mapping[str, Sequence[float]] | None,
                 json_text: str | None = None) -> None:
        self.body, self.valid = body, set(labels)
        self.json_text = body if json_text is None else json_text
        self.labels = _with_out_of_set(labels)
        self.texts, self.boxes = option_texts, option_boxes
        self.alt = _label_alt(self.labels)
        self.decls: list[_Decl] = []
        self.conflicts: list[tuple[int, str]] = []  # (level, reason)
        self.blocks = 0

    def add(self, label: str, level: int, pos: int, kind: str, after: str | None = None,
            after_pos: int = -1) -> None:
        """One declaration; with ``after`` (the text after the label, starting at
        ``after_pos``) also the labels listed after it and a text conflict check. A label
        outside the offered set counts only at levels 0–1 (a mention, hedge or marker of
        one is no declaration)."""
        if label not in self.valid and level >= 2:
            return
        self.decls.append(_Decl(label, level, pos, kind))
        if after is None:
            return
        for lab, p, hedge in _also_asserted(after, self.labels, after_pos):
            if lab in self.valid or level < 2:
                self.decls.append(_Decl(lab, level, p, "or" if hedge else kind))
        if reason := _check_trailing(label, after, self.texts):
            self.conflicts.append((level, reason))

    def short(self, content: str, pos: int, level: int, kind: str) -> None:
        """A short answer body (tag content, JSON value): a label at its start, else the
        option texts / boxes it names."""
        alt = self.alt
        m = re.match(r"(?:(?:the\s+)?(?:candidate|option|choice)\s*[:：]?\s*)?"
                     rf"[\(\[\{{<]?\s*({alt})\s*[\)\]\}}>]?(?:[.:：)、,，]|(?=\s)|$)",
                     content, re.I)
        if m and _declares(m.group(1), content[m.end():]) and (
                lab := _canon(m.group(1), self.labels)):
            cut = m.end() - 1 if content[m.end() - 1:m.end()] in "、,，" else m.end()
            self.add(lab, level, pos + m.start(1), kind, content[cut:],
                     pos + cut if pos >= 0 else pos)
            return
        for lab in _text_options(content, self.texts) or _box_options(content, self.boxes):
            self.add(lab, level, pos, kind)

    def pattern(self, lead: str, level: int, kind: str, fold: bool = True) -> None:
        """Every ``lead`` + label match in the answer; ``fold``: a lower-case label
        counts (``answer: b``)."""
        flags = re.I if fold else 0
        for m in re.finditer(f"(?:{lead})" + _TAIL.format(alt=self.alt), self.body, flags):
            after = self.body[m.end():]
            lab = _canon(m.group(1), self.labels) if fold else m.group(1)
            if lab and _declares(m.group(1), after):
                self.add(lab, level, m.start(1), kind, after, m.end())

    def read(self, tag: str | None) -> None:
        body, alt = self.body, self.alt
        self.pattern(_FINAL, 0, "final")
        for pos, content in _tag_blocks(body, {t for t in (tag, "option", "answer") if t}):
            if content:
                self.blocks += 1
                self.short(content, pos, 1, "tag")
        obj = parse_json_object(self.json_text)
        if obj.ok:
            keys = {t for t in (tag, "option", "answer") if t} | {
                "choice", "final_answer", "label"}
            for i, (key, val) in enumerate(obj.value.items()):
                if str(key).casefold() in keys and val:
                    self.blocks += 1
                    self.short(str(val), -1 - i, 1, "json")
        self.pattern(_PHRASE, 1, "phrase")
        self.pattern(_COPULA, 1, "phrase", fold=False)
        for m in re.finditer(rf"(?<![\w])[\(\[]?({alt})[\)\]]?\s+is\s+(?:(?:the\s+)?"
                             r"(?:correct|right|best)\b|(?:the|my|our)\s+(final\s+)?answer\b|"
                             r"my\s+(final\s+)?(?:choice|pick)\b)", body, re.I):
            if lab := _canon(m.group(1), self.labels):
                final = bool(m.group(2) or m.group(3))
                self.add(lab, 0 if final else 1, m.start(1), "final" if final else "phrase")
        for m in re.finditer(_CONCLUSION.replace("{alt}", alt), body):
            self.add(m.group(1), 1, m.start(1), "phrase")
        for m in re.finditer(_BARE_LINE.replace("{alt}", alt), body, re.I):
            if lab := _canon(m.group(1), self.labels):
                self.add(lab, 1, m.start(1), "bare")
            hedge = re.search(r"(?i:\bor\b)|或", m.group(2))
            for more in re.finditer(rf"(?<![^\W\d_])({alt})(?![^\W\d_])", m.group(2), re.I):
                if lab := _canon(more.group(1), self.labels):
                    self.add(lab, 1, m.start(2) + more.start(1), "or" if hedge else "bare")
        self.pattern(_REVISION, 1, "revision")
        marker = rf"(?m)^[ \t]*[\(\[]?({alt})(?:[\)\].:：]|(?=[,，、]))(?=[\s,，、]|$)"
        for m in re.finditer(marker, body):
            if not _NEGATED.match(body[m.end():]):
                self.add(m.group(1), 2, m.start(1), "marker", body[m.end():], m.end())
        self.pattern(_HEDGE, 2, "hedge")
        for m in re.finditer(rf"(?i:\b(?:option|candidate))\s+[\(\[]?({alt}){_LABEL_END}",
                             body):
            if _declares(m.group(1), body[m.end():]):
                self.add(m.group(1), 2, m.start(1), "mention")
        if not self.decls and not self.conflicts:
            hits = set(_text_options(body, self.texts)) | set(_box_options(body, self.boxes))
            for lab in sorted(hits):
                self.add(lab, 3, -1, "text")


def _decide(r: _Reader) -> Parsed:
    """The rule's decision over the declarations of ``r`` (module docstring)."""
    best: dict[tuple[int, str], _Decl] = {}
    for d in r.decls:  # one declaration per (position, label): its strongest reading
        key = (d.pos, d.label)
        if key not in best or d.level < best[key].level:
            best[key] = d
    decls = [d for d in r.decls if best[(d.pos, d.label)] is d]
    # every reading of one declaration counts for the flags ("也许选B": a phrase and a hedge)
    kinds: dict[tuple[int, str], set[str]] = {}
    for d in r.decls:
        kinds.setdefault((d.pos, d.label), set()).add(d.kind)
    flags: set[str] = set()
    if any(d.label not in r.valid for d in decls):
        flags.add(OUT_OF_SET)
    if r.blocks > 1:
        flags.add(SEVERAL_BLOCKS)
    if any("revision" in k for k in kinds.values()):
        flags.add(REVISED)
    levels = [d.level for d in decls] + [lv for lv, _ in r.conflicts]
    if not levels:
        return _fail("no option label or option text found", flags)
    level = min(levels)
    at = [d for d in decls if d.level == level]
    method = at[0].kind if at else None
    if method in ("or", "mention"):
        method = "marker"
    if any(kinds[(d.pos, d.label)] & {"hedge", "or"} for d in at):
        flags.add(HEDGED)
    if conflicts := [reason for lv, reason in r.conflicts if lv == level]:
        flags.add(TEXT_CONFLICT)
        return Parsed(None, conflicts[0], method, tuple(sorted(flags)))
    distinct = sorted({d.label for d in at})
    if len(distinct) > 1:
        flags.add(SEVERAL_OPTIONS)
        return Parsed(None, f"ambiguous: several options asserted ({', '.join(distinct)})",
                      method, tuple(sorted(flags)))
    label = distinct[0]
    if label not in r.valid:
        return Parsed(None, f"declared label {label} is not one of the options "
                      f"({', '.join(sorted(r.valid))})", method, tuple(sorted(flags)))
    # declarations that count for the flags and the revision rule: levels 0-2 except an
    # "option X" mentioned in a sentence
    declared = [d for d in decls if d.level <= 2 and d.kind != "mention"]
    others = sorted({d.label for d in declared if d.label != label})
    if level > 0 and REVISED in flags and others:
        flags.add(SEVERAL_OPTIONS)
        return Parsed(None, f"revised without a final answer: options {label} and "
                      f"{', '.join(others)} declared", method, tuple(sorted(flags)))
    if others:
        flags.add(OVERRODE_OTHER)
    if sum(d.label == label for d in declared) > 1:
        flags.add(REPEATED)
    return Parsed(label, None, method, tuple(sorted(flags)))


def parse_choice(text: str, labels: Sequence[str],
                 option_texts: Mapping[str, str] | None = None,
                 tag: str | None = None,
                 option_boxes: Mapping[str, Sequence[float]] | None = None) -> Parsed:
    """Parse a multiple-choice answer into one of ``labels`` (rule: module docstring and
    ``docs/answer-extraction.md``).

    ``labels``: the option labels offered (``["A", "B", …]``). ``option_texts``: label ->
    option text, enabling echoed-text answers and conflict checks. ``tag``: the answer tag
    the prompt asked for (``"option"``, ``"emotion"``), without brackets. ``option_boxes``:
    label -> COCO ``[x, y, w, h]`` box (normalized 0–1) of box options, enabling echoed
    boxes within :data:`BOX_TOLERANCE` per coordinate. Returns the label, or an unparsed
    :class:`~heritage_eval.core.parsing_base.Parsed` with its reason (empty answer, no
    answer found, ambiguous, revised, conflicting); ``flags`` on both. Never raises for
    any ``str``.
    """
    # prepare_choice, with JSON read before the quotes around a label go ('{"answer": "B"}')
    quoted = strip_list_prefix(prepare_answer(text)).strip()
    body = unquote_labels(quoted).strip()
    if not body:
        return _fail("empty response")
    reader = _Reader(body, labels, option_texts, option_boxes, json_text=quoted)
    reader.read(tag)
    return _decide(reader)
