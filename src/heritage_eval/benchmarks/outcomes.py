"""The model-failure rule's names as the built-in benchmarks use them.

The rule (whose failure is it; the model's count as wrong answers by default) and its
counts live in the core, which applies them to every benchmark:
:mod:`heritage_eval.core.model_failures` and :mod:`heritage_eval.core.failure_counts`
(docs/denominators.md); its option (``--model-failures``) is part of the platform's
configuration (:class:`~heritage_eval.core.config.OutputConfig`). This module re-exports
the names the built-in benchmarks use.
"""

from __future__ import annotations

from heritage_eval.core.config import RunConfig
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


def refusals_policy(config: RunConfig | None) -> str:
    """The model-failure policy of a run: ``"wrong"`` or ``"exclude"`` (``wrong`` when
    ``config`` is ``None`` or says nothing)."""
    if config is None:
        return DEFAULT_POLICY
    return policy_of(config.output.model_failures)


__all__ = ["DEFAULT_POLICY", "FAILURE_POLICIES", "MODEL_FAILURE_REASONS",
           "REFUSAL_REASONS", "OutcomeCounts", "apply_policy",
           "failure_kind", "is_excluded", "is_model_failure", "is_truncated", "mark_records",
           "outcomes_body", "outcomes_lines", "outcomes_markdown", "pad_after_failure",
           "policy_of", "refusal_kind", "refusals_policy", "scored_response"]
