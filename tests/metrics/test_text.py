"""Text metrics on token lists; every expected value is worked out by hand in a comment.

The bit-exact agreement with the official Ancient-Bench evaluator is tested separately on
real data (tests/ancient_bench/test_ab_parity.py).
"""

from __future__ import annotations

import random

import pytest

from heritage_eval.metrics.text import (
    align,
    char_f1,
    edit_distance,
    ned_score,
    ned_score_from_distance,
    normalized_edit_distance,
)


def test_edit_distance_classic_and_empty() -> None:
    # kitten -> sitting: substitute k->s, e->i, insert g = 3 (textbook example).
    assert edit_distance(list("kitten"), list("sitting")) == 3
    # Distance to the empty sequence is the length of the other one.
    assert edit_distance([], list("甲乙丙")) == 3
    assert edit_distance(list("甲乙丙"), []) == 3


def test_placeholder_is_one_token() -> None:
    # ["<unrecognizable>", "甲"] vs ["甲"]: one deletion, not 16 (the tag's characters).
    assert edit_distance(["<unrecognizable>", "甲"], ["甲"]) == 1


def test_ned_score_hand_values() -> None:
    # 甲乙丙 vs 甲乙丁: one substitution over max length 3 -> 1 - 1/3 = 2/3.
    assert ned_score(list("甲乙丁"), list("甲乙丙")) == pytest.approx(2 / 3)
    # Identical -> 1; both empty -> 1 (official: max_len 0 gives distance 0.0).
    assert ned_score(list("甲乙"), list("甲乙")) == 1.0
    assert ned_score([], []) == 1.0
    # Empty prediction: distance 3 / max 3 -> 0.
    assert ned_score([], list("甲乙丙")) == 0.0
    # A longer prediction is normalised by its own length: 甲乙丙丁 vs 甲: 3 / 4 -> 0.25.
    assert ned_score(list("甲乙丙丁"), ["甲"]) == 0.25
    assert normalized_edit_distance(["甲"], list("甲乙丙丁")) == 0.75


def test_char_f1_hand_values() -> None:
    # pred 甲甲乙, gt 甲乙丙: multiset overlap = min(2,1) for 甲 + 1 for 乙 = 2;
    # P = 2/3, R = 2/3 -> F1 = 2/3.
    assert char_f1(list("甲甲乙"), list("甲乙丙")) == pytest.approx(2 / 3)
    # pred 甲乙, gt 甲乙丙丁: overlap 2, P = 1, R = 1/2 -> F1 = 2*(1/2)/(3/2) = 2/3.
    assert char_f1(list("甲乙"), list("甲乙丙丁")) == pytest.approx(2 / 3)
    # Order is ignored by F1 but not by NED: 乙甲 vs 甲乙 -> F1 1, NED score 1 - 2/2 = 0.
    assert char_f1(list("乙甲"), list("甲乙")) == 1.0
    assert ned_score(list("乙甲"), list("甲乙")) == 0.0
    # Empty prediction or no overlap -> 0 (never a division by zero).
    assert char_f1([], list("甲")) == 0.0
    assert char_f1(list("乙"), list("甲")) == 0.0
    assert char_f1(list("乙"), []) == 0.0


def test_align_counts_operations() -> None:
    # 甲乙丙丁 -> 甲乙戊丁己: 丙 replaced by 戊, 己 inserted at the end.
    al = align(list("甲乙丙丁"), list("甲乙戊丁己"))
    assert (al.insertions, al.deletions, al.substitutions) == (1, 0, 1)
    assert al.substituted == (("丙", "戊"),)
    assert al.distance == edit_distance(list("甲乙丙丁"), list("甲乙戊丁己")) == 2
    # 甲乙丙 -> 甲丙: 乙 deleted.
    al = align(list("甲乙丙"), list("甲丙"))
    assert (al.insertions, al.deletions, al.substitutions) == (0, 1, 0)
    # Empty prediction: every reference token is a deletion.
    al = align(list("甲乙"), [])
    assert (al.insertions, al.deletions, al.substitutions) == (0, 2, 0)


def test_alignment_length_is_the_distance() -> None:
    # The scorer takes the NED from the alignment's length; check that this always equals
    # Levenshtein.distance and gives the same float, on 300 seeded random pairs.
    rng = random.Random(20240501)
    alphabet = ["甲", "乙", "丙", "丁", "<unrecognizable>"]
    for _ in range(300):
        a = [rng.choice(alphabet) for _ in range(rng.randint(0, 12))]
        b = [rng.choice(alphabet) for _ in range(rng.randint(0, 12))]
        al = align(a, b)
        assert al.distance == edit_distance(a, b)
        assert ned_score_from_distance(al.distance, len(b), len(a)) == ned_score(b, a)
