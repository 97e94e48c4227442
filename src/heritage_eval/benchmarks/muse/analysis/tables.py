"""Multi-model MUSE tables from run folders (``summary.json`` of each ``run muse``).

Every table is a :class:`pandas.DataFrame` indexed by model; scores are percentages
(fractions x100). Table 2 follows the paper's layout: models x 12 tasks in task order,
plus ``Average``. Every table lists the models in the same order (:class:`Ranking`).

Ranking rule (our decision, since runs may cover different tasks — a ``--tasks`` run, or
``baseline:jigsaw-edges``, which attempts one task): the reference task set T is the task
set of the run(s) scoring the most tasks. When all such runs have the same set, every run
scoring all of T is *complete*: its ``Average`` is the mean over T and it is ranked by it.
The other runs are *partial*: marked with a dagger (†) in the markdown, no ``Average``, not
ranked (listed after the ranked runs, by name), with the tasks of T they lack named. When
the largest runs differ in their tasks, the ``Average`` is taken over the tasks every run
has (named in the note) and all runs are ranked by it; if there is none, nothing is
ranked. A partial run's average over its own tasks is never compared with a full run's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

import pandas as pd

from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS, TASKS

DAGGER = "†"


class RunFolderError(ValueError):
    """A run folder has no readable MUSE ``summary.json``, or is given twice; the message
    names the folder or file."""


@dataclass(frozen=True)
class ModelResult:
    """One model's result block, the run folder it came from and the run's provenance;
    ``block``: the model's entry of the summary envelope (``models.<model>``: metrics and
    groups with their 95 % intervals; empty for a summary without one)."""

    name: str
    run_dir: Path
    result: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)
    block: dict[str, Any] = field(default_factory=dict)


def load_results(run_dirs: list[Path]) -> list[ModelResult]:
    """Read every result block of every run folder.

    A model name seen twice gets the run folder's name appended (``model [dir]``).
    Raises :class:`RunFolderError` for a missing/invalid summary, another benchmark, or a
    folder given twice (the same resolved path).
    """
    out: list[ModelResult] = []
    names: set[str] = set()
    seen: dict[Path, Path] = {}
    for d in run_dirs:
        real = Path(d).resolve()
        if real in seen:
            raise RunFolderError(f"{d}: the same run folder is given twice ({seen[real]} "
                                 f"and {d} are one folder); each run is analysed once")
        seen[real] = Path(d)
        path = Path(d) / "summary.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RunFolderError(f"{path}: cannot read summary: {exc}") from exc
        if not isinstance(data, dict) or data.get("benchmark") != "muse":
            bench = data.get("benchmark") if isinstance(data, dict) else None
            raise RunFolderError(f"{path}: not a MUSE run (benchmark={bench!r})")
        blocks = data.get("models")
        blocks = blocks if isinstance(blocks, dict) else {}
        for res in data.get("results", []):
            name = str(res.get("model"))
            block = blocks.get(name)
            block = block if isinstance(block, dict) else {}
            if name in names:
                name = f"{name} [{Path(d).name}]"
            names.add(name)
            out.append(ModelResult(name, Path(d), res, data.get("provenance") or {},
                                   block))
    return out


def _pct(v: Any) -> float | None:
    return None if v is None else 100.0 * float(v)


@dataclass(frozen=True)
class Ranking:
    """Row order and ``Average`` columns shared by every table (module docstring).

    ``average_tasks``: task names averaged; ``ranked``: models best first; ``partial``:
    model -> task names it lacks (not ranked); ``note``: the rule applied, in words.
    """

    average_tasks: list[str]
    ranked: list[str]
    partial: dict[str, list[str]]
    note: str

    @property
    def order(self) -> list[str]:
        """Ranked models, then partial ones by name, then any other (no ranking)."""
        return [*self.ranked, *sorted(self.partial)]

    def label(self, model: str) -> str:
        """The model's display name: with a dagger when it is a partial run."""
        return f"{model} {DAGGER}" if model in self.partial else model


def _scores(results: list[ModelResult]) -> pd.DataFrame:
    rows = {m.name: {TASKS[t].name: _pct(m.result["per_task"].get(t, {}).get("score"))
                     for t in TASK_IDS} for m in results}
    df = pd.DataFrame.from_dict(rows, orient="index", columns=[TASKS[t].name
                                                               for t in TASK_IDS])
    return df.astype(float).dropna(axis=1, how="all")


def rank(results: list[ModelResult]) -> Ranking:
    """Apply the ranking rule of the module docstring."""
    df = _scores(results)
    present = {m: [c for c in df.columns if pd.notna(df.loc[m, c])] for m in df.index}
    most = max((len(v) for v in present.values()), default=0)
    largest = {tuple(v) for v in present.values() if len(v) == most}
    if most and len(largest) == 1:
        tasks = list(next(iter(largest)))
        ranked_pool = [m for m in df.index if len(present[m]) == most]
        partial = {m: [c for c in tasks if c not in present[m]] for m in df.index
                   if m not in ranked_pool}
        note = (f"Average over the {len(tasks)} task(s) of the most complete run(s); "
                + (f"runs marked {DAGGER} lack some of them and are not ranked."
                   if partial else "every run has all of them."))
    else:
        tasks = [c for c in df.columns if all(c in present[m] for m in df.index)]
        ranked_pool, partial = (list(df.index) if tasks else []), {}
        note = (f"The runs with the most tasks differ in their tasks; Average over the "
                f"{len(tasks)} task(s) every run has: {', '.join(tasks)}." if tasks else
                "No task is scored in every run: no Average and no ranking.")
    means = {m: fmean(float(df.loc[m, c]) for c in tasks) for m in ranked_pool}
    ranked = sorted(ranked_pool, key=lambda m: (-means[m], m))
    return Ranking(tasks, ranked, partial, note)


def task_table(results: list[ModelResult], ranking: Ranking | None = None) -> pd.DataFrame:
    """Table 2: models x task names (percent) + ``Average`` (over
    ``ranking.average_tasks``; NaN for partial runs), rows in ranking order."""
    ranking = ranking or rank(results)
    df = _scores(results)
    avg = df[ranking.average_tasks].mean(axis=1) if ranking.average_tasks else None
    df["Average"] = [avg[m] if avg is not None and m in ranking.ranked else float("nan")
                     for m in df.index]
    df.index.name = "model"
    return df.reindex(ranking.order + [m for m in df.index if m not in ranking.order])


def _ordered(df: pd.DataFrame, results: list[ModelResult], ranking: Ranking | None
             ) -> pd.DataFrame:
    df.index.name = "model"
    order = (ranking or rank(results)).order
    return df.reindex([m for m in order if m in df.index]
                      + [m for m in df.index if m not in order])


def group_table(results: list[ModelResult], key: str, ranking: Ranking | None = None
                ) -> pd.DataFrame:
    """Models x groups (percent) for ``key`` in ``per_capability``, ``per_level``,
    ``per_granularity``."""
    rows = {m.name: {g: _pct(v.get("score")) for g, v in m.result.get(key, {}).items()}
            for m in results}
    return _ordered(pd.DataFrame.from_dict(rows, orient="index").astype(float), results,
                    ranking)


def invalid_table(results: list[ModelResult], ranking: Ranking | None = None
                  ) -> pd.DataFrame:
    """Invalid-response rate per model (percent of n = scored + unparsed): overall, mean
    over tasks, per task (only the tasks the run has)."""
    rows = {}
    for m in results:
        row = {"overall": _pct(m.result.get("invalid_rate")),
               "mean over tasks": _pct(m.result.get("mean_task_invalid_rate"))}
        row |= {TASKS[t].name: _pct(v.get("invalid_rate"))
                for t, v in m.result["per_task"].items() if t in TASKS}
        rows[m.name] = row
    return _ordered(pd.DataFrame.from_dict(rows, orient="index").astype(float), results,
                    ranking)


def distractor_table(results: list[ModelResult], task: str, wrong_only: bool = True,
                     ranking: Ranking | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Chosen distractor types per model for ``task``: ``(shares, counts)``.

    ``shares``: percent of each type; ``counts``: the same as answer counts. With
    ``wrong_only`` over wrong parsed answers (the paper's error analysis); otherwise over
    all parsed answers (``correct`` included). Models without such answers are left out.
    """
    key = "wrong_only" if wrong_only else "chosen"
    counts: dict[str, dict[str, int]] = {}
    for m in results:
        got = m.result.get("distractor_types", {}).get(task, {}).get(key, {})
        if sum(got.values()):
            counts[m.name] = dict(got)
    c = pd.DataFrame.from_dict(counts, orient="index").fillna(0).astype(int)
    c = _ordered(c.reindex(sorted(c.columns), axis=1), results, ranking)
    shares = c.div(c.sum(axis=1), axis=0) * 100.0 if not c.empty else c.astype(float)
    return shares, c


def extra_table(results: list[ModelResult], ranking: Ranking | None = None) -> pd.DataFrame:
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
    return _ordered(pd.DataFrame.from_dict(rows, orient="index").astype(float), results,
                    ranking)


def open_table(results: list[ModelResult], ranking: Ranking | None = None) -> pd.DataFrame:
    """Open-answer tasks (3, 4): score, chance floor and floor-adjusted score (percent)
    per model; empty when no run has them."""
    rows: dict[str, dict[str, float | None]] = {}
    for m in results:
        for t, st in m.result["per_task"].items():
            if "chance_floor" in st and t in TASKS:
                name = TASKS[t].name
                rows.setdefault(m.name, {}).update({
                    f"{name} score": _pct(st.get("score")),
                    f"{name} floor": _pct(st.get("chance_floor")),
                    f"{name} adjusted": _pct(st.get("floor_adjusted"))})
    df = pd.DataFrame.from_dict(rows, orient="index").astype(float)
    return _ordered(df, results, ranking) if not df.empty else df
