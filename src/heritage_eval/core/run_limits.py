"""The ``run_limits`` block of ``summary.json``: how many records met a limit of the run's
settings (answers cut at ``--max-tokens``, images sent much smaller than the original), and
the end-of-run warnings that name the option to raise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heritage_eval.core.config import DEFAULT_WARN_DOWNSCALE
from heritage_eval.core.model_failures import is_cut_answer
from heritage_eval.core.model_failures import is_truncated as is_truncated_response
from heritage_eval.core.record import SampleRecord

__all__ = ["DEFAULT_WARN_DOWNSCALE", "RunLimits", "downscale_factor", "is_cut_before_answer",
           "is_truncated", "print_run_limits", "run_limit_lines", "run_limits"]


def downscale_factor(record: SampleRecord) -> float | None:
    """The largest ``original longest side / sent longest side`` over every image of every
    turn of ``record`` (1.0 = sent at full size), or ``None`` when no image has both sizes
    (an engine that does not report the size sent, a score-only run)."""
    factors = [max(im.width, im.height) / max(im.sent_width, im.sent_height)
               for turn in record.turns for im in turn.images
               if im.width and im.height and im.sent_width and im.sent_height]
    return max(factors) if factors else None


def is_truncated(record: SampleRecord) -> bool:
    """Whether the scored turn of ``record`` stopped at the token limit after some
    answer text (``details.truncated``; :func:`~.model_failures.is_cut_answer`)."""
    turn = record.scored_turn
    return turn is not None and is_cut_answer(turn.response)


def is_cut_before_answer(record: SampleRecord) -> bool:
    """Whether the scored turn of ``record`` stopped at the token limit before any answer
    (the model failure ``truncated_no_answer``)."""
    turn = record.scored_turn
    resp = turn.response if turn is not None else None
    return is_truncated_response(resp) and not is_cut_answer(resp)


def run_limits(records: Sequence[SampleRecord],
               warn_downscale: float = DEFAULT_WARN_DOWNSCALE) -> dict[str, Any]:
    """The ``run_limits`` block of ``summary.json``: how many records met a limit of the
    run's settings, all models together.

    ``truncated``: records whose scored turn stopped at the ``--max-tokens`` limit after
    some answer text (scored as it stands, flagged ``details.truncated``);
    ``truncated_no_answer``: those that stopped there before any answer (a model
    failure, docs/denominators.md); ``downscaled``: records with an image sent at more than
    ``warn_downscale`` times smaller on its longest side than the original
    (:func:`downscale_factor`; ``--max-side`` / ``--max-pixels``); ``n_records``;
    ``warn_downscale``: the factor used; ``max_downscale``: the largest factor seen
    (``None`` when no size was reported).
    """
    limits = RunLimits(warn_downscale)
    for r in records:
        limits.add(r)
    return limits.block()


class RunLimits:
    """:func:`run_limits` folded one record at a time (:meth:`add`, then :meth:`block`);
    keeps two counters and the largest factor, whatever the number of records."""

    def __init__(self, warn_downscale: float = DEFAULT_WARN_DOWNSCALE) -> None:
        self.warn_downscale = warn_downscale
        self.truncated = self.downscaled = self.n_records = self.no_answer = 0
        self.max_factor: float | None = None

    def add(self, record: SampleRecord) -> None:
        """Count ``record``."""
        self.n_records += 1
        self.truncated += is_truncated(record)
        self.no_answer += is_cut_before_answer(record)
        factor = downscale_factor(record)
        if factor is not None:
            self.downscaled += factor > self.warn_downscale
            self.max_factor = factor if self.max_factor is None else max(self.max_factor,
                                                                         factor)

    def block(self) -> dict[str, Any]:
        """The ``run_limits`` dict (see :func:`run_limits`)."""
        return {"truncated": self.truncated, "truncated_no_answer": self.no_answer,
                "downscaled": self.downscaled,
                "n_records": self.n_records, "warn_downscale": self.warn_downscale,
                "max_downscale": round(self.max_factor, 3)
                if self.max_factor is not None else None}


def run_limit_lines(limits: dict[str, Any]) -> list[str]:
    """The end-of-run warnings for a :func:`run_limits` block (empty when no record met a
    limit), each naming the option to raise."""
    lines = []
    n = limits.get("n_records", 0)
    if limits.get("truncated"):
        lines.append(f"{limits['truncated']} of {n} answer(s) stopped at the token limit "
                     "(finish reason 'length'): they are cut short and score lower; raise "
                     "--max-tokens")
    if limits.get("truncated_no_answer"):
        lines.append(f"{limits['truncated_no_answer']} of {n} response(s) stopped at the "
                     "token limit before any answer (model failure truncated_no_answer, "
                     "see the model-failure count); raise --max-tokens")
    if limits.get("downscaled"):
        lines.append(f"{limits['downscaled']} of {n} sample(s) had an image sent more than "
                     f"{limits['warn_downscale']:g}x smaller than the original on its "
                     f"longest side (largest: {limits['max_downscale']:g}x): small "
                     "characters may be unreadable; raise --max-side / --max-pixels")
    return lines


def print_run_limits(summary: dict[str, Any]) -> None:
    """The end-of-run warnings of ``summary["run_limits"]`` on stderr: answers cut at
    ``--max-tokens`` and images downscaled past ``--warn-downscale`` (nothing when none);
    every ``run`` handler calls it after its tables."""
    import sys

    for line in run_limit_lines(summary.get("run_limits") or {}):
        print(f"warning: {line}", file=sys.stderr)
