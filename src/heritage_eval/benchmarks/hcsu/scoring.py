"""Per-sample records and per-domain summaries of the K-way discrimination task.

An answer parsed to a candidate label is ``scored`` (right or wrong); an answer with no
valid label is ``unparsed`` (wrong, and counted in the invalid rate); a failed request or
an unbuildable question (missing or corrupt image) is ``error`` (excluded, counted in
``n_error``, its reason listed).

Per domain: accuracy and macro precision / recall / F1 over the domain's *true* classes
(:func:`~heritage_eval.metrics.classification.classification_scores`, the labels being
the classes that occur as targets). With ``--distractor-pool all`` a model may answer a
class of the *other* domain: that answer is wrong (it lowers accuracy and recall) but
belongs to no true class of this domain, so it enters no class's precision; precision
can then exceed accuracy by a wide margin. ``n_cross_domain`` counts those answers.

Every domain present in the records is reported, also when none of its samples was
answered (``n`` 0, metrics ``None``). Avg. Acc (Table 2) is the mean of the domains'
accuracies and is ``None`` when a domain has no answered sample (a one-domain average
would not be comparable with the paper's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from heritage_eval.benchmarks.hcsu.discrimination import PlannedItem
from heritage_eval.benchmarks.hcsu.records import (
    ANSWERED,
    Record,
    record_domains,
    response_record,
)
from heritage_eval.core.parsing import flag_details, parse_choice
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Outcome
from heritage_eval.metrics.classification import classification_scores

_METRICS = ("accuracy", "macro_precision", "macro_recall", "macro_f1", "invalid_rate")


def discrimination_records(plan: Sequence[PlannedItem], results: Mapping[str, ItemResult]
                           ) -> list[Record]:
    """One record per planned item: question, response, parse result and outcome."""
    out: list[Record] = []
    for item in plan:
        q = item.question
        rec, text = response_record(item.target, q, item.error, results)
        if q is None or "outcome" in rec:  # not planned, or the request failed
            out.append(rec)
            continue
        parsed = parse_choice(text or "", q.labels,
                              {c.label: c.description for c in q.candidates})
        rec["response"] = text
        rec |= flag_details(parsed)  # parse_flags, when the parser flagged something
        if not parsed.ok:
            out.append(rec | {"outcome": Outcome.UNPARSED.value, "reason": parsed.reason,
                              "predicted": None, "predicted_class": None, "correct": False})
            continue
        pred = str(parsed.value)
        out.append(rec | {"outcome": Outcome.SCORED.value, "predicted": pred,
                          "predicted_class": q.class_of(pred), "correct": pred == q.answer,
                          "parse_method": parsed.method})
    return out


def _cross_domain(pred: str | None, domain: str) -> bool:
    return bool(pred) and str(pred).split("/", 1)[0] != domain


def domain_entry(domain: str, true: Sequence[str], pred: Sequence[str | None],
                 n_rows: int) -> Record:
    """The per-domain entry of :func:`summarize_discrimination` from the answered rows'
    true classes ``true`` and predicted classes ``pred`` (``None``: unparsed), in row
    order, and the domain's number of rows ``n_rows`` (errors included)."""
    entry: Record
    if true:
        entry = dict(classification_scores(list(true), list(pred)).as_dict())
    else:
        entry = {"n": 0, **dict.fromkeys(_METRICS)}
    return entry | {"n_error": n_rows - len(true),
                    "n_cross_domain": sum(_cross_domain(p, domain) for p in pred)}


def summarize_discrimination(records: Sequence[Record]) -> dict[str, Record]:
    """Per-domain scores for every domain present in ``records``.

    Each entry: ``n`` (answered samples), ``accuracy``, ``macro_precision``,
    ``macro_recall``, ``macro_f1``, ``invalid_rate`` (fractions in [0, 1], ``None`` when
    ``n`` is 0), ``n_error`` and ``n_cross_domain`` (answers naming a class of the other
    domain; see the module docstring).
    """
    per: dict[str, Record] = {}
    for domain in record_domains(records):
        rows = [r for r in records if r["domain"] == domain]
        answered = [r for r in rows if r["outcome"] in ANSWERED]
        per[domain] = domain_entry(domain, [r["class"] for r in answered],
                                   [r.get("predicted_class") for r in answered], len(rows))
    return per


def average_accuracy(per_domain: Mapping[str, Mapping[str, Any]]) -> float | None:
    """Avg. Acc: mean of the domains' accuracies (Table 2); ``None`` when there is no
    domain or some domain has no answered sample (see :func:`average_note`)."""
    accs = [v.get("accuracy") for v in per_domain.values()]
    if not accs or any(a is None for a in accs):
        return None
    return fmean(float(a) for a in accs if a is not None)


def average_note(per_domain: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Why Avg. Acc is ``None`` (a domain without answered samples), else ``None``."""
    empty = [d for d, v in per_domain.items() if v.get("accuracy") is None]
    if not empty:
        return None
    parts = [f"{d} has no answered sample ({per_domain[d].get('n_error', 0)} error(s))"
             for d in empty]
    why = ("" if len(empty) == len(per_domain) else
           " An average over the remaining domain alone would not be comparable.")
    return "Avg. Acc not computed: " + "; ".join(parts) + "." + why


def cross_domain_note(per_domain: Mapping[str, Mapping[str, Any]]) -> str:
    """The precision caveat of ``--distractor-pool all`` with the cross-domain counts."""
    counts = ", ".join(f"{d} {v.get('n_cross_domain', 0)}" for d, v in per_domain.items())
    return ("Macro precision, recall and F1 average over the true classes of each domain. "
            "With --distractor-pool all an answer naming a class of the other domain is "
            "wrong (it lowers accuracy and recall) but enters no class's precision, so "
            f"precision can exceed accuracy. Cross-domain answers: {counts}.")


def nothing_answered(per_domain: Mapping[str, Mapping[str, Any]]) -> bool:
    """True when no sample of any domain was answered (every one ended as error)."""
    return all(int(v.get("n") or 0) == 0 for v in per_domain.values())
