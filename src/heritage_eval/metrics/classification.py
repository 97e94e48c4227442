"""Classification metrics for multiple-choice identification tasks (HCSU Table 2).

``y_true`` holds the true class of each answered sample; ``y_pred`` the predicted class,
or ``None`` for an unparsed answer. Unparsed answers count as wrong and are counted in
the invalid rate. Macro precision, recall and F1 are averaged over the *true* classes
present in ``y_true`` (scikit-learn ``precision_recall_fscore_support`` with
``labels=sorted(set(y_true))``, ``average="macro"``, ``zero_division=0``): a predicted
class that never occurs as a true class gets no column of its own. Such a prediction
(e.g. a class of the other HCSU domain under ``--distractor-pool all``) lowers accuracy
and recall but no class's precision, so macro precision can exceed accuracy; callers
report how many predictions fell outside the true classes.

Zero-division rule (scikit-learn ``zero_division=0``): a true class that is never
predicted has precision 0/0, counted as 0 in the macro precision (its recall is 0 and
its F1 0 by the formula ``2 TP / (2 TP + FP + FN)``, which is always defined for a true
class). :func:`never_predicted` names those classes. Edge rules in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ClassificationScores:
    """Scores of one group of samples. ``n``: answered samples (scored + unparsed).
    All rates are fractions in [0, 1]."""

    n: int
    accuracy: float
    macro_precision: float
    macro_recall: float
    macro_f1: float
    invalid_rate: float

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def classification_scores(y_true: Sequence[str], y_pred: Sequence[str | None]
                          ) -> ClassificationScores:
    """Accuracy, macro P/R/F1 over true classes, and invalid rate.

    Raises ``ValueError`` when the sequences are empty or of different lengths, when a
    true label is not a ``str`` (``None`` included: an unparsed answer has a prediction of
    ``None``, never a true class of ``None``) or a prediction is neither ``str`` nor
    ``None``; the message names the first bad label and its index. Needs scikit-learn
    (the ``hcsu`` extra), imported here so that importing this module does not.
    """
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} items, y_pred {len(y_pred)}")
    if not y_true:
        raise ValueError("no samples to score")
    for name, seq, none_ok in (("y_true", y_true, False), ("y_pred", y_pred, True)):
        for i, lab in enumerate(seq):
            if not (isinstance(lab, str) or (none_ok and lab is None)):
                raise ValueError(f"{name}[{i}] is {lab!r}: labels must be str"
                                 + (" or None" if none_ok else ""))
    # sklearn holds string labels in numpy "U" arrays, which drop trailing NULs ("a" and
    # "a\x00" would be one class): score integer codes instead. Every prediction outside
    # the true classes (None included) becomes -1; it gets no column either way.
    code = {c: i for i, c in enumerate(sorted(set(y_true)))}
    t = [code[c] for c in y_true]
    pred = [-1 if p is None else code.get(p, -1) for p in y_pred]
    p, r, f, _ = precision_recall_fscore_support(t, pred, labels=list(code.values()),
                                                 average="macro", zero_division=0)
    return ClassificationScores(
        n=len(y_true), accuracy=float(accuracy_score(t, pred)),
        macro_precision=float(p), macro_recall=float(r), macro_f1=float(f),
        invalid_rate=sum(x is None for x in y_pred) / len(y_pred))


def never_predicted(y_true: Sequence[str], y_pred: Sequence[str | None]) -> list[str]:
    """True classes (sorted) that no prediction names: their precision is 0/0, which the
    macro precision counts as 0 (``zero_division=0``)."""
    predicted = {p for p in y_pred if p is not None}
    return [c for c in sorted(set(y_true)) if c not in predicted]


def weighted_mean(groups: Mapping[str, Mapping[str, float | int | None]], key: str
                  ) -> float | None:
    """Mean of ``key`` over groups weighted by each group's ``n`` (HCSU Table 4 pools the
    Bei and Tie subsets this way). Groups with ``n == 0`` or a ``None`` value are skipped;
    ``None`` when nothing remains."""
    num = 0.0
    den = 0
    for g in groups.values():
        value, n = g.get(key), int(g.get("n") or 0)
        if value is None or n == 0:
            continue
        num += float(value) * n
        den += n
    return num / den if den else None
