"""Per-sample records and per-domain summaries of the two HCSU tasks.

Discrimination: an answer parsed to a candidate label is ``scored`` (right or wrong); an
answer with no valid label is ``unparsed`` (wrong, and counted in the invalid rate); a
failed request or an unbuildable question is ``error`` (excluded, reported as
``n_error``). Description: a non-empty answer is ``scored``; an empty one is
``unparsed`` and gets 0 on every metric (the model gave nothing to score, which is a
model failure, not a metric failure); when BERTScore or the judge fails, that metric is
``unscored`` for the sample and left out of its mean, never counted as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from heritage_eval.benchmarks.hcsu.description import PlannedRequest, word_count
from heritage_eval.benchmarks.hcsu.discrimination import PlannedItem
from heritage_eval.benchmarks.hcsu.judging import RICHNESS, TERMINOLOGY
from heritage_eval.benchmarks.hcsu.schema import DOMAINS, HcsuImage
from heritage_eval.core.parsing import clean_answer, parse_choice
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Outcome
from heritage_eval.metrics.bertscore import BertScorer, BertScoreUnavailable
from heritage_eval.metrics.classification import classification_scores
from heritage_eval.metrics.judge import Judgment

Record = dict[str, Any]
ANSWERED = (Outcome.SCORED.value, Outcome.UNPARSED.value)


def _base(target: HcsuImage) -> Record:
    return {"id": target.id, "domain": target.domain, "class": target.class_key,
            "char": target.char, "source": target.source}


def _response_fields(res: ItemResult | None) -> tuple[str | None, str | None, Record]:
    """(answer text, error, response metadata) of a finished item."""
    if res is None or not res.responses:
        return None, "request not sent", {}
    r = res.responses[-1]
    meta = {"latency_s": r.latency_s, "cached": r.cached, "attempts": r.attempts}
    return r.text, res.error, meta


def discrimination_records(plan: Sequence[PlannedItem], results: Mapping[str, ItemResult]
                           ) -> list[Record]:
    """One record per planned item: question, response, parse result and outcome."""
    out: list[Record] = []
    for item in plan:
        rec = _base(item.target)
        q = item.question
        if q is None:
            out.append(rec | {"outcome": Outcome.ERROR.value, "reason": item.error})
            continue
        rec["question"] = q.record()
        text, error, meta = _response_fields(results.get(q.sample_id))
        rec.update(meta)
        if error is not None:
            out.append(rec | {"outcome": Outcome.ERROR.value, "reason": error})
            continue
        parsed = parse_choice(text or "", q.labels,
                              {c.label: c.description for c in q.candidates})
        rec["response"] = text
        if not parsed.ok:
            out.append(rec | {"outcome": Outcome.UNPARSED.value, "reason": parsed.reason,
                              "predicted": None, "predicted_class": None, "correct": False})
            continue
        pred = str(parsed.value)
        out.append(rec | {"outcome": Outcome.SCORED.value, "predicted": pred,
                          "predicted_class": q.class_of(pred), "correct": pred == q.answer,
                          "parse_method": parsed.method})
    return out


def summarize_discrimination(records: Sequence[Record]) -> dict[str, Record]:
    """Per-domain scores (``n``, accuracy, macro P/R/F1, invalid rate, ``n_error``) for
    each domain with at least one answered sample."""
    per: dict[str, Record] = {}
    for domain in DOMAINS:
        rows = [r for r in records if r["domain"] == domain]
        answered = [r for r in rows if r["outcome"] in ANSWERED]
        if not answered:
            continue
        scores = classification_scores([r["class"] for r in answered],
                                       [r.get("predicted_class") for r in answered])
        per[domain] = scores.as_dict() | {"n_error": len(rows) - len(answered)}
    return per


def average_accuracy(per_domain: Mapping[str, Mapping[str, Any]]) -> float | None:
    """Avg. Acc: mean of the domains' accuracies (Table 2); ``None`` with no domain."""
    accs = [float(v["accuracy"]) for v in per_domain.values()]
    return fmean(accs) if accs else None


def description_records(plan: Sequence[PlannedRequest], results: Mapping[str, ItemResult]
                        ) -> list[Record]:
    """One record per planned request with the cleaned ``answer`` and its outcome."""
    out: list[Record] = []
    for item in plan:
        rec = _base(item.target)
        req = item.request
        if req is None:
            out.append(rec | {"outcome": Outcome.ERROR.value, "reason": item.error})
            continue
        rec["question"] = req.record()
        text, error, meta = _response_fields(results.get(req.sample_id))
        rec.update(meta)
        if error is not None:
            out.append(rec | {"outcome": Outcome.ERROR.value, "reason": error})
            continue
        answer = clean_answer(text or "")
        rec |= {"response": text, "answer": answer, "words": word_count(answer),
                "over_word_limit": word_count(answer) > req.max_words}
        rec["outcome"] = Outcome.SCORED.value if answer else Outcome.UNPARSED.value
        if not answer:
            rec["reason"] = "empty description"
        out.append(rec)
    return out


def add_bertscore(records: list[Record], references: Mapping[str, str],
                  scorer: BertScorer | None, unavailable: str | None = None) -> None:
    """Set ``bertscore_x10`` (F1 x 10) and ``bertscore_status`` on answered records.

    ``references``: class key -> expert description. ``scorer`` ``None`` (with the reason
    in ``unavailable``) or a scorer failure leaves every answer ``unscored``.
    """
    scored = [r for r in records if r["outcome"] == Outcome.SCORED.value]
    for r in records:
        if r["outcome"] == Outcome.UNPARSED.value:
            r |= {"bertscore_x10": 0.0, "bertscore_status": Outcome.SCORED.value}
    values: list[float] | None = None
    reason = unavailable or "no BERTScore model"
    if scorer is not None and scored:
        try:
            values = scorer.f1([r["answer"] for r in scored],
                               [references[r["class"]] for r in scored])
        except BertScoreUnavailable as exc:
            reason = str(exc)
    for i, r in enumerate(scored):
        if values is None:
            r |= {"bertscore_x10": None, "bertscore_status": Outcome.UNSCORED.value,
                  "bertscore_reason": reason}
        else:
            r |= {"bertscore_x10": 10.0 * values[i], "bertscore_status": Outcome.SCORED.value}


def add_judgments(records: list[Record], judgments: Mapping[str, Judgment],
                  experts: Mapping[str, Judgment]) -> None:
    """Copy the judge's scores (and the expert reference's, for Δ) into each record.

    ``judgments``: sample id -> judgment of its answer; ``experts``: class key ->
    judgment of the class's expert reference. Empty answers score 0 without a request.
    """
    for r in records:
        if r["outcome"] not in ANSWERED:
            continue
        exp = experts.get(r["class"])
        r["expert_terminology"] = exp.score(TERMINOLOGY) if exp else None
        r["expert_richness"] = exp.score(RICHNESS) if exp else None
        if r["outcome"] == Outcome.UNPARSED.value:
            r |= {TERMINOLOGY: 0.0, RICHNESS: 0.0, "judge_status": Outcome.SCORED.value}
            continue
        j = judgments.get(r["id"])
        if j is None or j.outcome is not Outcome.SCORED:
            r |= {TERMINOLOGY: None, RICHNESS: None, "judge_status": Outcome.UNSCORED.value,
                  "judge_reason": j.reason if j else "not judged", "judge_raw": j.raw if j
                  else None}
        else:
            r |= {TERMINOLOGY: j.score(TERMINOLOGY), RICHNESS: j.score(RICHNESS),
                  "judge_status": Outcome.SCORED.value}


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return fmean(vals) if vals else None


def _delta(rows: Sequence[Record], dim: str) -> float | None:
    """Mean model score minus mean expert score over rows where both are scored."""
    pairs = [(r[dim], r[f"expert_{dim}"]) for r in rows
             if r.get(dim) is not None and r.get(f"expert_{dim}") is not None]
    if not pairs:
        return None
    return fmean(p[0] for p in pairs) - fmean(p[1] for p in pairs)


def summarize_description(records: Sequence[Record], judged: bool) -> dict[str, Record]:
    """Per-domain means: ``n``, ``bertscore_x10``, ``terminology``, ``richness`` and
    their Δ against the expert references (``None`` without a judge), plus
    ``invalid_rate``, ``n_error``, unscored counts and the expert means."""
    per: dict[str, Record] = {}
    for domain in DOMAINS:
        rows = [r for r in records if r["domain"] == domain]
        ans = [r for r in rows if r["outcome"] in ANSWERED]
        if not ans:
            continue
        entry: Record = {
            "n": len(ans), "bertscore_x10": _mean([r.get("bertscore_x10") for r in ans]),
            TERMINOLOGY: None, RICHNESS: None, "terminology_delta": None,
            "richness_delta": None,
            "invalid_rate": sum(r["outcome"] == Outcome.UNPARSED.value for r in ans) / len(ans),
            "n_error": len(rows) - len(ans),
            "n_bertscore_unscored": sum(r.get("bertscore_status") == "unscored" for r in ans)}
        if judged:
            entry |= {TERMINOLOGY: _mean([r.get(TERMINOLOGY) for r in ans]),
                      RICHNESS: _mean([r.get(RICHNESS) for r in ans]),
                      "terminology_delta": _delta(ans, TERMINOLOGY),
                      "richness_delta": _delta(ans, RICHNESS),
                      "expert_terminology": _mean([r.get("expert_terminology") for r in ans]),
                      "expert_richness": _mean([r.get("expert_richness") for r in ans]),
                      "n_judge_unscored": sum(r.get("judge_status") == "unscored"
                                              for r in ans)}
        per[domain] = entry
    return per
