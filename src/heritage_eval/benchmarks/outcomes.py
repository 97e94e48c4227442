"""Refused and truncated answers: two response outcomes every benchmark treats alike.

**Refusals.** The OpenAI-compatible backend marks a response blocked by a content filter
(HTTP 200 with ``choices: []`` and ``prompt_filter_results``, or ``finish_reason:
"content_filter"``) with ``meta["failure"] = "content_filter"``, and a ``message.refusal``
without content with ``"refused"``; neither is ever cached. What a benchmark does with
such a turn is the ``--refusals`` policy (:func:`add_refusals_arg`):

- ``error`` (default): the record is ``error`` with the reason ``"refused: content
  filter"`` (or ``"refused: model refusal"``), excluded from every score like any other
  error and counted apart (``details.refused``); the raw body stays in
  ``turns[].response.error``;
- ``wrong``: the refusal counts as a wrong answer: it is scored as an empty answer
  (Ancient-Bench: NED 0, F1 0; multiple choice: ``unparsed``; an open answer: empty),
  with ``details.refused`` set and ``turns[].response.failure`` kept.

**Truncation.** A response that stopped at the max-tokens limit (``finish_reason:
"length"``) is an answer and is scored as it stands (official parity: Ancient-Bench
scores the whole text when the closing ``</res>`` is missing; a multiple-choice answer cut
before any letter is ``unparsed``). Its record gets ``details.truncated = true``, and the
truncation rate (truncated ÷ responses received, i.e. records whose scored turn has a
response text) is reported per model and per group in the summary body
(:func:`outcomes_body`) and ``summary.md`` (:func:`outcomes_markdown`).
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from heritage_eval.core.record import ResponseRecord, SampleRecord
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Outcome, Response

#: Failure kinds (``meta["failure"]``) that are refusals -> the record's error reason.
REFUSAL_REASONS = {"content_filter": "refused: content filter",
                   "refused": "refused: model refusal"}
#: ``--refusals`` choices (see the module docstring).
REFUSAL_POLICIES = ("error", "wrong")
#: The ``finish_reason`` of a response cut at the max-tokens limit.
TRUNCATED_FINISH = "length"


def add_refusals_arg(p: argparse.ArgumentParser) -> None:
    """``--refusals {error,wrong}`` (default ``error``; module docstring)."""
    p.add_argument("--refusals", choices=REFUSAL_POLICIES, default="error",
                   help="a turn refused by a content filter (or a model refusal): 'error' "
                        "leaves it out of the scores and counts it apart (reason "
                        "'refused: content filter'); 'wrong' counts it as a wrong answer "
                        "(scored 0 / unparsed) (default: error)")


def refusals_policy(opts: argparse.Namespace | None) -> str:
    """The ``--refusals`` policy of ``opts`` (``"error"`` when absent)."""
    value = getattr(opts, "refusals", None) if opts is not None else None
    return str(value) if value in REFUSAL_POLICIES else "error"


def refusal_kind(resp: Response | ResponseRecord | None) -> str | None:
    """``"content_filter"`` / ``"refused"`` when ``resp`` is a refusal, else ``None``."""
    if resp is None:
        return None
    failure = resp.meta.get("failure") if isinstance(resp, Response) else resp.failure
    return failure if failure in REFUSAL_REASONS else None


def as_wrong(results: Mapping[str, ItemResult]) -> dict[str, ItemResult]:
    """``results`` with every refused turn turned into an empty answer (text ``""``, no
    error; ``meta`` kept, so ``failure`` stays and the raw error is in
    ``meta["refusal_error"]``): the ``wrong`` policy. Other responses are unchanged."""
    out: dict[str, ItemResult] = {}
    for key, res in results.items():
        if not any(refusal_kind(r) for r in res.responses):
            out[key] = res
            continue
        out[key] = ItemResult(id=res.id, responses=[
            r.model_copy(update={"text": "", "error": None,
                                 "meta": {**r.meta, "refusal_error": r.error}})
            if refusal_kind(r) else r for r in res.responses])
    return out


def apply_policy(results: Mapping[str, ItemResult], policy: str) -> Mapping[str, ItemResult]:
    """The results a benchmark scores under ``policy`` (``wrong``: :func:`as_wrong`)."""
    return as_wrong(results) if policy == "wrong" else results


def is_truncated(resp: ResponseRecord | None) -> bool:
    """True when the response stopped at the max-tokens limit (``finish_reason`` length)."""
    return resp is not None and resp.finish_reason == TRUNCATED_FINISH


def _scored_response(record: SampleRecord) -> ResponseRecord | None:
    turn = record.scored_turn
    return turn.response if turn is not None else None


def mark_records(records: Sequence[SampleRecord], policy: str) -> None:
    """Flag truncated and refused records in place (module docstring): ``details.truncated``
    (only when true), ``details.refused`` + ``details.refusals_policy``; under the
    ``error`` policy a refused ``error`` record gets the reason of
    :data:`REFUSAL_REASONS` and no scores."""
    for r in records:
        resp = _scored_response(r)
        if is_truncated(resp):
            r.details["truncated"] = True
        kind = refusal_kind(resp)
        if kind is None:
            continue
        r.details["refused"] = True
        r.details["refusals_policy"] = policy
        if r.state is Outcome.ERROR:
            r.error = REFUSAL_REASONS[kind]
            r.scores = dict.fromkeys(r.scores)


def _rate(records: Sequence[SampleRecord]) -> dict[str, Any]:
    answered = [r for r in records if (resp := _scored_response(r)) is not None
                and resp.text is not None]
    n_cut = sum(1 for r in answered if is_truncated(_scored_response(r)))
    return {"n_responses": len(answered), "n_truncated": n_cut,
            "rate": n_cut / len(answered) if answered else None}


def outcomes_body(records: Sequence[SampleRecord], group_key: str,
                  policy: str) -> dict[str, Any]:
    """The summary-body keys ``truncation`` and ``refusals``, per model::

        {"truncation": {model: {"by": group_key, "overall": RATE,
                                "groups": {group value: RATE}}},
         "refusals": {model: {"n": int, "kinds": {kind: int}, "policy": policy}}}

    ``RATE`` = ``{"n_responses", "n_truncated", "rate"}`` (``rate`` a fraction in
    [0, 1], ``None`` without a response). Groups in first-seen order."""
    by_model: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_model[r.model].append(r)
    truncation: dict[str, Any] = {}
    refusals: dict[str, Any] = {}
    for model, recs in by_model.items():
        groups: dict[str, list[SampleRecord]] = defaultdict(list)
        for r in recs:
            if group_key in r.groups:
                groups[r.groups[group_key]].append(r)
        truncation[model] = {"by": group_key, "overall": _rate(recs),
                             "groups": {g: _rate(rs) for g, rs in groups.items()}}
        kinds = Counter(k for r in recs if (k := refusal_kind(_scored_response(r))))
        refusals[model] = {"n": sum(kinds.values()), "kinds": dict(sorted(kinds.items())),
                           "policy": policy}
    return {"truncation": truncation, "refusals": refusals}


def _pct(rate: float | None) -> str:
    return "—" if rate is None else f"{100 * rate:.2f}"


def outcomes_markdown(summary: Mapping[str, Any]) -> str:
    """The ``summary.md`` section "Truncated and refused answers": per model the
    truncation table by group and the refusal count (from ``models.<m>.
    response_outcomes``, the ``failure:content_filter`` / ``failure:refused`` counts).
    Empty when the summary has no ``truncation`` key."""
    truncation = summary.get("truncation") or {}
    if not truncation:
        return ""
    refusals = summary.get("refusals") or {}
    models = summary.get("models") or {}
    out = ["", "## Truncated and refused answers", "",
           "Truncated: the response stopped at the max-tokens limit (finish reason "
           "`length`); it is scored as it stands and flagged `details.truncated`. Rate = "
           "truncated ÷ responses received.", ""]
    for model, block in truncation.items():
        key = str(block.get("by", "group"))
        rows = [(g, v) for g, v in (block.get("groups") or {}).items()]
        rows.append(("All", block.get("overall") or {}))
        out += [f"### {model}", "", f"| {key.title()} | responses | truncated | rate (%) |",
                "|:--|--:|--:|--:|"]
        out += [f"| {g} | {v.get('n_responses', 0)} | {v.get('n_truncated', 0)} | "
                f"{_pct(v.get('rate'))} |" for g, v in rows]
        outcomes = (models.get(model) or {}).get("response_outcomes") or {}
        n_filter = int(outcomes.get("failure:content_filter", 0))
        n_refused = int(outcomes.get("failure:refused", 0))
        policy = (refusals.get(model) or {}).get("policy", "error")
        treat = ("counted as wrong answers (--refusals wrong)" if policy == "wrong" else
                 "errors, excluded from the scores (--refusals error)")
        out += ["", f"Refused: {n_filter + n_refused} (content filter {n_filter}, model "
                f"refusal {n_refused}); {treat}.", ""]
    return "\n".join(out) + "\n"


def outcomes_lines(summary: Mapping[str, Any]) -> list[str]:
    """Console lines (stderr) naming truncated and refused answers per model; empty when
    there are none."""
    lines = []
    refusals = summary.get("refusals") or {}
    for model, block in (summary.get("truncation") or {}).items():
        overall = block.get("overall") or {}
        n_cut, n = int(overall.get("n_truncated") or 0), int(overall.get("n_responses") or 0)
        if n_cut:
            lines.append(f"{model}: {n_cut} of {n} response(s) stopped at the max-tokens "
                         f"limit ({_pct(overall.get('rate'))} %, flagged truncated; raise "
                         "--max-tokens to avoid it)")
        ref = refusals.get(model) or {}
        if ref.get("n"):
            treat = ("counted as wrong" if ref.get("policy") == "wrong"
                     else "errors, excluded from the scores; --refusals wrong counts them "
                          "as wrong")
            lines.append(f"{model}: {ref['n']} answer(s) refused (content filter): {treat}")
    return lines
