"""The ``--model-failures`` option of the benchmark commands, and the rule's names.

The rule (whose failure is it; the model's count as wrong answers by default) and its
counts live in the core, which applies them to every benchmark:
:mod:`heritage_eval.core.model_failures` and :mod:`heritage_eval.core.failure_counts`
(docs/denominators.md). This module adds the command-line option and re-exports the names
the built-in benchmarks use.
"""

from __future__ import annotations

import argparse

from heritage_eval.core.failure_counts import (
    OutcomeCounts,
    outcomes_body,
    outcomes_lines,
    outcomes_markdown,
)
from heritage_eval.core.model_failures import (
    DEFAULT_POLICY,
    FAILURE_POLICIES,
    MODEL_FAILURE_REASONS,
    REFUSAL_REASONS,
    apply_policy,
    failure_kind,
    is_excluded,
    is_model_failure,
    is_truncated,
    mark_records,
    pad_after_failure,
    policy_of,
    refusal_kind,
    scored_response,
)

#: ``--model-failures`` choices as typed (``error`` = ``exclude``, the old spelling).
CHOICES = ("wrong", "exclude", "error")


def add_refusals_arg(p: argparse.ArgumentParser) -> None:
    """``--model-failures {wrong,exclude}`` (alias ``--refusals``, whose ``error`` means
    ``exclude``; default ``wrong``; docs/denominators.md)."""
    p.add_argument("--model-failures", "--refusals", dest="model_failures",
                   choices=CHOICES, default=DEFAULT_POLICY, metavar="{wrong,exclude}",
                   help="how a turn the model itself failed is scored (refused, blocked by "
                        "a content filter, reasoning only, cut at --max-tokens before any "
                        "answer, empty answer): 'wrong' (default) scores it as a wrong "
                        "(empty) answer that stays in the denominator, and reports the "
                        "model-failure rate per model and group; 'exclude' leaves it out of "
                        "the scores as an error, so the model is scored only on what it "
                        "answered (compare then drops those samples for every model). "
                        "Network, server and data errors are always left out and listed. "
                        "--refusals is the old name of this option; its value 'error' means "
                        "'exclude'. See docs/denominators.md")


def refusals_policy(opts: argparse.Namespace | None) -> str:
    """The model-failure policy of ``opts``: ``"wrong"`` or ``"exclude"`` (``wrong`` when
    absent; ``error`` and an old ``refusals`` attribute are read as ``exclude``)."""
    if opts is None:
        return DEFAULT_POLICY
    return policy_of(getattr(opts, "model_failures", None) or getattr(opts, "refusals", None))


__all__ = ["CHOICES", "DEFAULT_POLICY", "FAILURE_POLICIES", "MODEL_FAILURE_REASONS",
           "REFUSAL_REASONS", "OutcomeCounts", "add_refusals_arg", "apply_policy",
           "failure_kind", "is_excluded", "is_model_failure", "is_truncated", "mark_records",
           "outcomes_body", "outcomes_lines", "outcomes_markdown", "pad_after_failure",
           "policy_of", "refusal_kind", "refusals_policy", "scored_response"]
