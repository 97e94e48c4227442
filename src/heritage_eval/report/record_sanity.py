"""What a run folder's records must be for their numbers to be read back as written.

:func:`heritage_eval.report.runs.check_records` (``compare``, the ``paper`` commands)
refuses a folder whose ``samples.jsonl`` no longer holds what its ``summary.json``
describes. Besides unreadable lines and counts that differ, two kinds of damage keep the
counts equal, and are found here:

- **one sample twice** for one model (a line replaced by a copy of another sample's
  record, a file merged by hand): the counts match, but one sample is missing and another
  counted twice, so numbers recomputed from the records describe other samples than the
  summary's;
- **a score the metric cannot take**: not a finite number, or outside the metric's
  ``bounds`` recorded in the summary (``statistics.metric_specs``; e.g. NED in [0, 1]).

Each returns the problem as text (``None`` when there is none); the caller words the
refusal.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from heritage_eval.core.record import SampleRecord


def repeated_sample(records: Iterable[SampleRecord]) -> str | None:
    """``"model 'M' holds sample 'ID' twice"`` for the first (model, id) met twice, in
    file order; ``None`` when every model's ids are distinct."""
    seen: set[tuple[str, str]] = set()
    for r in records:
        key = (r.model, r.id)
        if key in seen:
            return f"model {r.model!r} holds sample {r.id!r} twice"
        seen.add(key)
    return None


def impossible_score(records: Iterable[SampleRecord],
                     specs: Sequence[dict[str, Any]] | None) -> str | None:
    """The first score that is not a finite number or lies outside its metric's
    ``bounds`` (``[low, high]``, inclusive; a spec without bounds checks finiteness
    only), as ``"sample 'ID' of model 'M' has ned_score = 5.0, outside [0.0, 1.0]"``;
    ``None`` when all are possible. ``None`` scores (not scored) are skipped."""
    bounds: dict[str, tuple[float, float] | None] = {}
    for spec in specs or []:
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            b = spec.get("bounds")
            if isinstance(b, list | tuple) and len(b) == 2 and all(
                    isinstance(x, int | float) for x in b):
                bounds[spec["name"]] = (float(b[0]), float(b[1]))
            else:
                bounds[spec["name"]] = None
    for r in records:
        for name, value in r.scores.items():
            if value is None or name not in bounds:
                continue
            where = f"sample {r.id!r} of model {r.model!r} has {name} = {value!r}"
            if not math.isfinite(value):
                return f"{where}, not a finite number"
            b = bounds[name]
            if b is not None and not b[0] <= value <= b[1]:
                return f"{where}, outside [{b[0]}, {b[1]}]"
    return None
