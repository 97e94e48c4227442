"""HCSU: fine-grained historical calligraphy style understanding (ECCV 2026).

Public API (commands are declared in :mod:`.commands`; the platform benchmarks are
:class:`.benchmark.HcsuDiscrimination` and :class:`.benchmark_description.HcsuDescription`,
their records :mod:`.sample_records`):

- data: :func:`load_hcsu` -> :class:`HcsuDataset` (classes = calligrapher + script per
  domain, Bei = stone rubbings, Tie = ink manuscripts);
- canonicalization (§3.3): :func:`canonicalize_array`, :func:`wild_resize_array`,
  :func:`canonicalize_tree`;
- K-way discrimination: :class:`DiscriminationConfig`, :func:`build_questions`,
  :func:`plan_discrimination`, :func:`run_discrimination`;
- N-shot description: :class:`DescriptionConfig`, :func:`build_requests`,
  :func:`plan_description`, :func:`run_description`;
- studies: :mod:`.studies` (K / shot sweeps, description ablation, robustness);
- baselines: ``baseline:image-similarity``, ``baseline:nearest-description``
  (:mod:`.baselines`).
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module; imported on first use, so a worker process that only canonicalizes
# images does not import the task / metric modules.
_API = {
    "CanonParams": "canonical",
    "canonicalize_array": "canonical",
    "wild_resize_array": "canonical",
    "canonicalize_tree": "canonical_batch",
    "DescriptionConfig": "description",
    "build_requests": "description",
    "DiscriminationConfig": "discrimination",
    "build_questions": "discrimination",
    "load_hcsu": "loader",
    "Engine": "pipeline",
    "run_description": "pipeline",
    "run_discrimination": "pipeline",
    "plan_description": "pipeline",
    "plan_discrimination": "pipeline",
    "HcsuConfigError": "sampling",
    "HcsuDataset": "schema",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module(f"{__name__}.{_API[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
