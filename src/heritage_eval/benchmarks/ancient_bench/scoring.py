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
    normalised texts; ``pred_tokens`` / ``ref_tokens``: token lists; ``ned_score`` and
    ``f1`` in [0, 1]; ``alignment``: insertions / deletions / substitutions turning the
    reference into the prediction.
    """

    extracted: str
    prediction: str
    reference: str
    pred_tokens: list[str]
    ref_tokens: list[str]
    ned_score: float
    f1: float
    alignment: Alignment


def score_pair(answer: str | None, ground_truth: str, flags: NormalizationFlags) -> PairScore:
    """Score a raw model answer against a ground-truth transcription.

    Raises :class:`EmptyReferenceError` if the ground truth normalises to no token.
    """
    extracted = extract_answer(answer)
    pred_text = normalize_text(extracted, flags)
    ref_text = normalize_text(ground_truth, flags)
    pred, ref = tokenize(pred_text), tokenize(ref_text)
    if not ref:
        raise EmptyReferenceError("ground truth is empty after normalisation")
    ref_s, pred_s = _one_char_per_token(ref_text, ref), _one_char_per_token(pred_text, pred)
    if ref_s is not None and pred_s is not None:  # same numbers, no per-token hashing
        alignment = align(ref_s, pred_s, ref, pred)
        f1 = char_f1(pred_s, ref_s)
    else:
        alignment = align(ref, pred)
        f1 = char_f1(pred, ref)
    # the alignment's length is the edit distance: computed once
    return PairScore(extracted=extracted, prediction=pred_text, reference=ref_text,
                     pred_tokens=pred, ref_tokens=ref,
                     ned_score=ned_score_from_distance(alignment.distance, len(pred), len(ref)),
                     f1=f1, alignment=alignment)


#: One private-use character per multi-character token (Supplementary Private Use Area-A).
_TOKEN_CHARS = {tok: chr(0xF0000 + i) for i, tok in enumerate(SPECIAL_TOKENS)}


def _one_char_per_token(text: str, tokens: list[str]) -> str | None:
    """A string with one character per token of ``tokens`` (the tokens of ``text``),
    mapping each multi-character token to a private-use character; ``None`` when
    ``text`` itself holds one of those characters (then the lists are used)."""
    if "<" not in text:
        return text  # every token is one character already
    if any(c in text for c in _TOKEN_CHARS.values()):
        return None
    return "".join([_TOKEN_CHARS.get(t, t) for t in tokens])


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
