"""Model failures, truncation and exclusions in the summary, ``summary.md`` and console.

The rule itself is in :mod:`heritage_eval.core.model_failures`; this module counts it.
Per model (and per group of the benchmark's main key: Ancient-Bench medium, HCSU domain,
MUSE task) the summary body holds:

- ``model_failures``: the model-failure rate = model failures ÷ records that are not
  left out for the infrastructure or the data (the denominator of the scores under the
  default ``wrong`` policy), with the count of each kind and the policy used;
- ``truncation``: truncated answers ÷ responses received;
- ``excluded``: records left out for the infrastructure or the data, by reason;
- ``refusals``: the refusal kinds (kept from 0.2);
- ``denominator_rule``: one sentence saying which rule was used.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from heritage_eval.core.model_failures import (
    REFUSAL_REASONS,
    failure_kind,
    is_cut_answer,
    scored_response,
)
from heritage_eval.core.reason_text import short_reason
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.types import Outcome

#: Reasons listed per model in ``excluded`` (the rest are summed under "other").
MAX_REASONS = 10

RULES = {
    "wrong": "model failures (refusal, content filter, reasoning only, cut at max tokens "
             "before any answer, empty answer) count as wrong answers and stay in the "
             "denominator (--model-failures wrong); network, server and data errors are "
             "left out and listed",
    "exclude": "model failures (refusal, content filter, reasoning only, cut at max "
               "tokens before any answer, empty answer) are left out of the scores like "
               "network, server and data errors (--model-failures exclude): models are "
               "scored on the items they answered",
}


class _Rate:
    """A count over a denominator: ``{"n": denominator, "n_<what>": count, "rate"}``."""

    __slots__ = ("hit", "n")

    def __init__(self) -> None:
        self.n = 0
        self.hit = 0

    def add(self, hit: bool) -> None:
        self.n += 1
        self.hit += hit

    def block(self, n_key: str, hit_key: str) -> dict[str, Any]:
        return {n_key: self.n, hit_key: self.hit,
                "rate": self.hit / self.n if self.n else None}


class _ModelCounts:
    __slots__ = ("cut", "cut_groups", "excluded", "fail", "fail_groups", "kinds")

    def __init__(self) -> None:
        self.cut, self.fail = _Rate(), _Rate()
        self.cut_groups: dict[str, _Rate] = {}
        self.fail_groups: dict[str, _Rate] = {}
        self.kinds: Counter[str] = Counter()
        self.excluded: Counter[str] = Counter()


class OutcomeCounts:
    """The outcome keys of the summary body folded one record at a time (:meth:`add`,
    then :meth:`body`): the same dict as :func:`outcomes_body` over the records."""

    def __init__(self, group_key: str, policy: str) -> None:
        self.group_key = group_key
        self.policy = "exclude" if policy == "error" else policy
        self._models: dict[str, _ModelCounts] = {}

    def add(self, record: SampleRecord) -> None:
        """Count ``record``."""
        m = self._models.get(record.model)
        if m is None:
            m = self._models[record.model] = _ModelCounts()
        resp = scored_response(record)
        group = record.groups.get(self.group_key)
        if resp is not None and resp.text is not None:
            cut = is_cut_answer(resp)
            m.cut.add(cut)
            if group is not None:
                m.cut_groups.setdefault(group, _Rate()).add(cut)
        kind = record.details.get("model_failure") or failure_kind(resp)
        if kind is None and record.state is Outcome.ERROR:
            # kept whole (paths too); only a very long one is cut, with " …"
            m.excluded[short_reason(record.error or "unknown error")] += 1
            return
        m.fail.add(kind is not None)
        if group is not None:
            m.fail_groups.setdefault(group, _Rate()).add(kind is not None)
        if kind is not None:
            m.kinds[str(kind)] += 1

    def body(self) -> dict[str, Any]:
        """``{"truncation", "refusals", "model_failures", "excluded",
        "denominator_rule"}`` (module docstring)."""
        out: dict[str, Any] = {"truncation": {}, "refusals": {}, "model_failures": {},
                               "excluded": {}, "denominator_rule": RULES.get(
                                   self.policy, RULES["wrong"])}
        for model, m in self._models.items():
            out["truncation"][model] = {
                "by": self.group_key, "overall": m.cut.block("n_responses", "n_truncated"),
                "groups": {g: r.block("n_responses", "n_truncated")
                           for g, r in m.cut_groups.items()}}
            refused = {k: n for k, n in sorted(m.kinds.items()) if k in REFUSAL_REASONS}
            out["refusals"][model] = {"n": sum(refused.values()), "kinds": refused,
                                      "policy": self.policy}
            out["model_failures"][model] = {
                "policy": self.policy, "by": self.group_key,
                "kinds": dict(sorted(m.kinds.items())),
                "overall": m.fail.block("n_records", "n_failed"),
                "groups": {g: r.block("n_records", "n_failed")
                           for g, r in m.fail_groups.items()}}
            top = m.excluded.most_common(MAX_REASONS)
            rest = sum(m.excluded.values()) - sum(n for _, n in top)
            out["excluded"][model] = {"n": sum(m.excluded.values()),
                                      "reasons": [[r, n] for r, n in top]
                                      + ([["other", rest]] if rest else [])}
        return out


def outcomes_body(records: Sequence[SampleRecord], group_key: str,
                  policy: str) -> dict[str, Any]:
    """The summary-body outcome keys over ``records`` (module docstring; groups of
    ``group_key`` in first-seen order; rates are fractions in [0, 1], ``None`` with an
    empty denominator)."""
    acc = OutcomeCounts(group_key, policy)
    for r in records:
        acc.add(r)
    return acc.body()


def _pct(rate: float | None) -> str:
    return "—" if rate is None else f"{100 * rate:.2f}"


def _failure_lines(summary: Mapping[str, Any], model: str) -> list[str]:
    block = (summary.get("model_failures") or {}).get(model)
    if not block:
        return []
    key = str(block.get("by", "group"))
    rows = [*(block.get("groups") or {}).items(), ("All", block.get("overall") or {})]
    kinds = ", ".join(f"{k} {n}" for k, n in (block.get("kinds") or {}).items()) or "none"
    out = ["Model failures (the model answered nothing usable): " + kinds + ".", "",
           f"| {key.title()} | records | model failures | rate (%) |", "|:--|--:|--:|--:|"]
    out += [f"| {g} | {v.get('n_records', 0)} | {v.get('n_failed', 0)} | "
            f"{_pct(v.get('rate'))} |" for g, v in rows]
    excluded = (summary.get("excluded") or {}).get(model) or {}
    if excluded.get("n"):
        out += ["", f"Left out (network, server or data errors): {excluded['n']}:"]
        out += [f"- {n} × {reason}" for reason, n in excluded.get("reasons") or []]
    return [*out, ""]


def outcomes_markdown(summary: Mapping[str, Any]) -> str:
    """The ``summary.md`` section "Model failures, truncation and exclusions": the rule
    used, then per model the model-failure table by group, what was left out, and the
    truncation table. Empty when the summary has no ``truncation`` key."""
    truncation = summary.get("truncation") or {}
    if not truncation:
        return ""
    rule = summary.get("denominator_rule") or RULES["wrong"]
    out = ["", "## Model failures, truncation and exclusions", "", f"Rule: {rule}.", "",
           "Truncated: the response stopped at the max-tokens limit (finish reason "
           "`length`) after some answer; it is scored as it stands and flagged "
           "`details.truncated`. Rate = truncated ÷ responses received.", ""]
    for model, block in truncation.items():
        key = str(block.get("by", "group"))
        rows = [*(block.get("groups") or {}).items(), ("All", block.get("overall") or {})]
        out += [f"### {model}", "", *_failure_lines(summary, model),
                f"| {key.title()} | responses | truncated | rate (%) |", "|:--|--:|--:|--:|"]
        out += [f"| {g} | {v.get('n_responses', 0)} | {v.get('n_truncated', 0)} | "
                f"{_pct(v.get('rate'))} |" for g, v in rows]
        ref = (summary.get("refusals") or {}).get(model) or {}
        kinds = ref.get("kinds") or {}
        policy = ref.get("policy", "wrong")
        treat = ("counted as wrong answers (--model-failures wrong)" if policy == "wrong"
                 else "errors, excluded from the scores (--model-failures exclude)")
        out += ["", f"Refused: {ref.get('n', 0)} (content filter "
                f"{kinds.get('content_filter', 0)}, model refusal {kinds.get('refused', 0)});"
                f" {treat}.", ""]
    return "\n".join(out) + "\n"


def outcomes_lines(summary: Mapping[str, Any]) -> list[str]:
    """Console lines (stderr) naming truncated answers, model failures and exclusions
    per model; empty when there are none."""
    lines = []
    failures = summary.get("model_failures") or {}
    excluded = summary.get("excluded") or {}
    for model, block in (summary.get("truncation") or {}).items():
        overall = block.get("overall") or {}
        n_cut, n = int(overall.get("n_truncated") or 0), int(overall.get("n_responses") or 0)
        if n_cut:
            lines.append(f"{model}: {n_cut} of {n} response(s) stopped at the max-tokens "
                         f"limit ({_pct(overall.get('rate'))} %, flagged truncated; raise "
                         "--max-tokens to avoid it)")
        fail = failures.get(model) or {}
        fo = fail.get("overall") or {}
        if fo.get("n_failed"):
            kinds = ", ".join(f"{k} {v}" for k, v in (fail.get("kinds") or {}).items())
            treat = ("counted as wrong answers" if fail.get("policy") == "wrong"
                     else "left out of the scores (--model-failures exclude); the default "
                          "'wrong' counts them as wrong")
            lines.append(f"{model}: {fo['n_failed']} of {fo.get('n_records', 0)} answer(s) "
                         f"were model failures ({_pct(fo.get('rate'))} %: {kinds}): {treat}")
        ref = (summary.get("refusals") or {}).get(model) or {}
        if ref.get("n"):
            lines.append(f"{model}: {ref['n']} answer(s) refused (content filter or model "
                         "refusal)")
        ex = excluded.get(model) or {}
        if ex.get("n"):
            lines.append(f"{model}: {ex['n']} record(s) left out of the scores for network, "
                         "server or data errors (listed in summary.md)")
    return lines
