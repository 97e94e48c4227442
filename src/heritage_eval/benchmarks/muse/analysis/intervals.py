"""95 % intervals behind the figures' error bars (percent, like the tables).

Task scores: read from each run's summary envelope (``models.<m>.groups.task.<task>.score``
``ci_low`` / ``ci_high``), as computed by ``run muse``. Mean invalid rate over the tasks:
not in the envelope, so computed here from the run's ``samples.jsonl`` with
:func:`heritage_eval.stats.macro_mean_estimate` (unparsed flag of every judged turn,
grouped by task, the summaries' method: docs/intervals.md); it is used only when its value
equals the table's ``mean over tasks`` (otherwise that model gets no error bar). Nothing
here changes a table's number.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from heritage_eval.benchmarks.muse.analysis.tables import ModelResult
from heritage_eval.benchmarks.muse.taxonomy import TASKS
from heritage_eval.core.sizecap import LongLine, iter_lines
from heritage_eval.stats import macro_mean_estimate

_JUDGED = ("scored", "unparsed")


def _pct(v: Any) -> float:
    return float("nan") if v is None else 100.0 * float(v)


def task_score_intervals(results: list[ModelResult]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(low, high)``: models x task names (percent), NaN where the envelope has no
    interval for that task."""
    low: dict[str, dict[str, float]] = {}
    high: dict[str, dict[str, float]] = {}
    for m in results:
        tasks = (m.block.get("groups") or {}).get("task") or {}
        for task, metrics in tasks.items():
            if task not in TASKS:
                continue
            est = (metrics or {}).get("score") or {}
            low.setdefault(m.name, {})[TASKS[task].name] = _pct(est.get("ci_low"))
            high.setdefault(m.name, {})[TASKS[task].name] = _pct(est.get("ci_high"))
    return (pd.DataFrame.from_dict(low, orient="index").astype(float),
            pd.DataFrame.from_dict(high, orient="index").astype(float))


def _judged_flags(run_dir: Path, model: str) -> tuple[list[float], list[str]] | None:
    path = run_dir / "samples.jsonl"
    flags: list[float] = []
    tasks: list[str] = []
    try:
        with path.open("rb") as fh:
            for _, raw in iter_lines(fh, str(path)):  # over max_line_bytes: skipped
                if isinstance(raw, LongLine) or not raw.strip():
                    continue
                rec = json.loads(raw)
                if rec.get("model") != model or rec.get("state") not in _JUDGED:
                    continue
                task = (rec.get("groups") or {}).get("task")
                if task in TASKS:
                    flags.append(1.0 if rec["state"] == "unparsed" else 0.0)
                    tasks.append(str(task))
    except (OSError, json.JSONDecodeError, AttributeError, TypeError):
        return None
    return flags, tasks


def invalid_rate_intervals(results: list[ModelResult]) -> pd.DataFrame:
    """Models x ``ci_low`` / ``ci_high`` (percent) of the mean invalid rate over the
    tasks; a model is left out when its samples cannot be read or do not reproduce the
    summary's ``mean_task_invalid_rate``."""
    rows: dict[str, dict[str, float]] = {}
    for m in results:
        want = m.result.get("mean_task_invalid_rate")
        got = _judged_flags(m.run_dir, str(m.result.get("model")))
        if want is None or not got or not got[0]:
            continue
        est = macro_mean_estimate(got[0], got[1], bounds=(0.0, 1.0))
        if (est.value is None or est.ci_low is None or est.ci_high is None
                or not math.isclose(est.value, float(want), abs_tol=1e-9)):
            continue
        rows[m.name] = {"ci_low": _pct(est.ci_low), "ci_high": _pct(est.ci_high)}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["ci_low", "ci_high"]
                                  ).astype(float)
