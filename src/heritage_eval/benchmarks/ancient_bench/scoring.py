"""Score one (prediction, ground truth) pair and aggregate per category and overall.

Per pair: normalise both sides (``normalize.py``), then NED score and character F1
(``metrics/text.py``) and the edit operations of the alignment. Aggregation follows the
official evaluator (``run-checkpoint.py`` @ c51284fc, ``main``): per category the mean of
the sample scores, overall the unweighted mean of the category means, with sums
accumulated in the same order (categories in the paper's order, samples in file order)
so the floats are bit-identical.

One difference, on purpose: the official script counts a category without any scored
sample as 0.0 in the overall mean; here such a category has no mean (``None``) and is left
out of the overall (its samples were all errors, which are reported separately).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from heritage_eval.benchmarks.ancient_bench.normalize import (
    SPECIAL_TOKENS,
    NormalizationFlags,
    extract_answer,
    normalize_text,
    tokenize,
)
from heritage_eval.metrics.text import Alignment, align, char_f1, ned_score_from_distance


class EmptyReferenceError(ValueError):
    """The ground truth is empty after normalisation (the official script asserts)."""


@dataclass(frozen=True)
class PairScore:
    """Everything computed for one pair.

    ``extracted``: prediction after answer extraction; ``prediction`` / ``reference``:
    normalised texts; ``n_pred_tokens`` / ``n_ref_tokens``: their token counts
    (``pred_tokens`` / ``ref_tokens``: the token lists, built on demand); ``ned_score`` and
    ``f1`` in [0, 1]; ``alignment``: insertions / deletions / substitutions turning the
    reference into the prediction.
    """

    extracted: str
    prediction: str
    reference: str
    n_pred_tokens: int
    n_ref_tokens: int
    ned_score: float
    f1: float
    alignment: Alignment

    @property
    def pred_tokens(self) -> list[str]:
        return tokenize(self.prediction)

    @property
    def ref_tokens(self) -> list[str]:
        return tokenize(self.reference)


def score_pair(answer: str | None, ground_truth: str, flags: NormalizationFlags) -> PairScore:
    """Score a raw model answer against a ground-truth transcription.

    Raises :class:`EmptyReferenceError` if the ground truth normalises to no token.
    Both texts are scored as strings of one character per token (a private-use stand-in
    for each multi-character token, :func:`token_string`): the same numbers as token
    lists (parity tests), without hashing a string object per token.
    """
    extracted = extract_answer(answer)
    pred_text = normalize_text(extracted, flags)
    ref_text = normalize_text(ground_truth, flags)
    ref_s, pred_s = token_string(ref_text), token_string(pred_text)
    if ref_s is not None and pred_s is not None:
        if not ref_s:
            raise EmptyReferenceError("ground truth is empty after normalisation")
        # a stand-in only where a special token was replaced (the text got shorter):
        # otherwise the substituted characters are the tokens, nothing to name
        named = len(ref_s) != len(ref_text) or len(pred_s) != len(pred_text)
        alignment = align(ref_s, pred_s, token_names=_CHAR_TOKENS if named else None)
        f1 = char_f1(pred_s, ref_s)
        n_pred, n_ref = len(pred_s), len(ref_s)
    else:  # a text holds a stand-in character itself: token lists
        pred, ref = tokenize(pred_text), tokenize(ref_text)
        if not ref:
            raise EmptyReferenceError("ground truth is empty after normalisation")
        alignment = align(ref, pred)
        f1 = char_f1(pred, ref)
        n_pred, n_ref = len(pred), len(ref)
    # the alignment's length is the edit distance: computed once
    return PairScore(extracted=extracted, prediction=pred_text, reference=ref_text,
                     n_pred_tokens=n_pred, n_ref_tokens=n_ref,
                     ned_score=ned_score_from_distance(alignment.distance, n_pred, n_ref),
                     f1=f1, alignment=alignment)


#: One private-use character per multi-character token (Supplementary Private Use Area-A).
_TOKEN_CHARS = {tok: chr(0xF0000 + i) for i, tok in enumerate(SPECIAL_TOKENS)}
_CHAR_TOKENS = {c: tok for tok, c in _TOKEN_CHARS.items()}


def token_string(text: str) -> str | None:
    """``text`` as a string with one character per token of ``tokenize(text)``: each
    multi-character token replaced by its private-use stand-in; ``None`` when ``text``
    itself holds one of those characters (then token lists must be used). The two
    special tokens cannot overlap (each holds one ``<``, at its start), so replacing
    one after the other finds the same occurrences as the tokenizer's left-to-right scan.
    """
    if _has_stand_in(text):
        return None
    if "<" not in text:
        return text
    for tok, c in _TOKEN_CHARS.items():
        text = text.replace(tok, c)
    return text


#: Any stand-in character (one class search instead of a generator, twice a sample).
_STAND_IN = re.compile("[" + "".join(_CHAR_TOKENS) + "]")


def _has_stand_in(text: str) -> bool:
    return _STAND_IN.search(text) is not None


@dataclass
class CategoryMean:
    """Running totals of one category; ``ned_score`` / ``f1`` are ``None`` when ``n == 0``."""

    n: int = 0
    total_ned: float = 0.0
    total_f1: float = 0.0

    def add(self, ned: float, f1: float) -> None:
        # Plain sequential sums, as the official loop does (no compensated summation).
        self.total_ned += ned
        self.total_f1 += f1
        self.n += 1

    @property
    def ned_score(self) -> float | None:
        return self.total_ned / self.n if self.n else None

    @property
    def f1(self) -> float | None:
        return self.total_f1 / self.n if self.n else None


def category_means(scores: Iterable[tuple[str, float, float]],
                   categories: list[str]) -> dict[str, CategoryMean]:
    """Per-category totals from ``(category, ned_score, f1)`` in file order.

    Every name in ``categories`` gets an entry (``n == 0`` if nothing was scored); the
    result keeps that order. Raises ``KeyError`` for a category not listed.
    """
    out = {c: CategoryMean() for c in categories}
    for cat, ned, f1 in scores:
        out[cat].add(ned, f1)
    return out


def overall_mean(per_category: dict[str, CategoryMean]) -> tuple[float, float] | None:
    """Unweighted mean of the category means, in the dict's order; ``None`` if no category
    has a scored sample. Categories with ``n == 0`` are left out (see module doc)."""
    total_ned = 0.0
    total_f1 = 0.0
    count = 0
    for stats in per_category.values():
        if stats.n == 0:
            continue
        total_ned += stats.total_ned / stats.n
        total_f1 += stats.total_f1 / stats.n
        count += 1
    if count == 0:
        return None
    return total_ned / count, total_f1 / count
