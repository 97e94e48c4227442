"""What every answer parser shares: the :class:`Parsed` result with its flags, answer
blocks (``[tag] …``, ``<tag>…</tag>``, ``tag: …``) and JSON objects.

Part of the unified parser (:mod:`heritage_eval.core.parsing`); the rule is written down
in ``docs/answer-extraction.md``.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from heritage_eval.core.answer_text import drop_reasoning

# Flags: something unusual the parser met (decided or not). They go into
# ``SampleRecord.details["parse_flags"]``; their meaning is documented in
# ``docs/answer-extraction.md``.
#: More than one answer block (``[option]``, ``<answer>``, ``Answer:`` lines, JSON
#: answers, ``<res>`` blocks, ``[count]`` tags).
SEVERAL_BLOCKS = "several_blocks"
#: The decided value was declared more than once ("B … so the answer is B").
REPEATED = "repeated"
#: Two different values declared where the rule had to decide (the answer is unparsed).
SEVERAL_OPTIONS = "several_options"
#: A revision marker ("no wait", "actually", "不对") introduced a declaration.
REVISED = "revised"
#: The value was read from a hedge ("maybe B"), or a hedge named two ("B or C").
HEDGED = "hedged"
#: A stronger declaration decided over a weaker one naming another value
#: ("Maybe A … Answer: C", "A. … Final answer: C").
OVERRODE_OTHER = "overrode_other"
#: A label followed by a different option's text ("B. Man" when B is Woman).
TEXT_CONFLICT = "text_conflict"
#: A declaration named a label outside the offered options ("Answer: E" when A–D are
#: offered); such a label is never returned.
OUT_OF_SET = "out_of_set"
#: ``<res>`` blocks (or other answer blocks) whose contents differ.
BLOCKS_DIFFER = "blocks_differ"
#: An answer block opened and never closed.
UNCLOSED_BLOCK = "unclosed_block"


@dataclass(frozen=True)
class Parsed:
    """Result of parsing one model answer.

    ``value``: label (str), number (int), text (str) or dict; ``None`` when unparsed.
    ``reason``: why the answer is unparsed (``None`` when parsed). ``method``: which rule
    matched (``final``, ``tag``, ``json``, ``phrase``, ``bare``, ``revision``,
    ``marker``, ``hedge``, ``text``, ``untagged``). ``flags``: sorted names of unusual
    conditions met (module constants, e.g. ``("repeated", "several_blocks")``), on parsed
    and unparsed results alike; empty for an ordinary answer.
    """

    value: Any = None
    reason: str | None = None
    method: str | None = None
    flags: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when a valid value was extracted."""
        return self.value is not None and self.reason is None


def _fail(reason: str, flags: Iterable[str] = ()) -> Parsed:
    return Parsed(None, reason, None, tuple(sorted(set(flags))))


def flag_details(parsed: Parsed) -> dict[str, list[str]]:
    """``{"parse_flags": [...]}`` for a record's ``details`` when ``parsed`` carries
    flags, else ``{}`` (records of ordinary answers stay as they were)."""
    return {"parse_flags": list(parsed.flags)} if parsed.flags else {}


def _tag_blocks(text: str, tags: set[str] | Sequence[str]) -> list[tuple[int, str]]:
    """``(offset, content)`` of every ``[tag] …`` (or ``tag: …`` at a line start, or
    ``<tag>…</tag>``) for any of ``tags``, in order of position; ``offset`` is where the
    stripped content starts in ``text``. A ``[tag]`` content runs to the next bracketed
    tag (a name of two or more characters starting with a letter: ``[B]`` is a label, not
    a tag), the next ``tag:`` line of the same tag (``Answer: B\nAnswer: E`` is two blocks)
    or the end."""
    out: list[tuple[int, str]] = []
    for tag in tags:
        t = re.escape(tag.strip()).replace(r"\ ", r"[\s_]+")
        pat = re.compile(rf"(?:\[\s*{t}\s*\]|(?m:^[ \t]*{t}[ \t]*[:：]))\s*[:：]?\s*"
                         r"(.*?)(?=\[\s*[^\W\d_][^\]\n]{1,39}\]|"
                         rf"(?m:^[ \t]*{t}[ \t]*[:：])|\Z)", re.I | re.S)
        spans = [(m.start(1), m.group(1)) for m in pat.finditer(text)]
        for start, raw in [*spans, *_xml_blocks(text, t)]:
            lead = len(raw) - len(raw.lstrip())
            out.append((start + lead, raw.strip()))
    return sorted(out)


def _xml_blocks(text: str, t: str) -> list[tuple[int, str]]:
    """``(offset, content)`` of each ``<t>…</t>`` (``t`` a regex), as the lazy regex
    ``<t>(.*?)</t>`` finds them (each opening paired with the next closing after it,
    scanning on after that closing), in linear time: the regex rescans the rest of the
    text for every unclosed opening, quadratic in a text of many openings."""
    opens = [m.end() for m in re.finditer(rf"<\s*{t}\s*>", text, re.I)]
    closes = [(m.start(), m.end()) for m in re.finditer(rf"<\s*/\s*{t}\s*>", text, re.I)]
    out: list[tuple[int, str]] = []
    i = j = 0
    while i < len(opens) and j < len(closes):
        if closes[j][0] < opens[i]:
            j += 1
            continue
        out.append((opens[i], text[opens[i]:closes[j][0]]))
        resume = closes[j][1]
        j += 1
        while i < len(opens) and opens[i] <= resume:
            i += 1
    return out


def _tag_contents(text: str, tags: set[str] | Sequence[str]) -> list[str]:
    """Contents of :func:`_tag_blocks`, in order of position."""
    return [c for _, c in _tag_blocks(text, tags)]


def block_flags(text: str | None, tag: str = "res") -> tuple[str, ...]:
    """Flags for ``<tag>…</tag>`` answer blocks (Ancient-Bench ``<res>``) in a raw answer.

    The extraction itself stays the official one (the first block); this only reports
    what was unusual: :data:`SEVERAL_BLOCKS` (two or more closed blocks),
    :data:`BLOCKS_DIFFER` (their contents, stripped, differ) and :data:`UNCLOSED_BLOCK`
    (an opening tag after the last closed block with no closing tag). Matching is
    case-sensitive, as the official ``re.search("<res>(.*?)</res>")`` is.
    """
    if not text or f"<{tag}>" not in text:
        return ()
    t = re.escape(tag)
    blocks = list(re.finditer(rf"<{t}>(.*?)</{t}>", text, re.S))
    flags: set[str] = set()
    if len(blocks) > 1:
        flags.add(SEVERAL_BLOCKS)
        if len({b.group(1).strip() for b in blocks}) > 1:
            flags.add(BLOCKS_DIFFER)
    rest = text[blocks[-1].end():] if blocks else text
    if f"<{tag}>" in rest:
        flags.add(UNCLOSED_BLOCK)
    return tuple(sorted(flags))


def parse_json_object(text: str) -> Parsed:
    """The first JSON object in the answer (fenced or inline; Python-dict quoting accepted).

    Returns a dict value, or unparsed when no object decodes. Each ``{`` is tried once and
    its scan stops at the matching ``}``; at most :data:`MAX_JSON_STARTS` openings are
    tried, so a text of many braces costs linear time, not quadratic.
    """
    body = drop_reasoning(text or "")
    start = body.find("{")
    tries = 0
    while start != -1 and tries < MAX_JSON_STARTS:
        tries += 1
        end = _matching_brace(body, start)
        chunk = body[start:end + 1] if end is not None else ""
        for loader in (json.loads, ast.literal_eval) if chunk else ():
            try:
                obj = loader(chunk)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(obj, dict):
                return Parsed(obj, None, "json")
        start = body.find("{", start + 1)
    return _fail("no JSON object found")


#: Most ``{`` openings :func:`parse_json_object` tries.
MAX_JSON_STARTS = 50


def _matching_brace(body: str, start: int) -> int | None:
    depth = 0
    for i in range(start, len(body)):
        c = body[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    return None
