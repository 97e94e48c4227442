"""Whose failure is it? The model's failures count as wrong answers; the rest is left out.

The engine applies this rule to every benchmark, plug-ins included (:func:`apply_policy`
on the responses before scoring, :func:`mark_records` on the records after).

Every benchmark applies the same rule to a turn that did not produce a usable answer
(docs/denominators.md):

**The model's failures** (:data:`MODEL_FAILURE_REASONS`) — the request went through and
the model gave no answer:

- ``content_filter``: blocked by a content filter (HTTP 200 with ``choices: []`` and
  ``prompt_filter_results``, or ``finish_reason: "content_filter"``);
- ``refused``: a ``message.refusal`` without content;
- ``reasoning_only``: reasoning text (``reasoning_content`` / ``<think>``) and no final
  answer;
- ``truncated_no_answer``: stopped at the max-tokens limit before any answer;
- ``empty_answer``: the final answer is empty (``content: null`` or only white space);
- ``dialogue_cut``: a later turn of a multi-turn dialogue, never sent because an earlier
  turn was one of the failures above (:func:`pad_after_failure`).

What a benchmark does with them is the ``--model-failures`` policy:

- ``wrong`` (default, as Inspect AI, HELM and lmms-eval do): the turn is scored as an
  empty answer — Ancient-Bench NED 0 and F1 0, multiple choice ``unparsed``, an open
  answer ``unparsed`` with score 0 — so it stays in the score's denominator. The record
  keeps ``details.model_failure`` (the kind) and ``turns[].response.failure``;
- ``exclude`` (the behaviour before 0.3; ``--refusals error`` is its old name): the record
  is ``error`` with the kind's reason (e.g. ``"refused: content filter"``), left out of
  every score like an infrastructure error, and counted apart.

Either way the summary gives each model's model-failure rate overall and per group
(:mod:`heritage_eval.core.failure_counts`) and says which policy was used.

**Failures of the infrastructure or the data** — transport errors and server errors after
the retries, a malformed body, a missing or corrupt image, a bad line — are ``error``
records under both policies: left out of the score and listed with their reason. An image
that cannot be read when the request is built is the sample's data error
(:mod:`heritage_eval.core.data_errors`), never a model failure.

**Truncation.** A response that stopped at the max-tokens limit (``finish_reason:
"length"``) *with* an answer is scored as it stands (official parity: Ancient-Bench scores
the whole text when the closing ``</res>`` is missing) and flagged ``details.truncated``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Protocol

from heritage_eval.core.data_errors import mark_data_error
from heritage_eval.core.record import ResponseRecord, SampleRecord
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Outcome, Response


class OutcomeSink(Protocol):
    """Anything that counts records one at a time (e.g.
    :class:`~heritage_eval.core.failure_counts.OutcomeCounts`)."""

    def add(self, record: SampleRecord) -> None: ...


#: Model-failure kinds (``failure`` of a response) -> the record's error reason under
#: the ``exclude`` policy.
MODEL_FAILURE_REASONS = {
    "content_filter": "refused: content filter",
    "refused": "refused: model refusal",
    "reasoning_only": "no final answer: reasoning only",
    "truncated_no_answer": "no final answer: stopped at the max-tokens limit",
    "empty_answer": "empty answer",
    "dialogue_cut": "not answered: an earlier turn of the dialogue was the model's failure",
}
#: The refusal kinds among them (``details.refused`` is set for these).
REFUSAL_REASONS = {k: MODEL_FAILURE_REASONS[k] for k in ("content_filter", "refused")}
#: ``--model-failures`` choices (module docstring); ``error`` is the old name of
#: ``exclude`` (``--refusals error``).
FAILURE_POLICIES = ("wrong", "exclude")
_ALIASES = {"error": "exclude", "wrong": "wrong", "exclude": "exclude"}
#: Kept for callers of 0.2: the ``--refusals`` choices.
REFUSAL_POLICIES = ("error", "wrong")  # 0.2 names
DEFAULT_POLICY = "wrong"
#: The ``finish_reason`` of a response cut at the max-tokens limit.
TRUNCATED_FINISH = "length"


def policy_of(value: object) -> str:
    """The policy named by ``value``: ``"wrong"`` or ``"exclude"`` (``"error"``, the old
    ``--refusals`` name, is ``exclude``); ``wrong`` for ``None`` or anything else."""
    return _ALIASES.get(str(value), DEFAULT_POLICY) if value is not None else DEFAULT_POLICY


def failure_kind(resp: Response | ResponseRecord | None) -> str | None:
    """The model-failure kind of ``resp`` (a key of :data:`MODEL_FAILURE_REASONS`), or
    ``None``: a named ``failure`` of the model's, or an answer that is empty or white
    space only (``empty_answer``). A failed request (error without a model-failure kind)
    is not the model's: ``None``."""
    if resp is None:
        return None
    failure = resp.meta.get("failure") if isinstance(resp, Response) else resp.failure
    if failure in MODEL_FAILURE_REASONS:
        return str(failure)
    if resp.error is None and resp.text is not None and not resp.text.strip():
        return "empty_answer"
    return None


def refusal_kind(resp: Response | ResponseRecord | None) -> str | None:
    """``"content_filter"`` / ``"refused"`` when ``resp`` is a refusal, else ``None``."""
    kind = failure_kind(resp)
    return kind if kind in REFUSAL_REASONS else None


def _as_wrong(r: Response) -> Response:
    if r.text is not None or failure_kind(r) is None:
        return r
    return r.model_copy(update={"text": "", "error": None,
                                "meta": {**r.meta, "failure_error": r.error}})


def _as_excluded(r: Response) -> Response:
    if r.text is None or failure_kind(r) != "empty_answer":
        return r
    return r.model_copy(update={"text": None, "error": MODEL_FAILURE_REASONS["empty_answer"],
                                "meta": {**r.meta, "failure": "empty_answer"}})


def apply_policy(results: Mapping[str, ItemResult], policy: str) -> Mapping[str, ItemResult]:
    """The results a benchmark scores under ``policy`` (``wrong`` / ``exclude``; the old
    names ``error`` = ``exclude``). ``wrong``: every model-failure turn without text
    becomes an empty answer (text ``""``, no error; ``meta["failure"]`` kept and the
    raw error in ``meta["failure_error"]``). ``exclude``: every empty answer becomes a
    failed turn (text ``None``, error ``"empty answer"``, failure ``empty_answer``).
    Other responses, and results without a change, are returned as they are."""
    convert = _as_wrong if _ALIASES.get(policy, policy) == "wrong" else _as_excluded
    out: dict[str, ItemResult] = {}
    for key, res in results.items():
        new = [convert(r) for r in res.responses]
        changed = any(a is not b for a, b in zip(new, res.responses, strict=True))
        out[key] = ItemResult(id=res.id, responses=new) if changed else res
    return out


def pad_after_failure(results: Mapping[str, ItemResult], n_turns: Mapping[str, int]
                      ) -> dict[str, ItemResult]:
    """Multi-turn conversations cut short by the model's own failure, completed: the
    later turns, which were never sent, get the model failure ``dialogue_cut`` (its own
    kind, so the count of the first failure's kind is not inflated), scored the way
    that first failure was — an empty answer when it was scored as wrong (after
    :func:`apply_policy` with ``wrong``: text ``""``), a failed turn when it was left out
    (``exclude``). They stay in the denominator under ``wrong`` instead of dropping out as
    errors. ``n_turns``: item id -> the turns the item should have. A conversation cut
    by a network or data error is unchanged (its later turns are errors)."""
    out = dict(results)
    for key, res in results.items():
        want = n_turns.get(key, 0)
        if len(res.responses) >= want or not res.responses:
            continue
        last = res.responses[-1]
        kind = failure_kind(last)
        if kind is None:
            continue
        why = f"not sent: turn {len(res.responses)} was the model's failure ({kind})"
        fill = (Response(text="", meta={"failure": "dialogue_cut", "failure_error": why})
                if last.text is not None else
                Response(text=None, error=MODEL_FAILURE_REASONS["dialogue_cut"],
                         meta={"failure": "dialogue_cut", "failure_error": why}))
        out[key] = ItemResult(id=res.id, responses=[
            *res.responses, *([fill] * (want - len(res.responses)))])
    return out


def apply_to_one(policy: str) -> Callable[[ItemResult], ItemResult]:
    """:func:`apply_policy` for one result at a time (for a lazily mapped, read-once
    mapping such as :class:`~heritage_eval.core.streamed_results.MappedResults`)."""
    return lambda res: apply_policy({res.id: res}, policy)[res.id]


def is_truncated(resp: ResponseRecord | None) -> bool:
    """True when the response stopped at the max-tokens limit (``finish_reason`` length),
    with or without an answer."""
    return resp is not None and resp.finish_reason == TRUNCATED_FINISH


def is_cut_answer(resp: ResponseRecord | None) -> bool:
    """True when the response stopped at the max-tokens limit *after* some answer text:
    an answer scored as it stands and flagged ``details.truncated``. A response cut before
    any answer is the model failure ``truncated_no_answer`` instead."""
    return is_truncated(resp) and resp is not None and bool((resp.text or "").strip())


def scored_response(record: SampleRecord) -> ResponseRecord | None:
    """The response of the record's scored turn (``None`` without one)."""
    turn = record.scored_turn
    return turn.response if turn is not None else None


def mark_records(records: Sequence[SampleRecord], policy: str) -> None:
    """Flag the records in place (module docstring): ``details.truncated`` (only when
    true); for a model failure ``details.model_failure`` (the kind),
    ``details.failure_policy`` (``wrong`` / ``exclude``) and, for a refusal,
    ``details.refused``. Under ``exclude`` an ``error`` record of a model failure gets the
    kind's reason (:data:`MODEL_FAILURE_REASONS`) and no scores. An ``error`` record with
    a turn whose image could not be read gets ``details.error_kind`` ``"data"``
    (:func:`~heritage_eval.core.data_errors.mark_data_error`)."""
    rule = _ALIASES.get(policy, policy)
    for r in records:
        mark_data_error(r)
        resp = scored_response(r)
        if is_cut_answer(resp):
            r.details["truncated"] = True
        kind = failure_kind(resp)
        if kind is None:
            continue
        r.details["model_failure"] = kind
        r.details["failure_policy"] = rule
        if kind in REFUSAL_REASONS:
            r.details["refused"] = True
        if r.state is Outcome.ERROR:
            r.error = MODEL_FAILURE_REASONS[kind]
            r.scores = dict.fromkeys(r.scores)


def marked(records: Iterable[SampleRecord], policy: str,
           counts: OutcomeSink | None = None) -> Iterator[SampleRecord]:
    """``records`` one at a time, each flagged by :func:`mark_records` and, with
    ``counts``, counted (``counts.add(record)``): the engine's pass over a streamed run."""
    for r in records:
        mark_records([r], policy)
        if counts is not None:
            counts.add(r)
        yield r


def is_model_failure(record: SampleRecord) -> bool:
    """True when ``record`` holds a model failure (``details.model_failure``, or its
    scored response is one)."""
    return bool(record.details.get("model_failure")) or \
        failure_kind(scored_response(record)) is not None


def is_excluded(record: SampleRecord) -> bool:
    """True when ``record`` is left out of the scores for a reason that is not the
    model's: an ``error`` record that is not a model failure (transport, server, data)."""
    return record.state is Outcome.ERROR and not is_model_failure(record)


__all__ = ["DEFAULT_POLICY", "FAILURE_POLICIES", "MODEL_FAILURE_REASONS", "REFUSAL_POLICIES",
           "REFUSAL_REASONS", "apply_policy", "apply_to_one", "failure_kind",
           "is_cut_answer", "is_excluded", "is_model_failure", "is_truncated", "mark_records",
           "marked",
           "pad_after_failure",
           "policy_of",
           "refusal_kind", "scored_response"]
