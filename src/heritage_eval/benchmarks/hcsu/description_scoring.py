"""Per-sample records and per-domain summaries of the N-shot description task.

Outcomes (docs/reference/run-folder.md, "Sample states": every sample ends in one
explicit state): a non-empty answer is
``scored``; an empty one (nothing left after removing reasoning blocks and markup) is
``unparsed``: like an unparsed answer of any task it is wrong, so it counts in the
invalid rate and scores **0** on BERTScore (x10) and on both judge scales inside those
means, as an empty open answer scores 0 in MUSE. That 0 enters a domain's mean only when
the metric gave at least one real score in that domain; otherwise the mean is ``None``
(``–``), so a dead judge or a disabled BERTScore never shows as 0.00. A failed request is
``error`` (excluded, reported). When BERTScore or the judge fails for a non-empty answer,
that metric is ``unscored`` for the sample and left out of its mean, never counted as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heritage_eval.benchmarks.hcsu.description import PlannedRequest, word_count
from heritage_eval.benchmarks.hcsu.description_tally import DomainTally, JudgeTally
from heritage_eval.benchmarks.hcsu.judging import RICHNESS, TERMINOLOGY
from heritage_eval.benchmarks.hcsu.records import (
    ANSWERED,
    Record,
    record_domains,
    response_record,
)
from heritage_eval.core.parsing import clean_answer
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Outcome
from heritage_eval.metrics.bertscore import BertScorer, BertScoreUnavailable
from heritage_eval.metrics.flags import MetricValue, merge_flags
from heritage_eval.metrics.judge import Judgment

SCORED = Outcome.SCORED.value
UNPARSED = Outcome.UNPARSED.value
UNSCORED = Outcome.UNSCORED.value


def description_records(plan: Sequence[PlannedRequest], results: Mapping[str, ItemResult]
                        ) -> list[Record]:
    """One record per planned request with the cleaned ``answer`` and its outcome."""
    out: list[Record] = []
    for item in plan:
        req = item.request
        rec, text = response_record(item.target, req, item.error, results)
        if req is None or "outcome" in rec:  # not planned, or the request failed
            out.append(rec)
            continue
        answer = clean_answer(text or "")
        rec |= {"response": text, "answer": answer, "words": word_count(answer),
                "over_word_limit": word_count(answer) > req.max_words}
        rec["outcome"] = SCORED if answer else UNPARSED
        if not answer:
            rec["reason"] = "empty description"
        out.append(rec)
    return out


def add_bertscore(records: list[Record], references: Mapping[str, str],
                  scorer: BertScorer | None, unavailable: str | None = None) -> None:
    """Set ``bertscore_x10`` (F1 x 10) and ``bertscore_status`` on answered records.

    ``references``: class key -> expert description. Empty (``unparsed``) answers are not
    sent to the scorer: ``None`` with status ``unparsed`` here, 0 in the domain mean (see
    :func:`summarize_description`). ``scorer`` ``None`` (with the reason in
    ``unavailable``) or a scorer failure leaves every answer ``unscored``. A pair the
    metric cannot score (answer or reference with no token, e.g. an empty expert
    description) is ``unscored`` with the reason; the metric's flags (``bertscore_empty``,
    ``bertscore_truncated``) go to ``metric_flags``.
    """
    scored = [r for r in records if r["outcome"] == SCORED]
    for r in records:
        if r["outcome"] == UNPARSED:
            r |= {"bertscore_x10": None, "bertscore_status": UNPARSED}
    values: list[MetricValue] | None = None
    reason = unavailable or "no BERTScore model"
    if scorer is not None and scored:
        try:
            values = scorer.score_pairs([r["answer"] for r in scored],
                                        [references.get(r["class"]) or "" for r in scored])
        except BertScoreUnavailable as exc:
            reason = str(exc)
    for i, r in enumerate(scored):
        if values is None:
            r |= {"bertscore_x10": None, "bertscore_status": UNSCORED,
                  "bertscore_reason": reason}
            continue
        v = values[i]
        if v.flags:
            r["metric_flags"] = merge_flags(r.get("metric_flags", ()), v.flags)
        if v.value is None:
            r |= {"bertscore_x10": None, "bertscore_status": UNSCORED,
                  "bertscore_reason": v.reason}
        else:
            r |= {"bertscore_x10": 10.0 * v.value, "bertscore_status": SCORED}


def add_judgments(records: list[Record], judgments: Mapping[str, Judgment],
                  experts: Mapping[str, Judgment]) -> None:
    """Copy the judge's scores (and the expert reference's, for Δ) into each record.

    ``judgments``: sample id -> judgment of its answer; ``experts``: class key ->
    judgment of the class's expert reference. Empty (``unparsed``) answers are not
    judged: their scores are ``None`` with ``judge_status`` ``unparsed`` here, 0 in the
    domain means (see :func:`summarize_description`).
    """
    for r in records:
        if r["outcome"] not in ANSWERED:
            continue
        exp = experts.get(r["class"])
        r["expert_terminology"] = exp.score(TERMINOLOGY) if exp else None
        r["expert_richness"] = exp.score(RICHNESS) if exp else None
        if r["outcome"] == UNPARSED:
            r |= {TERMINOLOGY: None, RICHNESS: None, "judge_status": UNPARSED}
            continue
        j = judgments.get(r["id"])
        if j is None or j.outcome is not Outcome.SCORED:
            r |= {TERMINOLOGY: None, RICHNESS: None, "judge_status": UNSCORED,
                  "judge_reason": j.reason if j else "not judged", "judge_raw": j.raw if j
                  else None}
        else:
            r |= {TERMINOLOGY: j.score(TERMINOLOGY), RICHNESS: j.score(RICHNESS),
                  "judge_status": SCORED, "judge_raw": j.raw}


def summarize_description(records: Sequence[Record], judged: bool) -> dict[str, Record]:
    """Per-domain summary for every domain present in ``records``.

    ``n``: answered samples (scored + unparsed); ``n_unparsed``: empty descriptions;
    ``invalid_rate``: ``n_unparsed`` / ``n`` in [0, 1] (``None`` when ``n`` is 0);
    ``n_error``. ``bertscore_x10`` (0–10): mean over the ``n_bertscore`` answers BERTScore
    scored plus a 0 per unparsed answer (``n_bertscore_unscored`` failed and are left
    out). ``terminology`` / ``richness`` (0–10) and their Δ (model minus expert
    reference, same rows): over the ``n_judged`` answers the judge scored plus a 0 per
    unparsed answer (``n_judge_unscored`` failed); all ``None`` without a judge. A
    metric with no real score in the domain gives ``None``, zeros or not (module
    docstring).
    """
    per: dict[str, Record] = {}
    for domain in record_domains(records):
        tally = DomainTally()
        for r in records:
            if r["domain"] == domain:
                tally.add(r["outcome"], r.get("bertscore_status"), r.get("bertscore_x10"),
                          r.get("judge_status"),
                          {TERMINOLOGY: r.get(TERMINOLOGY), RICHNESS: r.get(RICHNESS)},
                          {TERMINOLOGY: r.get(f"expert_{TERMINOLOGY}"),
                           RICHNESS: r.get(f"expert_{RICHNESS}")})
        per[domain] = tally.entry(judged)
    return per


def scored_count(records: Sequence[Record], bertscore: bool, judged: bool) -> int:
    """Non-empty answers that received at least one requested metric value (all
    non-empty answers when no metric was requested)."""
    rows = [r for r in records if r["outcome"] == SCORED]
    if not bertscore and not judged:
        return len(rows)
    return sum((bertscore and r.get("bertscore_status") == SCORED)
               or (judged and r.get("judge_status") == SCORED) for r in rows)


def answered_count(records: Sequence[Record], bertscore: bool, judged: bool) -> int:
    """Samples that ended with a result: :func:`scored_count` plus the ``unparsed``
    (empty) answers, which are a valid, wrong result. 0 means every sample is ``error``
    or ``unscored`` (the exit-status rule of every HCSU command)."""
    return scored_count(records, bertscore, judged) + sum(
        r["outcome"] == UNPARSED for r in records)


def judge_digest(records: Sequence[Record]) -> dict[str, Any]:
    """Judged / unscored counts and the most frequent unscored reasons (for stderr)."""
    tally = JudgeTally()
    for r in records:
        tally.add(r.get("judge_status"), r.get("judge_reason"))
    return tally.digest()
