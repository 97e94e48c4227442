"""Small text operations for Activity Description distractors (heuristics, no parser ships
offline here): noun phrases, the "so" reordering, short object phrases, concatenations.

**Noun phrases**: a determiner (``a``, ``the``, ``his``, ``both``, …) followed by up to
three words, stopping at punctuation, another determiner, a function word (prepositions,
conjunctions, common adverbs) or a later word ending in ``-s`` (not ``'s``), ``-ing`` or
``-ed`` (usually a verb: "the man *flings*", "a violin *held*"; short words and common
adjectives such as "red", "naked" excepted); a known person noun ("man", "attendant", …)
ends the phrase after it unless a group noun follows ("peasant *couple*").

**"so"** (paper: the true description with the order of its objects shifted): two noun
phrases are swapped only when they fill the *same slot*, so the sentence stays
grammatical: (1) both follow the same preposition ("in a grey-blue robe … in a red
gown") and end cleanly (not followed by an adverb or a non-verb-like word),
or (2) both are person phrases of the same number ("the man … the woman").
Whole phrases move (determiner included), so articles stay right; a phrase moved to or
from the start of a sentence is re-capitalised. No such pair → no "so" option, with the
reason returned.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

_DETERMINERS = (
    "a an the his her its their one two three both another some this that these those "
    "each every")
_FUNCTION_WORDS = (
    "with of in on at to over from while and or but so as by beside behind under into onto "
    "toward towards for between against above below near around through across up down out "
    "off which who whom whose is are was were be it them him he she they high forward back "
    "away together aloud upright sideways then there here where when if than like")
#: Prepositions whose objects may be swapped with each other (same preposition only).
_SLOT_PREPOSITIONS = (
    "in on at with over under beside behind into onto toward towards against near above "
    "below across through from to for between around by")
_PERSON_SINGULAR = (
    "man woman boy girl baby child toddler infant mother father son daughter wife husband "
    "courtesan attendant cardinal cleric priest monk nun saint king queen soldier peasant "
    "dancer musician violinist player servant maid lady gentleman youth elder")
_PERSON_PLURAL = (
    "men women boys girls babies children toddlers infants mothers fathers courtesans "
    "attendants cardinals clerics priests monks nuns saints soldiers peasants dancers "
    "musicians players servants maids ladies gentlemen elders")
_ADVERBS = "up down out off high forward back away together aloud upright sideways then there here"
_ED_ADJECTIVES = ("naked sacred wicked beloved aged ragged crooked rugged wretched winged "
                  "horned bearded hooded robed haloed")
_GROUP_NOUNS = "couple family group crowd pair party band"
DETERMINERS = frozenset(_DETERMINERS.split())
ADVERBS = frozenset(_ADVERBS.split())
ED_ADJECTIVES = frozenset(_ED_ADJECTIVES.split())
GROUP_NOUNS = frozenset(_GROUP_NOUNS.split())
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
SLOT_PREPOSITIONS = frozenset(_SLOT_PREPOSITIONS.split())
PERSON_SINGULAR = frozenset(_PERSON_SINGULAR.split())
PERSON_PLURAL = frozenset(_PERSON_PLURAL.split())
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*|[^\sA-Za-z]")
_SENTENCE_END = {".", "!", "?"}


@dataclass(frozen=True)
class Phrase:
    """A noun phrase: character span, the word before it (lower case, ``""`` at a
    sentence start), its last word (lower case) and whether it ends cleanly (punctuation,
    end of text, a preposition, conjunction, determiner or verb-like word follows; not an
    adverb such as "back" or another word)."""

    start: int
    end: int
    before: str
    head: str
    clean_end: bool = True

    @property
    def initial(self) -> bool:
        return self.before == ""

    def slots(self) -> set[tuple[str, str]]:
        """Slots this phrase fills: ``("prep", p)`` and/or ``("person", "sg"|"pl")``."""
        out: set[tuple[str, str]] = set()
        if self.before in SLOT_PREPOSITIONS and self.clean_end:
            out.add(("prep", self.before))
        if self.head in PERSON_SINGULAR:
            out.add(("person", "sg"))
        elif self.head in PERSON_PLURAL:
            out.add(("person", "pl"))
        return out


def phrases(text: str) -> list[Phrase]:
    """Noun phrases of ``text`` (heuristic in the module docstring), left to right,
    sentence-initial ones included."""
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    out: list[Phrase] = []
    for i, (tok, start, _) in enumerate(tokens):
        if tok.lower() not in DETERMINERS:
            continue
        before = "" if i == 0 or tokens[i - 1][0] in _SENTENCE_END else tokens[i - 1][0].lower()
        end, head, last = None, "", i
        for j in range(i + 1, min(i + 4, len(tokens))):
            word = tokens[j][0]
            low = word.lower()
            if not word[0].isalpha() or low in DETERMINERS or low in FUNCTION_WORDS:
                break
            if j > i + 1 and _verb_like(low):
                break
            end, head, last = tokens[j][2], low, j
            nxt = tokens[j + 1][0].lower() if j + 1 < len(tokens) else ""
            if (low in PERSON_SINGULAR or low in PERSON_PLURAL) and nxt not in GROUP_NOUNS:
                break
        if end is not None:
            out.append(Phrase(start, end, before, head, _clean_after(tokens, last + 1)))
    return out


def _clean_after(tokens: list[tuple[str, int, int]], k: int) -> bool:
    if k >= len(tokens):
        return True
    word = tokens[k][0].lower()
    if word in ADVERBS:
        return False
    return (not word[0].isalpha() or word in DETERMINERS or word in FUNCTION_WORDS
            or _verb_like(word))


def noun_phrases(text: str) -> list[tuple[int, int]]:
    """Character spans of the noun phrases that do not start a sentence."""
    return [(p.start, p.end) for p in phrases(text) if not p.initial]


def _verb_like(word: str) -> bool:
    if word.endswith(("'s", "’s")):
        return False
    if word.endswith("ed"):
        return len(word) > 4 and word not in ED_ADJECTIVES
    return word.endswith(("s", "ing"))


def _recase(fragment: str, initial: bool) -> str:
    if initial:
        return fragment[:1].upper() + fragment[1:]
    first = fragment.split(" ", 1)[0]
    if first.lower() in DETERMINERS:
        return fragment[:1].lower() + fragment[1:]
    return fragment


def shift_objects(text: str, rng: random.Random) -> tuple[str | None, str]:
    """``(shifted text, slot)`` with two same-slot noun phrases swapped, or
    ``(None, reason)`` when no such pair exists (see the module docstring)."""
    found = phrases(text)
    pairs: list[tuple[Phrase, Phrase, tuple[str, str]]] = []
    for ai, a in enumerate(found):
        for b in found[ai + 1:]:
            if a.end > b.start or a.head == b.head:
                continue
            if text[a.start:a.end].lower() == text[b.start:b.end].lower():
                continue
            pairs += [(a, b, slot) for slot in sorted(a.slots() & b.slots())]
    if not pairs:
        return None, "no two noun phrases in the same slot (same preposition or person)"
    a, b, slot = rng.choice(pairs)
    first = _recase(text[b.start:b.end], a.initial)
    second = _recase(text[a.start:a.end], b.initial)
    out = text[:a.start] + first + text[a.end:b.start] + second + text[b.end:]
    return out, f"{slot[0]}:{slot[1]}"


_MASS = ("music water bread hair grass furniture clothing jewellery jewelry armour armor "
         "drapery fabric cloth smoke fire wine milk food money foliage luggage equipment sand "
         "snow rain silk lace hay")
_IRREGULAR = "men women children people feet teeth mice geese oxen"
_MASS_NOUNS = frozenset(_MASS.split())
_IRREGULAR_PLURALS = frozenset(_IRREGULAR.split())
_AN_EXCEPTIONS = ("uni", "use", "usu", "ute", "ure", "eu", "one", "once")
_SILENT_H = ("hour", "honest", "honour", "honor", "heir")


def _head(name: str) -> str:
    return name.split(" of ", 1)[0].split()[-1].lower()


def is_plural(name: str) -> bool:
    """Heuristic: the head noun (last word before ``of``) is an irregular plural or ends in
    ``s`` but not ``ss`` / ``us`` / ``is``."""
    head = _head(name)
    return head in _IRREGULAR_PLURALS or (
        head.endswith("s") and not head.endswith(("ss", "us", "is")))


def indefinite_article(word: str) -> str:
    """``"an"`` before a vowel sound (heuristic: vowel letter except ``uni-``, ``use-``,
    ``eu-``, ``one``…; silent ``h`` in hour/honest/honour/heir), else ``"a"``."""
    low = word.lower()
    if low.startswith(_SILENT_H):
        return "an"
    if low[:1] in "aeiou" and not low.startswith(_AN_EXCEPTIONS):
        return "an"
    return "a"


def object_phrase(name: str) -> str:
    """A short grammatical option naming an object or person: ``"A straw hat."``,
    ``"An organ."``, ``"Some flowers."`` (plural head), ``"Sheet music."`` (mass noun)."""
    noun = name.strip()
    noun = noun.lower() if noun.istitle() else noun
    if _head(noun) in _MASS_NOUNS:
        return f"{noun[:1].upper()}{noun[1:]}."
    if is_plural(noun):
        return f"Some {noun}."
    return f"{indefinite_article(noun).capitalize()} {noun}."


#: Clause boundaries where an over-long concatenation may be cut (cut before them).
_CLAUSE_BREAKS = re.compile(r",\s|;\s|:\s|\s(?:while|and|as|so that)\s")
MIN_CLAUSE_WORDS = 4


def clause_prefixes(sentence: str) -> list[str]:
    """Every start of ``sentence`` ending at a clause boundary (comma, semicolon, colon,
    "while", "and", "as", "so that") with at least :data:`MIN_CLAUSE_WORDS` words, closed
    with a full stop, shortest first."""
    out = []
    for m in _CLAUSE_BREAKS.finditer(sentence):
        head = sentence[:m.start()].rstrip(" ,;:")
        if len(head.split()) >= MIN_CLAUSE_WORDS:
            out.append(head + ".")
    return out


def clause_prefix(sentence: str, room: int) -> str | None:
    """The longest of :func:`clause_prefixes` that fits in ``room`` characters, else
    ``None``."""
    fitting = [c for c in clause_prefixes(sentence) if len(c) <= room]
    return fitting[-1] if fitting else None


def _fit(part: str, room: int) -> str | None:
    return part if len(part) <= room else clause_prefix(part, room)


def concatenate(parts: list[str], limit: int) -> str:
    """``parts`` (1–3 descriptions) joined into about ``limit`` characters: each part gets
    an equal share of the room left and is kept whole when it fits, else cut to its
    longest clause start that fits (:func:`clause_prefix`). A first part that cannot be
    cut to its share is cut to its shortest clause start (kept whole if it has none); a
    later part that fits neither its share nor the whole room left is dropped."""
    pieces: list[str] = []
    for k, part in enumerate(parts):
        room = limit - sum(len(x) + 1 for x in pieces)
        share = room // (len(parts) - k)
        piece = _fit(part, share)
        if piece is None and not pieces:
            piece = (clause_prefixes(part) or [part])[0]
        elif piece is None:
            piece = _fit(part, room)
        if piece:
            pieces.append(piece)
    return " ".join(pieces)
