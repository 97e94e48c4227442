"""Multi-model MUSE tables from run folders (``summary.json`` of each ``run muse``).

Every table is a :class:`pandas.DataFrame` indexed by model; scores are percentages
(fractions x100). Table 2 follows the paper's layout: models x 12 tasks in task order,
plus ``Average`` (mean over the tasks the model has), rows ordered by that average.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS, TASKS


class RunFolderError(ValueError):
    """A run folder has no readable MUSE ``summary.json``; the message names the file."""


@dataclass(frozen=True)
class ModelResult:
    """One model's result block and the run folder it came from."""

    name: str
    run_dir: Path
    result: dict[str, Any]


def load_results(run_dirs: list[Path]) -> list[ModelResult]:
    """Read every result block of every run folder.

    A model name seen twice gets the run folder's name appended (``model [dir]``).
    Raises :class:`RunFolderError` for a missing/invalid summary or another benchmark.
    """
    out: list[ModelResult] = []
    names: set[str] = set()
    for d in run_dirs:
        path = Path(d) / "summary.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RunFolderError(f"{path}: cannot read summary: {exc}") from exc
        if data.get("benchmark") != "muse":
            raise RunFolderError(f"{path}: not a MUSE run (benchmark={data.get('benchmark')!r})")
        for res in data.get("results", []):
            name = str(res.get("model"))
            if name in names:
                name = f"{name} [{Path(d).name}]"
            names.add(name)
            out.append(ModelResult(name, Path(d), res))
    return out


def _pct(v: Any) -> float | None:
    return None if v is None else 100.0 * float(v)


def task_table(results: list[ModelResult]) -> pd.DataFrame:
    """Table 2: models x task names (percent) + ``Average``, sorted by average (desc)."""
    rows = {m.name: {TASKS[t].name: _pct(m.result["per_task"].get(t, {}).get("score"))
                     for t in TASK_IDS} for m in results}
    df = pd.DataFrame.from_dict(rows, orient="index", columns=[TASKS[t].name
                                                               for t in TASK_IDS])
    df = df.astype(float).dropna(axis=1, how="all")
    df["Average"] = df.mean(axis=1, skipna=True)
    df.index.name = "model"
    return df.sort_values("Average", ascending=False)


def group_table(results: list[ModelResult], key: str) -> pd.DataFrame:
    """Models x groups (percent) for ``key`` in ``per_capability``, ``per_level``,
    ``per_granularity``."""
    rows = {m.name: {g: _pct(v.get("score")) for g, v in m.result.get(key, {}).items()}
            for m in results}
    df = pd.DataFrame.from_dict(rows, orient="index").astype(float)
    df.index.name = "model"
    return df


def invalid_table(results: list[ModelResult]) -> pd.DataFrame:
    """Invalid-response rate per model (percent): overall, mean over tasks, per task."""
    rows = {}
    for m in results:
        row = {"overall": _pct(m.result.get("invalid_rate")),
               "mean over tasks": _pct(m.result.get("mean_task_invalid_rate"))}
        row |= {TASKS[t].name: _pct(v.get("invalid_rate"))
                for t, v in m.result["per_task"].items() if t in TASKS}
        rows[m.name] = row
    df = pd.DataFrame.from_dict(rows, orient="index").astype(float)
    df.index.name = "model"
    return df.sort_values("mean over tasks", ascending=False)


def distractor_table(results: list[ModelResult], task: str, wrong_only: bool = True
                     ) -> pd.DataFrame:
    """Share (percent) of each chosen distractor type per model for ``task``.

    With ``wrong_only`` the shares are over wrong parsed answers (the paper's error
    analysis); otherwise over all parsed answers (``correct`` included).
    """
    key = "wrong_only" if wrong_only else "chosen"
    rows: dict[str, dict[str, float]] = {}
    for m in results:
        counts = m.result.get("distractor_types", {}).get(task, {}).get(key, {})
        total = sum(counts.values())
        if total:
            rows[m.name] = {k: 100.0 * v / total for k, v in counts.items()}
    df = pd.DataFrame.from_dict(rows, orient="index").fillna(0.0)
    df.index.name = "model"
    return df.reindex(sorted(df.columns), axis=1)


def extra_table(results: list[ModelResult]) -> pd.DataFrame:
    """Relative position per dimension and remote interaction per turn (percent)."""
    rows = {}
    for m in results:
        rp = m.result.get("relative_position", {})
        ri = m.result.get("remote_interaction", {})
        rows[m.name] = {
            **{f"position {d}": _pct(rp.get(d)) for d in
               ("lateral", "depth", "vertical", "all_three")},
            **{f"remote {k}": _pct(v.get("score"))
               for k, v in ri.get("per_turn", {}).items()},
            "remote both": _pct(ri.get("both_correct", {}).get("score")),
        }
    df = pd.DataFrame.from_dict(rows, orient="index").astype(float)
    df.index.name = "model"
    return df
