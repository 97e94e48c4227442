"""Text-recognition metrics over token sequences: edit distance, NED score, character F1.

All functions take *token lists* (``Sequence[str]``), not raw strings, so that a multi-
character placeholder such as ``<unrecognizable>`` counts as one token. Tokenisation and
normalisation belong to the benchmark (see ``benchmarks/ancient_bench/normalize.py``).

Formulas follow the official Ancient-Bench evaluator (GitHub ``SCUT-DLVCLab/Ancient_Bench``,
``eval/.ipynb_checkpoints/run-checkpoint.py`` @ c51284fc, functions
``normalized_edit_distance`` and ``calculate_char_f1``); the floating-point operations are
performed in the same order so results are bit-identical. Edit distances and edit scripts
come from ``rapidfuzz.distance.Levenshtein``, which accepts lists of hashable tokens: the
functions the official evaluator's ``Levenshtein`` package wraps (its ``distance`` and
``editops`` call them), without that GPL wrapper.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from rapidfuzz.distance import Levenshtein


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two token sequences (unit costs), ``>= 0``.

    Symmetric. ``edit_distance([], b) == len(b)``.
    """
    return int(Levenshtein.distance(list(a), list(b)))


def normalized_edit_distance(a: Sequence[str], b: Sequence[str]) -> float:
    """``edit_distance(a, b) / max(len(a), len(b))`` in [0, 1]; 0.0 when both are empty.

    Official evaluator: ``normalized_edit_distance``.
    """
    if not a and not b:
        return 0.0
    return ned_from_distance(edit_distance(a, b), len(a), len(b))


def ned_from_distance(distance: int, len_a: int, len_b: int) -> float:
    """``distance / max(len_a, len_b)`` (0.0 when both lengths are 0), for callers that
    already know the distance (e.g. from :func:`align`); same float operations."""
    max_len = max(len_a, len_b)
    return float(distance / max_len) if max_len > 0 else 0.0


def ned_score(prediction: Sequence[str], reference: Sequence[str]) -> float:
    """The paper's "NED" score, ``1 - normalized_edit_distance`` in [0, 1], higher is better.

    Both sequences empty gives 1.0; exactly one empty gives 0.0. Official evaluator:
    ``edit_score = 1.0 - normalized_edit_distance(target, predict)``. Raises
    ``ValueError`` naming the argument when either is not a sequence (``None``, a number).
    """
    for name, arg in (("prediction", prediction), ("reference", reference)):
        if not isinstance(arg, Sequence):
            raise ValueError(f"ned_score: {name} must be a str or a sequence of tokens, "
                             f"got {type(arg).__name__}")
    return 1.0 - normalized_edit_distance(reference, prediction)


def ned_score_from_distance(distance: int, len_prediction: int, len_reference: int) -> float:
    """:func:`ned_score` from a known edit distance (bit-identical result)."""
    return 1.0 - ned_from_distance(distance, len_reference, len_prediction)


def char_f1(prediction: Sequence[str], reference: Sequence[str]) -> float:
    """Character (token) F1 from the multiset intersection, in [0, 1].

    ``precision = |P ∩ R| / |P|``, ``recall = |P ∩ R| / |R|`` (multiset intersection,
    order ignored), ``F1 = 2 P R / (P + R)``, which equals ``2 |P ∩ R| / (|P| + |R|)``.
    Returns 0.0 when exactly one side is empty or they share no token (the second form
    is then 0 / positive). Official evaluator: ``calculate_char_f1`` (same operation
    order, bit-identical floats). Strings count as one token per code point.

    Raises ``ValueError`` when both are empty: F1 is 0/0 there (the official function
    would return 0.0, but its caller asserts a non-empty ground truth first, and so does
    Ancient-Bench's :func:`~heritage_eval.benchmarks.ancient_bench.scoring.score_pair`).
    """
    if not prediction:
        if not reference:
            raise ValueError("character F1 is undefined for two empty sequences")
        return 0.0
    overlap = multiset_overlap(prediction, reference)
    if overlap == 0:
        return 0.0
    precision = overlap / len(prediction)
    recall = overlap / len(reference)
    return 2 * (precision * recall) / (precision + recall)


#: From this many characters on, strings are counted with numpy (sorting code points)
#: rather than ``Counter`` (hashing each character): about twice as fast on long texts.
_NUMPY_FROM = 64


def multiset_overlap(a: Sequence[str], b: Sequence[str]) -> int:
    """``|A ∩ B|`` of two token multisets, ``Σ_t min(count_A(t), count_B(t))``, ``>= 0``.

    Two strings of 64+ code points each are counted with numpy over UTF-32 code points
    (lone surrogates included, as ``Counter`` counts them); the result equals the
    ``Counter`` path exactly (tests)."""
    if isinstance(a, str) and isinstance(b, str) and min(len(a), len(b)) >= _NUMPY_FROM:
        import numpy as np

        # Both sides' code points sorted: the k-th copy of a character of A (k counted
        # from 0 within its run) is matched when B holds more than k copies of it.
        # surrogatepass: a lone surrogate is one code point too, as Counter counts it
        x = np.sort(np.frombuffer(a.encode("utf-32-le", "surrogatepass"), "<u4"))
        y = np.sort(np.frombuffer(b.encode("utf-32-le", "surrogatepass"), "<u4"))
        rank = np.arange(x.size) - np.searchsorted(x, x, "left")
        in_b = np.searchsorted(y, x, "right") - np.searchsorted(y, x, "left")
        return int(np.count_nonzero(rank < in_b))
    counts_b = Counter(b)
    overlap = 0
    for token, n in Counter(a).items():
        m = counts_b.get(token)
        if m:
            overlap += n if n < m else m
    return overlap


@dataclass(frozen=True)
class Alignment:
    """Counts of one minimal edit script turning ``reference`` into ``hypothesis``.

    ``insertions``: hypothesis tokens with no reference counterpart (extra output);
    ``deletions``: reference tokens missing from the hypothesis; ``substitutions``:
    aligned pairs that differ, listed in ``substituted`` as ``(reference token,
    hypothesis token)``. ``insertions + deletions + substitutions == edit_distance``.
    When several minimal scripts exist, the one chosen by ``Levenshtein.editops`` is used
    (rapidfuzz's, as the ``Levenshtein`` package returns it).
    """

    insertions: int
    deletions: int
    substitutions: int
    substituted: tuple[tuple[str, str], ...] = field(default=())

    @property
    def distance(self) -> int:
        return self.insertions + self.deletions + self.substitutions


def align(reference: Sequence[str], hypothesis: Sequence[str],
          reference_tokens: Sequence[str] | None = None,
          hypothesis_tokens: Sequence[str] | None = None,
          token_names: Mapping[str, str] | None = None) -> Alignment:
    """Insertions / deletions / substitutions of a minimal alignment (``Levenshtein.editops``).

    ``reference`` is the ground truth, ``hypothesis`` the prediction; both token lists,
    or strings holding one character per token (faster: no per-token hashing). With
    strings that stand for token lists (see ``ancient_bench.scoring``), ``substituted``
    names the tokens when either the lists are passed as ``reference_tokens`` /
    ``hypothesis_tokens`` or ``token_names`` maps each stand-in character to its token.
    The edit script depends only on which positions are equal, so it is the same for a
    token list and for any string that encodes it one-to-one.
    """
    ops = cast("list[tuple[str, int, int]]", Levenshtein.editops(reference, hypothesis).as_list())
    ref_t = reference if reference_tokens is None else reference_tokens
    hyp_t = hypothesis if hypothesis_tokens is None else hypothesis_tokens
    pairs = tuple((ref_t[i], hyp_t[j]) for op, i, j in ops if op == "replace")
    if token_names:
        pairs = tuple((token_names.get(a, a), token_names.get(b, b)) for a, b in pairs)
    ins = sum(1 for op in ops if op[0] == "insert")
    return Alignment(insertions=ins, deletions=len(ops) - ins - len(pairs),
                     substitutions=len(pairs), substituted=pairs)
