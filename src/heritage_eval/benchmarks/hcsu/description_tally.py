"""The description task's per-domain figures and judge digest folded one row at a time.

:func:`~.description_scoring.summarize_description` and the streamed sink
(:mod:`.summary_sink`) both fold their rows through :class:`DomainTally` (one per domain)
and :class:`JudgeTally`, so a streamed run and a listed one give the same numbers, not
merely close ones. A tally keeps the numbers behind each mean (one float per row that
enters it, in ``array`` columns of 8 bytes per value) and counts, never the rows; the
means are ``statistics.fmean`` of those values in row order, exactly as computed over
the rows themselves (rules: :mod:`.description_scoring`).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from statistics import fmean
from typing import Any

from heritage_eval.benchmarks.hcsu.judging import RICHNESS, TERMINOLOGY
from heritage_eval.core.types import Outcome

SCORED = Outcome.SCORED.value
UNPARSED = Outcome.UNPARSED.value
UNSCORED = Outcome.UNSCORED.value
_ANSWERED = (SCORED, UNPARSED)


def _mean(values: Sequence[float]) -> float | None:
    return fmean(values) if values else None


def _with_zeros(real: Sequence[float], n_unparsed: int) -> float | None:
    """Mean of the metric's real scores and one 0 per unparsed (empty) description;
    ``None`` when the metric gave no real score (the zeros alone measure nothing)."""
    return fmean([*real, *[0.0] * n_unparsed]) if real else None


class _Judged:
    """One judge dimension of a domain: the judged rows' scores, the (score, expert)
    pairs of judged rows whose expert was judged, the experts of the unparsed rows."""

    __slots__ = ("done", "empty_expert", "expert", "pair_expert", "pair_model")

    def __init__(self) -> None:
        self.done = array("d")
        self.pair_model = array("d")
        self.pair_expert = array("d")
        self.empty_expert = array("d")
        self.expert = array("d")  # the expert score of every answered row that has one

    def add(self, outcome: str, judge_status: Any, score: Any, expert: Any) -> None:
        if expert is not None:
            self.expert.append(expert)
        if outcome == UNPARSED:
            if expert is not None:
                self.empty_expert.append(expert)
        elif judge_status == SCORED:
            self.done.append(score)
            if score is not None and expert is not None:
                self.pair_model.append(score)
                self.pair_expert.append(expert)

    def delta(self) -> float | None:
        """Mean model score minus mean expert score over the judged pairs and the
        unparsed rows (model score 0) whose expert was judged; ``None`` without a
        judged pair."""
        if not self.pair_model:
            return None
        model = [*self.pair_model, *[0.0] * len(self.empty_expert)]
        expert = [*self.pair_expert, *self.empty_expert]
        return fmean(model) - fmean(expert)


class DomainTally:
    """The figures of one domain (:meth:`add` each row, then :meth:`entry`)."""

    def __init__(self) -> None:
        self.n_rows = 0
        self.n = 0
        self.n_unparsed = 0
        self.bertscore = array("d")
        self.n_bertscore_unscored = 0
        self.n_judge_unscored = 0
        self.judged = {TERMINOLOGY: _Judged(), RICHNESS: _Judged()}

    def add(self, outcome: str, bertscore_status: Any = None, bertscore_x10: Any = None,
            judge_status: Any = None, scores: dict[str, Any] | None = None,
            experts: dict[str, Any] | None = None) -> None:
        """Fold one row: its ``outcome`` (``scored`` / ``unparsed`` / ``error`` …), the
        BERTScore status and value (x10), the judge status, the judge's ``scores`` and
        the expert reference's judged ``experts`` (by dimension)."""
        self.n_rows += 1
        if outcome not in _ANSWERED:
            return
        self.n += 1
        self.n_unparsed += outcome == UNPARSED
        if bertscore_status == SCORED:
            self.bertscore.append(bertscore_x10)
        self.n_bertscore_unscored += bertscore_status == UNSCORED
        self.n_judge_unscored += judge_status == UNSCORED
        for dim, tally in self.judged.items():
            tally.add(outcome, judge_status, (scores or {}).get(dim),
                      (experts or {}).get(dim))

    def entry(self, judged: bool) -> dict[str, Any]:
        """The domain's entry of ``per_domain`` (keys and rules:
        :func:`~.description_scoring.summarize_description`)."""
        n, empty = self.n, self.n_unparsed
        out: dict[str, Any] = {
            "n": n, "bertscore_x10": _with_zeros(self.bertscore, empty),
            TERMINOLOGY: None, RICHNESS: None, "terminology_delta": None,
            "richness_delta": None, "invalid_rate": empty / n if n else None,
            "n_error": self.n_rows - n, "n_unparsed": empty,
            "n_bertscore": len(self.bertscore),
            "n_bertscore_unscored": self.n_bertscore_unscored}
        if judged:
            term, rich = self.judged[TERMINOLOGY], self.judged[RICHNESS]
            out |= {TERMINOLOGY: _with_zeros(term.done, empty),
                    RICHNESS: _with_zeros(rich.done, empty),
                    "terminology_delta": term.delta(), "richness_delta": rich.delta(),
                    "expert_terminology": _mean(term.expert),
                    "expert_richness": _mean(rich.expert),
                    "n_judged": len(term.done), "n_judge_unscored": self.n_judge_unscored}
        return out


class JudgeTally:
    """:func:`~.description_scoring.judge_digest` folded one row at a time: judged and
    unscored counts, and a count per distinct unscored reason."""

    def __init__(self) -> None:
        self.n = 0
        self.reasons: dict[str, int] = {}

    def add(self, judge_status: Any, judge_reason: Any) -> None:
        """Count a row whose judge status is ``scored`` or ``unscored``."""
        if judge_status not in (SCORED, UNSCORED):
            return
        self.n += 1
        if judge_status == UNSCORED:
            reason = str(judge_reason or "unknown")
            self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def digest(self) -> dict[str, Any]:
        """``{"n", "n_unscored", "reasons": [[reason, count]] (3 most frequent)}``."""
        top = sorted(self.reasons.items(), key=lambda kv: -kv[1])[:3]
        return {"n": self.n, "n_unscored": sum(self.reasons.values()),
                "reasons": [list(t) for t in top]}
