"""The fast paths of Ancient-Bench scoring give exactly what the plain methods give.

The plain methods are the official evaluator's (``run-checkpoint.py`` @ c51284fc, as
listed in ``normalize.py``): a per-character punctuation/space test with ``unicodedata``,
token lists, ``Levenshtein`` on lists, ``Counter`` intersections. They are written out here
(not imported from the package) so each test compares two independent computations.
"""

from __future__ import annotations

import random
import unicodedata
from collections import Counter

import Levenshtein

from heritage_eval.benchmarks.ancient_bench.normalize import (
    IDEOGRAPH_RANGES,
    KEPT_PUNCTUATION,
    PROTOCOLS,
    normalize_text,
    tokenize,
)
from heritage_eval.benchmarks.ancient_bench.scoring import score_pair, token_string
from heritage_eval.metrics.text import multiset_overlap

FLAGS = PROTOCOLS["official"]


def _plain_drop(text: str) -> str:
    """Steps 10–11 one character at a time, as the official code does."""
    text = "".join(c for c in text
                   if c in KEPT_PUNCTUATION or not unicodedata.category(c).startswith("P"))
    return "".join(c for c in text if not c.isspace())


def _plain_f1(p: list[str], r: list[str]) -> float:
    if not p:
        return 0.0
    ov = sum((Counter(p) & Counter(r)).values())
    if ov == 0:
        return 0.0
    pr, rc = ov / len(p), ov / len(r)
    return 2 * (pr * rc) / (pr + rc)


def test_ideograph_ranges_hold_no_punctuation_or_space() -> None:
    # The deletion step skips these ranges; that is only right while this Python's
    # unicodedata puts none of their code points in a P* category or in isspace().
    bad = [hex(cp) for a, b in IDEOGRAPH_RANGES for cp in range(a, b + 1)
           if unicodedata.category(chr(cp)).startswith("P") or chr(cp).isspace()]
    assert bad == []


# Characters a transcription mixes: ideographs (BMP and Extension B), CJK and ASCII
# punctuation, kept marks, spaces of several kinds, Latin, the two placeholders' parts.
_ALPHABET = [*"天地玄黃宇宙洪荒日月盈昃", "\U00020000", "\U0002a6d6",
             *"，。、：；！？「」『』（）《》·…—", *".,;:!?\"'()[]{}/\\#@",
             *"<>=-▢〇~～□", " ", "\u3000", "\t", "\n", "\xa0", "\u2028", *"abcXYZ019"]


def _random_text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(n))


def test_normalize_equals_the_per_character_method() -> None:
    rng = random.Random(11)
    for n in [0, 1, 2, 5, 40, 300] * 40:
        text = _random_text(rng, n)
        # no layout tag, no run of ▢/〇 left to collapse in the plain version's input
        expected = _plain_drop(text)
        got = normalize_text(text, FLAGS)
        if "▢▢" in text or "〇〇" in text:
            continue  # step 9 collapses those first (tested in test_ab_normalize.py)
        assert got == expected, repr(text)


def test_token_string_is_one_character_per_token() -> None:
    text = "天<unrecognizable>地<undeciphered><unrecognizable>玄<und"
    s = token_string(text)
    assert s is not None
    # counted by hand: 天 U 地 D U 玄, then "<", "u", "n", "d" one token each
    assert len(s) == len(tokenize(text)) == 10
    assert token_string("天\U000f0000地") is None  # holds a stand-in itself: lists used


def test_score_pair_equals_token_lists() -> None:
    rng = random.Random(5)
    pieces = ["天", "地", "玄", "<unrecognizable>", "<undeciphered>", "黃", "，", " "]
    for _ in range(300):
        gt = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 90)))
        pred = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 90)))
        p, r = tokenize(normalize_text(pred, FLAGS)), tokenize(normalize_text(gt, FLAGS))
        if not r:
            continue
        s = score_pair(f"<res>{pred}</res>", gt, FLAGS)
        d = Levenshtein.distance(p, r)
        assert s.ned_score == 1 - d / max(len(p), len(r))
        assert s.f1 == _plain_f1(p, r)
        assert s.alignment.distance == d
        assert (s.n_pred_tokens, s.n_ref_tokens) == (len(p), len(r))
        assert s.pred_tokens == p and s.ref_tokens == r
        ops = Levenshtein.editops(r, p)
        assert list(s.alignment.substituted) == [(r[i], p[j]) for op, i, j in ops
                                                 if op == "replace"]


def test_stand_in_character_in_an_answer_is_not_a_placeholder() -> None:
    # U+F0000 in the answer must not match the <unrecognizable> of the ground truth.
    s = score_pair("<res>\U000f0000</res>", "<unrecognizable>", FLAGS)
    assert s.ned_score == 0.0 and s.f1 == 0.0
    assert s.alignment.substituted == (("<unrecognizable>", "\U000f0000"),)


def test_multiset_overlap_numpy_path_equals_counter() -> None:
    rng = random.Random(3)
    alphabet = [*"天地玄黃宇宙", "\U00020000", "a", "\U000f0001"]
    for n in (64, 65, 200, 1666):
        a = "".join(rng.choice(alphabet) for _ in range(n))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(64, 2 * n)))
        expected = sum((Counter(a) & Counter(b)).values())
        assert multiset_overlap(a, b) == expected
        assert multiset_overlap(list(a), list(b)) == expected
    # by hand: no character in common -> 0; 甲 x70 + 乙 x2 against 甲 x3 + 乙 x64 + 丙 x5
    # -> min(70, 3) + min(2, 64) = 5
    assert multiset_overlap("甲" * 64, "乙" * 64) == 0
    assert multiset_overlap("甲" * 70 + "乙乙", "乙" * 32 + "甲甲甲" + "乙" * 32 + "丙" * 5) == 5
