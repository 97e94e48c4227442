"""Classification metrics; every expected value is worked out by hand in a comment."""

from __future__ import annotations

import pytest

from heritage_eval.metrics.classification import classification_scores, weighted_mean


def test_three_classes_with_an_unparsed_answer() -> None:
    # true  a a b b c ; pred a b b <unparsed> a
    # accuracy 2/5. precision: a 1/2 (pred a at 1 and 5, one right), b 1/2, c 0 (never
    # predicted, zero_division=0) -> 1/3. recall: a 1/2, b 1/2, c 0 -> 1/3.
    # F1: a 1/2, b 1/2, c 0 -> 1/3. invalid rate 1/5.
    s = classification_scores(list("aabbc"), ["a", "b", "b", None, "a"])
    assert s.n == 5
    assert s.accuracy == pytest.approx(0.4)
    assert s.macro_precision == pytest.approx(1 / 3)
    assert s.macro_recall == pytest.approx(1 / 3)
    assert s.macro_f1 == pytest.approx(1 / 3)
    assert s.invalid_rate == pytest.approx(0.2)


def test_unbalanced_two_classes() -> None:
    # true a a a b ; pred a a b b. a: P 2/2, R 2/3, F1 2*(1*2/3)/(5/3) = 0.8.
    # b: P 1/2, R 1/1, F1 2*(0.5)/(1.5) = 2/3. Macro: P 0.75, R 5/6, F1 (0.8+2/3)/2.
    s = classification_scores(list("aaab"), list("aabb"))
    assert s.accuracy == pytest.approx(0.75)
    assert s.macro_precision == pytest.approx(0.75)
    assert s.macro_recall == pytest.approx(5 / 6)
    assert s.macro_f1 == pytest.approx((0.8 + 2 / 3) / 2)
    assert s.invalid_rate == 0.0


def test_predicted_class_outside_true_classes_gets_no_column() -> None:
    # true a b ; pred c b (c: a distractor that is never a target). Labels = {a, b}:
    # a: P 0 (never predicted), R 0; b: P 1, R 1 -> macro P = R = F1 = 0.5.
    s = classification_scores(["a", "b"], ["c", "b"])
    assert (s.accuracy, s.macro_precision, s.macro_recall, s.macro_f1) == \
        pytest.approx((0.5, 0.5, 0.5, 0.5))


def test_all_unparsed_is_zero_not_an_error() -> None:
    s = classification_scores(["a", "b"], [None, None])
    assert (s.accuracy, s.macro_f1, s.invalid_rate) == (0.0, 0.0, 1.0)


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="no samples"):
        classification_scores([], [])
    with pytest.raises(ValueError, match="2 items"):
        classification_scores(["a", "b"], ["a"])


def test_weighted_mean_by_n() -> None:
    # (0.5 * 3 + 1.0 * 1) / 4 = 0.625; a group with n = 0 or a None value is skipped.
    groups = {"Bei": {"n": 3, "accuracy": 0.5}, "Tie": {"n": 1, "accuracy": 1.0},
              "Wild": {"n": 0, "accuracy": 0.9}, "X": {"n": 5, "accuracy": None}}
    assert weighted_mean(groups, "accuracy") == pytest.approx(0.625)
    assert weighted_mean({}, "accuracy") is None
