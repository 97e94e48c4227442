"""Models compared on the same samples: the common sample set and what it drops.

A model's scores count the records that are not ``error`` (docs/denominators.md): a
model whose network failed on 20 items, or that was run with ``--limit``, or with
``--model-failures exclude`` on a model that refuses, is scored on fewer items than the
others. Ranking such models compares averages over different items. So ``compare`` and
the paper tables score every model on the **common** sample set by default: the record
ids that every model has and that no model left out (state ``error``). Each model's
statistics are recomputed on those records, and what was dropped is reported per model
and reason. ``samples="all"`` keeps each run's own numbers, and the tables say that they
are over different sample sets when they are.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.summary import model_block
from heritage_eval.report.runs import ModelRun

SAMPLE_RULES = ("common", "all")
_REASON_CHARS = 100


@dataclass
class SampleSet:
    """How the compared models' samples line up.

    ``rule``: ``common`` or ``all``; ``n_common``: ids every model counts; ``same``:
    every model counts exactly the same ids (nothing to drop); ``dropped``: per model name,
    ``{"n": records dropped, "reasons": [[reason, count], …]}`` (only under ``common``,
    only models that lost something); ``n_counted``: per model, ids it counts itself."""

    rule: str
    n_common: int
    same: bool
    n_counted: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        return {"rule": self.rule, "n_common": self.n_common, "same": self.same,
                "n_counted": dict(self.n_counted), "dropped": dict(self.dropped)}

    def notes(self) -> list[str]:
        """The sentences ``compare`` prints and writes about the sample set."""
        if self.same:
            return []
        counts = ", ".join(f"{m} {n}" for m, n in self.n_counted.items())
        if self.rule == "all":
            return [f"the models are scored on DIFFERENT sample sets (samples counted: "
                    f"{counts}; {self.n_common} in common): their values and ranks are not "
                    "comparable; drop --samples all to score them on the common samples"]
        out = [f"every model is scored on the {self.n_common} sample(s) all models counted "
               f"(samples counted per model: {counts}); the others are dropped"]
        for model, d in self.dropped.items():
            why = "; ".join(f"{n} × {r}" for r, n in d["reasons"])
            out.append(f"{model}: {d['n']} record(s) dropped to compare on common samples "
                       f"({why})")
        return out


def policy_notes(summaries: Sequence[tuple[str, dict[str, Any]]]) -> list[str]:
    """A warning when the runs (``(folder, summary)`` pairs) scored the model's own
    failures by different rules (``--model-failures wrong`` / ``exclude``): one run's
    excluded failures then leave the common samples of every model, undoing the other's
    ``wrong`` scoring. Runs that predate the rule (no ``model_failures`` key) are named
    as unknown when the others know theirs."""
    seen: dict[str, str] = {}
    for folder, summary in summaries:
        blocks = summary.get("model_failures")
        if not isinstance(blocks, dict) or not blocks:
            seen[folder] = "unknown"
            continue
        rules = {str(b.get("policy")) for b in blocks.values() if isinstance(b, dict)}
        seen[folder] = rules.pop() if len(rules) == 1 else "mixed"
    known = {p for p in seen.values() if p != "unknown"}
    if len(set(seen.values())) < 2 or not known:
        return []
    listing = ", ".join(f"{folder}: {policy}" for folder, policy in seen.items())
    return [f"the runs score the model's own failures by different rules ({listing}): a "
            "failure excluded in one run drops that sample for every model under "
            "--samples common; re-run with the same --model-failures to compare like "
            "with like"]


def short_reason(record: SampleRecord) -> str:
    """A short, groupable reason for an ``error`` record: the model-failure kind or the
    response's failure kind (``server_error``, ``timeout`` …) when there is one, with the
    error text after it; a leading ``file:line:`` and any JSON body are dropped, and the
    text is cut at a word boundary to about :data:`_REASON_CHARS` characters."""
    text = re.sub(r"^\S+:\d+:\s*", "", record.error or "error")
    text = re.split(r"\s*[:(]?\s*[{\[]", text, maxsplit=1)[0].strip(" :;(") or "error"
    if len(text) > _REASON_CHARS:
        text = text[:_REASON_CHARS].rsplit(" ", 1)[0] + " …"
    turn = record.scored_turn
    kind = record.details.get("model_failure") or (
        turn.response.failure if turn is not None and turn.response is not None else None)
    return f"{kind}: {text}" if kind and not text.startswith(str(kind)) else text


def _reason(record: SampleRecord) -> str:
    if record.state.value == "error":
        return f"left out in this run: {short_reason(record)}"
    return "another model left this sample out, or its run has no record of it"


def _counted(m: ModelRun) -> dict[str, SampleRecord]:
    out: dict[str, SampleRecord] = {}
    for r in m.records:
        out.setdefault(r.id, r)
    return out


def align(models: Sequence[ModelRun], specs: Sequence[MetricSpec], keys: Sequence[str],
          rule: str = "common") -> SampleSet:
    """Line up ``models`` under ``rule`` (module docstring). Under ``common`` and when
    the models count different ids, each model's ``records`` and ``block`` are replaced
    in place by those of the common ids (the block recomputed with
    :func:`heritage_eval.core.summary.model_block`). Raises ValueError for an unknown
    rule."""
    if rule not in SAMPLE_RULES:
        raise ValueError(f"samples must be one of {', '.join(SAMPLE_RULES)}, not {rule!r}")
    firsts = [_counted(m) for m in models]
    counted = [{i for i, r in f.items() if r.state.value != "error"} for f in firsts]
    common = set.intersection(*counted) if counted else set()
    same = all(c == counted[0] for c in counted)
    out = SampleSet(rule, len(common), same,
                    n_counted={m.name: len(c) for m, c in zip(models, counted, strict=True)})
    if same or rule == "all":
        return out
    for m in models:
        kept = [r for r in m.records if r.id in common]
        if len(kept) == len(m.records):
            continue
        reasons = Counter(_reason(r) for r in m.records if r.id not in common)
        out.dropped[m.name] = {"n": len(m.records) - len(kept),
                               "reasons": [[r, c] for r, c in reasons.most_common()]}
        m.records = kept
        m.block = model_block(kept, specs, keys)
    return out
