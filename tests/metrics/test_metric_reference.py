"""Differential tests: each metric against an independent reference on random inputs.

References (none shares code with the metric under test):
- edit distance: a plain-Python dynamic programme (Wagner–Fischer) and ``rapidfuzz``;
- multiset overlap / character F1: ``collections.Counter`` intersection and the
  official Ancient-Bench formula written out here (bit-exact ``==``);
- Ancient-Bench pair scores: the same official formulas on the official token lists
  (``tokenize``), compared with the scorer's private-use string fast path;
- classification: scikit-learn called on the raw labels, and the textbook per-class
  formulas in plain Python (``zero_division=0``: precision 0/0 counts 0);
- cosine: numpy ``dot / (norm * norm)`` and ``scipy.spatial.distance.cosine``;
- BERTScore: ``bert_score.score`` (the function, not the scorer class the metric wraps)
  and the formula recomputed with ``transformers`` on the same model and layer.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from heritage_eval.benchmarks.ancient_bench.normalize import (
    PROTOCOLS,
    normalize_text,
    tokenize,
)
from heritage_eval.benchmarks.ancient_bench.scoring import EmptyReferenceError, score_pair
from heritage_eval.metrics.classification import classification_scores
from heritage_eval.metrics.embeddings import cosine
from heritage_eval.metrics.text import (
    align,
    char_f1,
    edit_distance,
    multiset_overlap,
    ned_score,
)

SETTINGS = settings(max_examples=200, deadline=None)

# tokens as Ancient-Bench sees them, plus Unicode oddities (NUL, combining mark, lone
# surrogates, full-width, astral, the scorer's own private-use stand-in characters)
TOKENS = ["甲", "乙", "丙", "<unrecognizable>", "<undeciphered>", "▢", "〇", "\x00",
          "\u0301", "\ud800", "\udfff", "Ａ", "𠀀", chr(0xF0000), chr(0xF0001), "a"]
token_lists = st.lists(st.sampled_from(TOKENS), max_size=14)
char_strings = st.lists(st.sampled_from([t for t in TOKENS if len(t) == 1]),
                        max_size=14).map("".join)


def dp_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance by the textbook dynamic programme (unit costs)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def official_ned_score(pred: Sequence[str], gt: Sequence[str]) -> float:
    """The official evaluator's ``1.0 - normalized_edit_distance(target, predict)``."""
    max_len = max(len(gt), len(pred))
    ned = dp_distance(gt, pred) / max_len if max_len > 0 else 0.0
    return 1.0 - ned


def official_char_f1(pred: Sequence[str], gt: Sequence[str]) -> float:
    """The official ``calculate_char_f1``: Counter intersection, P, R, 2PR/(P+R)."""
    if len(pred) == 0:
        return 0.0
    common = sum((Counter(pred) & Counter(gt)).values())
    if common == 0:
        return 0.0
    p = common / len(pred)
    r = common / len(gt)
    return 2 * (p * r) / (p + r)


# ---------------------------------------------------------------- edit distance, NED, F1


@SETTINGS
@given(a=token_lists, b=token_lists)
def test_edit_distance_equals_dp_on_token_lists(a: list[str], b: list[str]) -> None:
    d = dp_distance(a, b)
    assert edit_distance(a, b) == d
    assert align(a, b).distance == d
    assert ned_score(b, a) == official_ned_score(b, a)  # bit-identical floats


@SETTINGS
@given(a=char_strings, b=char_strings)
def test_edit_distance_equals_dp_and_rapidfuzz_on_strings(a: str, b: str) -> None:
    from rapidfuzz.distance import Levenshtein as RF

    d = dp_distance(a, b)
    assert edit_distance(a, b) == d == RF.distance(a, b)
    assert align(a, b).distance == d


@SETTINGS
@given(a=token_lists, b=token_lists)
def test_char_f1_equals_official_formula(a: list[str], b: list[str]) -> None:
    assert multiset_overlap(a, b) == sum((Counter(a) & Counter(b)).values())
    if a or b:
        assert char_f1(a, b) == official_char_f1(a, b)


@SETTINGS
@given(a=st.text(min_size=64, max_size=300), b=st.text(min_size=64, max_size=300),
       extra=st.text(alphabet="\x00\ud800\udfff甲\u0301", max_size=40))
def test_overlap_numpy_path_equals_counter(a: str, b: str, extra: str) -> None:
    # two strings of 64+ code points take the numpy path; Counter is the reference
    a, b = a + extra, b + extra[::-1]
    assert multiset_overlap(a, b) == sum((Counter(a) & Counter(b)).values())
    assert multiset_overlap(a, a) == len(a)


# ---------------------------------------------------------------- Ancient-Bench pair path

WRAPPERS = [" ", "，", "。", "<", ">", "#", "<res>", "</res>", "\n"]
raw_text = st.lists(st.sampled_from([*TOKENS, *WRAPPERS]), max_size=20).map("".join)


@SETTINGS
@given(pred=raw_text, gt=raw_text, protocol=st.sampled_from(sorted(PROTOCOLS)))
def test_score_pair_equals_official_formulas_on_token_lists(pred: str, gt: str,
                                                            protocol: str) -> None:
    # the scorer uses one-character-per-token strings; the official code uses token
    # lists: equal numbers (==) on every generated pair, stand-in characters included
    flags = PROTOCOLS[protocol]
    ref_tokens = tokenize(normalize_text(gt, flags))
    if not ref_tokens:
        with pytest.raises(EmptyReferenceError):
            score_pair(pred, gt, flags)
        return
    s = score_pair(pred, gt, flags)
    pred_tokens = tokenize(s.prediction)
    assert s.ned_score == official_ned_score(pred_tokens, ref_tokens)
    assert s.f1 == official_char_f1(pred_tokens, ref_tokens)
    assert (s.n_pred_tokens, s.n_ref_tokens) == (len(pred_tokens), len(ref_tokens))
    assert s.alignment.distance == dp_distance(ref_tokens, pred_tokens)


# ---------------------------------------------------------------- classification

labels = st.sampled_from(["a", "b", "c", "d"])


def plain_macro(y_true: Sequence[str], y_pred: Sequence[str | None]
                ) -> tuple[float, float, float, float]:
    """Accuracy and macro P/R/F1 over the true classes, by the textbook formulas;
    precision 0/0 (class never predicted) counts 0."""
    classes = sorted(set(y_true))
    ps, rs, fs = [], [], []
    for c in classes:
        tp = sum(t == c and p == c for t, p in zip(y_true, y_pred, strict=True))
        fp = sum(t != c and p == c for t, p in zip(y_true, y_pred, strict=True))
        fn = sum(t == c and p != c for t, p in zip(y_true, y_pred, strict=True))
        ps.append(tp / (tp + fp) if tp + fp else 0.0)
        rs.append(tp / (tp + fn))
        fs.append(2 * tp / (2 * tp + fp + fn))
    acc = sum(t == p for t, p in zip(y_true, y_pred, strict=True)) / len(y_true)
    k = len(classes)
    return acc, sum(ps) / k, sum(rs) / k, sum(fs) / k


@SETTINGS
@given(st.lists(st.tuples(labels, st.one_of(st.none(), labels, st.just("zzz"))),
                min_size=1, max_size=30))
def test_classification_equals_sklearn_and_formulas(pairs: list[tuple[str, str | None]]
                                                    ) -> None:
    y_true = [t for t, _ in pairs]
    y_pred = [p for _, p in pairs]
    got = classification_scores(y_true, y_pred)
    want = plain_macro(y_true, y_pred)
    assert (got.accuracy, got.macro_precision, got.macro_recall, got.macro_f1) == \
        pytest.approx(want, abs=1e-12)
    # scikit-learn on the raw labels (an unparsed answer as a label of its own)
    raw = ["<none>" if p is None else p for p in y_pred]
    p, r, f, _ = precision_recall_fscore_support(y_true, raw, labels=sorted(set(y_true)),
                                                 average="macro", zero_division=0)
    assert (got.macro_precision, got.macro_recall, got.macro_f1) == \
        pytest.approx((p, r, f), abs=1e-12)
    assert got.accuracy == pytest.approx(accuracy_score(y_true, raw), abs=1e-12)


# ---------------------------------------------------------------- cosine

moderate = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 16).flatmap(lambda n: st.tuples(
    st.lists(moderate, min_size=n, max_size=n), st.lists(moderate, min_size=n, max_size=n))))
def test_cosine_equals_numpy_and_scipy(pair: tuple[list[float], list[float]]) -> None:
    from scipy.spatial.distance import cosine as scipy_cosine_distance

    a, b = np.asarray(pair[0]), np.asarray(pair[1])
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    got = cosine(a, b).value
    if na < 1e-150 or nb < 1e-150:  # zero (or underflowing) vectors: no reference value
        if not a.any() or not b.any():
            assert got is None
        return
    want = float(np.dot(a, b) / (na * nb))
    assert got is not None
    assert got == pytest.approx(max(-1.0, min(1.0, want)), abs=1e-12)
    if min(na, nb) > 1e-70:  # scipy squares the norms and multiplies: uu * vv underflows
        assert got == pytest.approx(1.0 - scipy_cosine_distance(a, b), abs=1e-9)


@SETTINGS
@given(st.lists(st.floats(min_value=-1, max_value=1, allow_nan=False, width=32),
                min_size=2, max_size=384))
def test_cosine_of_float32_unit_rows(v: list[float]) -> None:
    # embedders return float32 rows; any non-zero row against itself and against a
    # positive multiple of itself gives 1 (float64 inside, subnormal entries included:
    # normalising such a row in float32 first would give NaN)
    x = np.asarray(v, dtype=np.float32)
    if not x.any():
        assert cosine(x, x).value is None
        return
    for y in (x, x * np.float32(3.0)):
        got = cosine(x, y).value
        assert got is not None and math.isclose(got, 1.0, abs_tol=1e-12)


# ---------------------------------------------------------------- BERTScore (model)

WORDS = ["ink", "brush", "seal", "script", "thin", "bold", "stroke", "clerical", "tall",
         "round", "flared", "tail", "rhythm", "草书", "楷", "Ａ", "été", "x"]


@pytest.fixture(scope="module")
def scorer():  # type: ignore[no-untyped-def]
    from heritage_eval.metrics.bertscore import BertScorer

    return BertScorer()


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(pairs=st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
                                st.lists(st.sampled_from(WORDS), min_size=1, max_size=12)),
                      min_size=1, max_size=4))
def test_bertscore_equals_bert_score_function(scorer, pairs) -> None:  # type: ignore[no-untyped-def]
    import bert_score

    from heritage_eval.metrics.bertscore import bundled_model_path

    cands = [" ".join(c) for c, _ in pairs]
    refs = [" ".join(r) for _, r in pairs]
    got = [v.value for v in scorer.score_pairs(cands, refs)]
    _, _, f = bert_score.score(cands, refs, model_type=str(bundled_model_path()),
                               num_layers=6, idf=False, batch_size=8)
    assert got == pytest.approx([float(x) for x in f.tolist()], abs=1e-5)


def _transformers_f1(cand: str, ref: str, max_length: int = 512) -> float:
    """Zhang et al. (2020) greedy matching recomputed with transformers: layer 6 token
    states, texts cut at ``max_length`` tokens like the scorer. As in bert-score's
    ``greedy_cos_idf``, [CLS]/[SEP] are not scored (weight 0) but stay match targets:
    a word may find its best cosine at the other text's [CLS] or [SEP]."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from heritage_eval.metrics.bertscore import bundled_model_path

    path = str(bundled_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()

    def states(text: str) -> torch.Tensor:
        enc = tok(text, return_tensors="pt", truncation=True, max_length=max_length)
        with torch.no_grad():
            hidden = model(**enc, output_hidden_states=True).hidden_states[6][0]
        return hidden / hidden.norm(dim=-1, keepdim=True)

    sim = states(cand) @ states(ref).T  # special tokens included on both axes
    p = sim[1:-1].max(dim=1).values.mean().item()  # each candidate word's best match
    r = sim[:, 1:-1].max(dim=0).values.mean().item()  # each reference word's best match
    return 2 * p * r / (p + r)


@pytest.mark.slow
def test_bertscore_equals_formula_including_over_length(scorer) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    ref = "thin bold strokes in tall clerical script with flared tails"
    for n in (3, 100, 700):  # 700 words > 512 word pieces: truncated and flagged
        cand = " ".join(rng.choice(WORDS[:13], size=n))
        (v,) = scorer.score_pairs([cand], [ref])
        assert v.flags == (("bertscore_truncated",) if n == 700 else ())
        assert v.value == pytest.approx(_transformers_f1(cand, ref), abs=2e-5)
