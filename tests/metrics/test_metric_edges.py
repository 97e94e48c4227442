"""Metrics at their edges: empty / one / all-equal inputs, Unicode oddities, zero and
non-finite vectors, over-long texts; and the flags reaching the benchmark records.

Every expected value is worked out by hand in a comment, or stated as a property that
holds for every generated input (hypothesis). The rules are written in docs/metrics.md.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.metrics.classification import classification_scores, never_predicted
from heritage_eval.metrics.embeddings import Embedder, FloatArray, cosine
from heritage_eval.metrics.flags import (
    COSINE_CLIPPED,
    COSINE_NEGATIVE_AS_ZERO,
    COSINE_NON_FINITE,
    COSINE_ZERO_VECTOR,
    MetricValue,
)
from heritage_eval.metrics.text import char_f1, edit_distance, ned_score

# Code points that break naive text handling: NUL, a combining acute accent, a lone
# high and a lone low surrogate, full-width A, ideographic space, a CJK ideograph, an
# astral ideograph, the Ancient-Bench placeholder characters.
ODD = ["\x00", "\u0301", "\ud800", "\udfff", "Ａ", "\u3000", "甲", "𠀀", "▢", "〇", "a"]
odd_text = st.lists(st.sampled_from(ODD), max_size=12).map("".join)
any_text = st.one_of(odd_text, st.text(max_size=20))
TEXT = settings(max_examples=200, deadline=None)

# ---------------------------------------------------------------- NED and character F1


def test_text_metrics_both_empty() -> None:
    # two empty sequences are identical: distance 0, NED score 1 (official rule)
    assert edit_distance("", "") == 0 and ned_score("", "") == 1.0
    # F1 is 2|P∩R| / (|P|+|R|) = 0/0: refused, never a silent 0
    with pytest.raises(ValueError, match="undefined"):
        char_f1("", "")


@TEXT
@given(s=any_text.filter(bool))
def test_one_side_empty(s: str) -> None:
    # distance = len(s), max length = len(s): NED score 1 - 1 = 0; F1 = 0 / len(s) = 0
    assert ned_score("", s) == ned_score(s, "") == 0.0
    assert char_f1("", s) == char_f1(s, "") == 0.0


@TEXT
@given(s=any_text.filter(bool))
def test_equal_inputs_score_one(s: str) -> None:
    # identical sequences: distance 0 -> NED score 1; overlap = |s| -> P = R = F1 = 1
    assert ned_score(s, s) == 1.0
    assert char_f1(s, s) == 1.0


@TEXT
@given(a=any_text, b=any_text)
def test_ranges_and_symmetry(a: str, b: str) -> None:
    # never raises (except both empty for F1), stays in [0, 1]; NED is symmetric
    assert 0.0 <= ned_score(a, b) <= 1.0
    assert ned_score(a, b) == ned_score(b, a)
    if a or b:
        f = char_f1(a, b)
        assert 0.0 <= f <= 1.0
        assert f == char_f1(b, a) or math.isclose(f, char_f1(b, a), rel_tol=1e-15)


def test_unicode_is_counted_per_code_point() -> None:
    # "é" composed (1 code point) vs decomposed "e" + U+0301 (2): no normalisation in the
    # metric, so distance 2 (substitute e, insert the accent) over max length 2 -> 0
    assert ned_score("\u00e9", "e\u0301") == 0.0
    # a lone surrogate and NUL are ordinary tokens: one substitution of 3 -> 1 - 1/3
    assert ned_score("a\ud800\x00", "a\udfff\x00") == pytest.approx(2 / 3)
    # full-width Ａ is not A (folding belongs to the benchmark's normaliser)
    assert char_f1("Ａ", "A") == 0.0


# ---------------------------------------------------------------- classification

LABELS = ["a", "b", "a\x00", "\x00invalid", "Ａ"]


def test_single_item_and_single_class() -> None:
    # one right answer: every rate 1; one wrong (outside the labels): every rate 0
    one = classification_scores(["a"], ["a"])
    assert (one.accuracy, one.macro_precision, one.macro_recall, one.macro_f1) == (1, 1, 1, 1)
    miss = classification_scores(["a"], ["z"])
    assert (miss.accuracy, miss.macro_precision, miss.macro_f1) == (0.0, 0.0, 0.0)
    # unparsed: wrong and counted in the invalid rate
    bad = classification_scores(["a"], [None])
    assert (bad.accuracy, bad.invalid_rate) == (0.0, 1.0)


def test_labels_differing_by_trailing_nul_stay_apart() -> None:
    # numpy "U" arrays drop trailing NULs; classes "a" and "a\x00" are still two classes.
    # Both predictions swapped: accuracy 0, each class P = R = 0
    s = classification_scores(["a", "a\x00"], ["a\x00", "a"])
    assert (s.accuracy, s.macro_precision, s.macro_recall) == (0.0, 0.0, 0.0)
    # a true class spelled like an old invalid stand-in is not hit by an unparsed answer
    s = classification_scores(["\x00invalid", "b"], [None, "b"])
    assert s.accuracy == 0.5 and s.invalid_rate == 0.5


def test_never_predicted_class_precision_counts_zero() -> None:
    # true a, a, b; predicted a, a, a: class a P = 2/3, R = 1; class b P = 0/0 -> 0 (rule
    # zero_division=0), R = 0 -> macro P = (2/3 + 0) / 2 = 1/3, macro R = (1 + 0) / 2
    s = classification_scores(["a", "a", "b"], ["a", "a", "a"])
    assert s.macro_precision == pytest.approx(1 / 3) and s.macro_recall == 0.5
    # F1: a = 2*2/(2*2+1+0) = 0.8, b = 0 -> 0.4
    assert s.macro_f1 == pytest.approx(0.4)
    assert never_predicted(["a", "a", "b"], ["a", "a", "a"]) == ["b"]


def test_exhaustive_small_grid_properties() -> None:
    # every y_true of length 1..3 over two labels and every prediction over the labels,
    # an outside label and None (3 * 4 ** 3 ...): rates in [0, 1], accuracy = correct / n
    preds: list[str | None] = ["a", "a\x00", "z", None]
    for n in (1, 2, 3):
        for yt in itertools.product(["a", "a\x00"], repeat=n):
            for yp in itertools.product(preds, repeat=n):
                s = classification_scores(list(yt), list(yp))
                assert s.accuracy == sum(t == p for t, p in zip(yt, yp, strict=True)) / n
                assert s.invalid_rate == sum(p is None for p in yp) / n
                for v in (s.macro_precision, s.macro_recall, s.macro_f1):
                    assert 0.0 <= v <= 1.0
                if all(t == p for t, p in zip(yt, yp, strict=True)):
                    assert s.macro_f1 == 1.0


def test_classification_refuses_empty_and_ragged() -> None:
    with pytest.raises(ValueError, match="no samples"):
        classification_scores([], [])
    with pytest.raises(ValueError, match="items"):
        classification_scores(["a"], ["a", "b"])


# ---------------------------------------------------------------- cosine

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def test_cosine_zero_and_non_finite_have_no_value() -> None:
    for zero in ([0.0, 0.0], [-0.0, 0.0], []):
        v = cosine(zero, zero)
        assert v.value is None and v.flags == (COSINE_ZERO_VECTOR,) and v.reason
    assert cosine([1.0, 0.0], [0.0, 0.0]).flags == (COSINE_ZERO_VECTOR,)
    for bad in (math.nan, math.inf, -math.inf):
        v = cosine([1.0, bad], [1.0, 1.0])
        assert v.value is None and v.flags == (COSINE_NON_FINITE,)
    with pytest.raises(ValueError, match="1-D"):
        cosine([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="1-D"):
        cosine([[1.0]], [[1.0]])


def test_cosine_extreme_magnitudes() -> None:
    # (1e300, 1e300) vs (1e300, 0): 45 degrees -> cos = 1/sqrt(2); a naive norm overflows
    assert cosine([1e300, 1e300], [1e300, 0.0]).value == pytest.approx(2 ** -0.5)
    # subnormal entries: a naive norm underflows to 0; (5e-324, 0) vs (1, 0) -> 1
    assert cosine([5e-324, 0.0], [1.0, 0.0]).value == 1.0
    # opposite vectors -> -1 exactly
    assert cosine([3.0, -4.0], [-6.0, 8.0]).value == -1.0


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    st.lists(finite, min_size=n, max_size=n), st.lists(finite, min_size=n, max_size=n))))
def test_cosine_range_and_flags(pair: tuple[list[float], list[float]]) -> None:
    a, b = pair
    v = cosine(a, b)
    if not any(a) or not any(b):
        assert v.value is None and v.flags == (COSINE_ZERO_VECTOR,)
        return
    assert v.value is not None and -1.0 <= v.value <= 1.0
    assert v.flags in ((), (COSINE_CLIPPED,))
    # self-similarity is 1 up to rounding
    s = cosine(a, a).value
    assert s is not None and abs(s - 1.0) < 1e-12


# ---------------------------------------------------------------- flags on the records


class _TableEmbedder(Embedder):
    """Returns fixed vectors per text (unit rows are not enforced: that is the point)."""

    id = "table"

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str]) -> FloatArray:
        return np.asarray([self.table[t] for t in texts], dtype=np.float32)


def _open_row(qid: str, answer: str, reference: str):  # type: ignore[no-untyped-def]
    from heritage_eval.benchmarks.muse.scoring import TurnResult
    from heritage_eval.core.types import Outcome

    return TurnResult(question_id=qid, image_id="i", task="t", turn=0, answer_format="open",
                      state=Outcome.SCORED, parsed=answer, answer=reference)


def test_muse_open_answers_record_cosine_flags() -> None:
    from heritage_eval.benchmarks.muse.scoring import score_open_answers
    from heritage_eval.core.types import Outcome

    emb = _TableEmbedder({"r1": [1, 0], "r2": [0, 1], "r3": [0.6, 0.8],
                          "same": [1, 0], "opposite": [-1, 0], "zero": [0, 0],
                          "nan": [math.nan, 1], "x": [0.6, 0.8], "": [0.6, 0.8]})
    rows = [_open_row("q1", "same", "r1"), _open_row("q2", "opposite", "r3"),
            _open_row("q3", "zero", "r2"), _open_row("q1", "nan", "r1"),
            _open_row("q4", "x", "")]
    res = score_open_answers(rows, emb)
    same, opp, zero, nan, noref = rows
    # same direction: cos 1, no flag
    assert same.score == 1.0 and same.metric_flags is None
    # (-1, 0) vs (0.6, 0.8): cos -0.6 -> raised to 0 with the flag
    assert opp.score == 0.0 and opp.metric_flags == [COSINE_NEGATIVE_AS_ZERO]
    # zero vector / NaN: unscored with the reason and flag, never 0
    assert zero.state == Outcome.UNSCORED and zero.score is None
    assert zero.metric_flags == [COSINE_ZERO_VECTOR] and "zero vector" in str(zero.reason)
    assert nan.state == Outcome.UNSCORED and nan.metric_flags == [COSINE_NON_FINITE]
    # an empty reference answer: unscored (its embedding is meaningless)
    assert noref.state == Outcome.UNSCORED and "empty reference" in str(noref.reason)
    assert (res.scored, res.unscored) == (2, 3)


def test_hcsu_bertscore_flags_reach_the_record() -> None:
    from heritage_eval.benchmarks.hcsu.description_scoring import add_bertscore

    class Flagging:  # the real scorer's answers for a long, a normal and a blank pair
        def score_pairs(self, cands: list[str], refs: list[str]) -> list[MetricValue]:
            return [MetricValue(0.7, ("bertscore_truncated",)), MetricValue(0.5),
                    MetricValue(None, ("bertscore_empty",), "empty reference")]

    recs = [{"outcome": "scored", "answer": t, "class": c}
            for t, c in (("long", "A"), ("ok", "A"), ("ok", "B"))]
    add_bertscore(recs, {"A": "ref", "B": ""}, Flagging())  # type: ignore[arg-type]
    assert recs[0]["metric_flags"] == ["bertscore_truncated"]
    assert recs[0]["bertscore_x10"] == 7.0 and recs[0]["bertscore_status"] == "scored"
    assert "metric_flags" not in recs[1]
    assert recs[2]["bertscore_status"] == "unscored" and recs[2]["bertscore_x10"] is None
    assert recs[2]["bertscore_reason"] == "empty reference"
    assert recs[2]["metric_flags"] == ["bertscore_empty"]


def test_hcsu_record_details_carry_metric_flags() -> None:
    from heritage_eval.benchmarks.hcsu import sample_records

    assert "metric_flags" in sample_records._DESCRIPTION_DETAILS


def test_muse_record_details_carry_metric_flags() -> None:
    from heritage_eval.benchmarks.muse import records
    from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
    from heritage_eval.core.record import SampleRecord
    from heritage_eval.core.types import Outcome

    q = Question(id="q", image_id="i", turns=[QuestionTurn(
        task="activity_description", prompt="p", answer_format="open", answer="r")])
    row = _open_row("q", "a", "r")
    row.metric_flags = [COSINE_NEGATIVE_AS_ZERO]
    assert records._details(row, q, None)["metric_flags"] == [COSINE_NEGATIVE_AS_ZERO]
    row.metric_flags = None  # nothing to report: no key
    assert "metric_flags" not in records._details(row, q, None)
    # and back: a record's flags survive the trip to a row (resume / re-summarise)
    rec = SampleRecord(schema="heritage-eval/sample/1", id="q#0", benchmark="muse",
                       model="m", state=Outcome.SCORED,
                       details={"question_id": "q", "metric_flags": ["cosine_clipped"]})
    assert records._row(rec).metric_flags == ["cosine_clipped"]


# ---------------------------------------------------------------- BERTScore (model)


@pytest.fixture(scope="module")
def scorer():  # type: ignore[no-untyped-def]
    from heritage_eval.metrics.bertscore import BertScorer

    return BertScorer()


@pytest.mark.slow
def test_bertscore_texts_without_tokens_are_unscored(scorer) -> None:  # type: ignore[no-untyped-def]
    # bert-score itself returns 0 for these (only [CLS] [SEP] left after tokenising):
    # "", blank, NUL, a lone combining accent (stripped with the accents by the uncased
    # tokenizer)
    texts = ["", "   \n", "\x00", "\u0301", "\x00\u0301 \t"]
    got = scorer.score_pairs([*texts, "fine ink"], [*(["thin strokes"] * len(texts)), "ink"])
    for v in got[:-1]:
        assert v.value is None and v.flags == ("bertscore_empty",) and v.reason
    assert got[-1].value is not None and got[-1].flags == ()
    # reference side too, and f1() refuses such a pair by index
    (ref_side,) = scorer.score_pairs(["thin strokes"], ["\x00"])
    assert ref_side.value is None and ref_side.reason == "reference has no token the model knows"
    with pytest.raises(ValueError, match=r"index\(es\) \[0\]"):
        scorer.f1(["\u0301"], ["ink"])
    assert scorer.score_pairs([], []) == []


@pytest.mark.slow
def test_bertscore_lone_surrogate_is_unscored_not_a_batch_failure(scorer) -> None:  # type: ignore[no-untyped-def]
    # the Rust tokenizer raises TypeError on a lone surrogate; only that pair is unscored
    got = scorer.score_pairs(["ink \ud800 ink", "ink"], ["ink", "ink"])
    assert got[0].value is None and got[0].flags == ("bertscore_invalid_text",)
    assert "surrogate" in str(got[0].reason)
    assert got[1].value == pytest.approx(1.0, abs=1e-5)  # a text against itself
    # full-width letters and emoji are ordinary (unknown) tokens: scored
    (wide,) = scorer.score_pairs(["Ａ😀"], ["ink"])
    assert wide.value is not None and wide.flags == ()
    with pytest.raises(ValueError, match="index"):
        scorer.f1(["\udfff"], ["ink"])


@pytest.mark.slow
def test_bertscore_over_length_is_flagged(scorer) -> None:  # type: ignore[no-untyped-def]
    # MiniLM's tokenizer: "ink" is one token; 600 of them + [CLS] [SEP] = 602 > 512
    long = " ".join(["ink"] * 600)
    exact = " ".join(["ink"] * 510)  # 510 + 2 = 512: fits exactly, no flag
    got = scorer.score_pairs([long, exact, "ink"], ["ink", "ink", long])
    assert got[0].flags == ("bertscore_truncated",)
    assert got[1].flags == ()
    assert got[2].flags == ("bertscore_truncated",)
    # truncation keeps the first 510 word pieces: the long text scores as the exact one
    assert got[0].value == pytest.approx(got[1].value, abs=1e-6)
    assert all(v.value is not None and 0.0 < v.value <= 1.0 + 1e-6 for v in got)


# ---------------------------------------------------------------- bad argument types
@pytest.mark.parametrize(("y_true", "y_pred", "named"), [
    ([None, "a"], [None, "a"], "y_true[0]"),   # None is no true class (it sorted with "a")
    (["a", 1], ["a", "a"], "y_true[1]"),
    (["a", "b"], ["a", 2], "y_pred[1]"),       # a prediction is a str or None (unparsed)
])
def test_classification_names_a_bad_label(y_true: list[object], y_pred: list[object],
                                          named: str) -> None:
    with pytest.raises(ValueError, match=re.escape(named)):
        classification_scores(y_true, y_pred)  # type: ignore[arg-type]


def test_classification_still_accepts_none_predictions() -> None:
    # hand count: 1 of 2 right, 1 of 2 unparsed
    got = classification_scores(["a", "b"], ["a", None])
    assert (got.accuracy, got.invalid_rate) == (0.5, 0.5)


@pytest.mark.parametrize(("pred", "ref", "named"), [(None, "ab", "prediction"),
                                                    ("ab", None, "reference"),
                                                    (3, "ab", "prediction")])
def test_ned_names_a_bad_argument(pred: object, ref: object, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        ned_score(pred, ref)  # type: ignore[arg-type]


@pytest.mark.parametrize(("a", "b"), [(["1", "2"], [1.0, 2.0]), ([1.0, 2.0], ["1", "2"]),
                                      ([b"1", b"2"], [1.0, 2.0]), ([1 + 1j, 2], [1.0, 2.0]),
                                      ([1, "2"], [1.0, 2.0])])
def test_cosine_refuses_text_vectors(a: object, b: object) -> None:
    # numpy would silently read "1" as 1.0; text is not a vector
    with pytest.raises(ValueError, match="real numbers"):
        cosine(a, b)  # type: ignore[arg-type]
