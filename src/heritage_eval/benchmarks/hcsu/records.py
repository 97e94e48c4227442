"""Shared per-sample record helpers of the HCSU tasks: base fields, response fields, and
the error digest printed on stderr and written to ``summary.json``.

A record is a plain JSON-ready dict (one line of ``samples.jsonl``). Outcomes follow
DESIGN.md rule 1: ``scored``, ``unparsed``, ``error``, ``unscored``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from heritage_eval.benchmarks.hcsu.schema import DOMAINS, HcsuImage
from heritage_eval.benchmarks.outcomes import MODEL_FAILURE_REASONS, REFUSAL_REASONS, failure_kind
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Outcome

Record = dict[str, Any]
#: Outcomes of samples the model answered (a model answer exists).
ANSWERED = (Outcome.SCORED.value, Outcome.UNPARSED.value)


def base_record(target: HcsuImage) -> Record:
    """Identity fields of a target: id, domain, class, character, annotation source."""
    return {"id": target.id, "domain": target.domain, "class": target.class_key,
            "char": target.char, "source": target.source}


def response_fields(res: ItemResult | None) -> tuple[str | None, str | None, Record]:
    """(answer text, error, response metadata) of a finished item."""
    if res is None or not res.responses:
        return None, "request not sent", {}
    r = res.responses[-1]
    meta = {"latency_s": r.latency_s, "cached": r.cached, "attempts": r.attempts}
    return r.text, res.error, meta


class _Asked(Protocol):
    """A planned question or request: its ``sample_id`` and its JSON ``record()``."""

    @property
    def sample_id(self) -> str: ...

    def record(self) -> Record: ...


def response_record(target: HcsuImage, asked: _Asked | None, plan_error: str | None,
                    results: Mapping[str, ItemResult]) -> tuple[Record, str | None]:
    """``(record, response text)`` of one planned item: base fields, the question and the
    response metadata, no ``outcome`` yet. When the item could not be planned (``asked``
    ``None``; reason ``plan_error``) or its request failed, the record is final instead:
    outcome ``error`` with the reason, and the text ``None``; a model failure that is
    still a failed turn (``--model-failures exclude``, :mod:`heritage_eval.benchmarks.
    outcomes`) has its kind's reason (e.g. ``"refused: content filter"``),
    ``model_failure`` and, for a refusal, ``refused`` true."""
    rec = base_record(target)
    if asked is None:
        return rec | {"outcome": Outcome.ERROR.value, "reason": plan_error}, None
    rec["question"] = asked.record()
    result = results.get(asked.sample_id)
    text, error, meta = response_fields(result)
    rec.update(meta)
    if error is not None:
        kind = failure_kind(result.responses[-1]) if result and result.responses else None
        if kind is not None:  # the model's failure: its own reason (raw body in the turn)
            flags = {"refused": True} if kind in REFUSAL_REASONS else {}
            return rec | {"outcome": Outcome.ERROR.value, "reason": MODEL_FAILURE_REASONS[kind],
                          "model_failure": kind, **flags}, None
        return rec | {"outcome": Outcome.ERROR.value, "reason": error}, None
    return rec, text


def record_domains(records: Iterable[Record]) -> list[str]:
    """Domains that occur in ``records`` (error rows included), in the order Bei, Tie."""
    present = {r["domain"] for r in records}
    return [d for d in DOMAINS if d in present]


class ErrorTally:
    """:func:`error_digest` folded one row at a time (:meth:`add`, then :meth:`digest`):
    a counter per domain and per reason, so its size grows with the number of distinct
    domains and error reasons, not of rows."""

    def __init__(self) -> None:
        self.per: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()

    def add(self, domain: str, outcome: str, reason: Any) -> None:
        """Count a row of ``domain`` when its ``outcome`` is ``error`` (``reason``: the
        row's reason; ``None`` / empty counts as ``"unknown"``)."""
        if outcome != Outcome.ERROR.value:
            return
        self.per[str(domain)] += 1
        self.reasons[str(reason or "unknown")] += 1

    def digest(self, first: int = 3) -> dict[str, Any]:
        """The :func:`error_digest` dict of the rows added."""
        return {"n_error": sum(self.per.values()), "per_domain": dict(sorted(self.per.items())),
                "reasons": [[reason, n] for reason, n in self.reasons.most_common(first)]}


def error_digest(records: Sequence[Record], first: int = 3) -> dict[str, Any]:
    """Errors per domain and the ``first`` most frequent reasons.

    Returns ``{"n_error": int, "per_domain": {domain: int}, "reasons": [(reason, count)]}``
    (reasons most frequent first, ties in order of appearance).
    """
    tally = ErrorTally()
    for r in records:
        tally.add(r["domain"], r["outcome"], r.get("reason"))
    return tally.digest(first)


def error_lines(label: str, digest: dict[str, Any], total: int) -> list[str]:
    """Human-readable stderr lines for an :func:`error_digest` (empty when no error)."""
    if not digest["n_error"]:
        return []
    where = ", ".join(f"{d} {n}" for d, n in digest["per_domain"].items())
    lines = [f"{label}: {digest['n_error']} of {total} sample(s) ended as error ({where}); "
             "they are excluded from the scores"]
    lines += [f"  {n} x {reason}" for reason, n in digest["reasons"]]
    return lines


#: Error reasons that mean the server was never reached (see ``models/openai_compat``).
_CONNECT = ("connection error", "unreachable", "ConnectError")


def unreachable_hint(reasons: Sequence[str], url: str | None, option: str) -> str | None:
    """A clear message when every reason is a connection failure, else ``None``."""
    if reasons and all(any(c in r for c in _CONNECT) for r in reasons):
        return (f"the endpoint {url or '(default)'} could not be reached: check {option} "
                "and that the server is running")
    return None
