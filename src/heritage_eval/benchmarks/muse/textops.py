"""Small text operations for distractors: noun phrases, the "so" reordering, articles.

The "so" distractor of Activity Description (paper: the true description with the order of
its objects shifted) swaps two noun phrases of the description. Noun phrases are found by a
documented heuristic, not a parser (none ships offline here): a determiner (``a``, ``the``,
``his``, ``both``, …) not at the start of a sentence, followed by up to three words, stopping
at punctuation, another determiner or a function word (prepositions, conjunctions, common
adverbs); a later word ending in ``-s`` (not ``'s``), ``-ing`` or ``-ed`` ends the phrase
before it (usually a verb: "the man *flings*", "his cloak *flying*", "a violin *held*").
Sentence-initial phrases (the subject) are left in place.
"""

from __future__ import annotations

import random
import re

_DETERMINERS = (
    "a an the his her its their one two three both another some this that these those "
    "each every")
_FUNCTION_WORDS = (
    "with of in on at to over from while and or but so as by beside behind under into onto "
    "toward towards for between against above below near around through across up down out "
    "off which who whom whose is are was were be it them him he she they high forward back "
    "away together aloud upright sideways then there here where when if than like")
DETERMINERS = frozenset(_DETERMINERS.split())
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*|[^\sA-Za-z]")
_SENTENCE_END = {".", "!", "?", ":", ";"}


def noun_phrases(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of determiner noun phrases in ``text`` (heuristic
    above), left to right."""
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    spans: list[tuple[int, int]] = []
    for i, (tok, start, _) in enumerate(tokens):
        if tok.lower() not in DETERMINERS:
            continue
        if i == 0 or tokens[i - 1][0] in _SENTENCE_END:
            continue
        end = None
        for j in range(i + 1, min(i + 4, len(tokens))):
            word = tokens[j][0]
            low = word.lower()
            if not word[0].isalpha() or low in DETERMINERS or low in FUNCTION_WORDS:
                break
            if j > i + 1 and _verb_like(low):
                break
            end = tokens[j][2]
        if end is not None:
            spans.append((start, end))
    return spans


def _verb_like(word: str) -> bool:
    if word.endswith(("'s", "’s")):
        return False
    return word.endswith(("s", "ing", "ed"))


def shift_objects(text: str, rng: random.Random) -> str | None:
    """``text`` with two distinct noun phrases swapped, or ``None`` when fewer than two
    distinct phrases are found."""
    spans = noun_phrases(text)
    pairs = [(a, b) for ai, a in enumerate(spans) for b in spans[ai + 1:]
             if text[a[0]:a[1]].lower() != text[b[0]:b[1]].lower()]
    if not pairs:
        return None
    (s1, e1), (s2, e2) = rng.choice(pairs)
    out = text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:]
    return out if out != text else None


def with_article(noun: str) -> str:
    """``"A straw hat."`` / ``"An organ."``: indefinite article, capitalised, full stop."""
    article = "An" if noun[:1].lower() in "aeiou" else "A"
    return f"{article} {noun.lower() if noun.istitle() else noun}."
