"""Aggregate one model's turn results into the ``summary.json`` result block.

Definitions (all fractions in [0, 1]; tables print x100):

- per task: ``n`` = turns answered and judged (``scored`` + ``unparsed``); ``score`` = mean
  turn score over those (an unparsed turn counts 0); ``invalid_rate`` = unparsed / turns
  with a response (``scored`` + ``unparsed`` + ``unscored``); ``error`` and ``unscored``
  turns are excluded from ``score`` and counted in ``states``.
- per capability / level / granularity: macro mean of the task scores of the tasks in the
  group that have ``n > 0`` (each task weighs the same, as in the paper's taxonomy plots).
- relative position: accuracy per dimension (lateral, depth, vertical) and all three
  correct, over the judged turns (an unparsed answer is wrong in every dimension).
- remote interaction: accuracy per turn (0 = interacting entity, 1 = evidence) and the
  share of questions with both turns correct (among questions with both turns judged).
- distractor types (tasks 5, 6, 11): counts of the chosen option's ``distractor_type``
  over parsed answers (``correct`` included), and the same restricted to wrong answers.
- ``invalid_rate``: unparsed / answered over all turns; ``mean_task_invalid_rate``: mean of
  the per-task invalid rates (the paper's "mean invalid response rate").
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from statistics import fmean
from typing import Any

from heritage_eval.benchmarks.muse.scoring import TurnResult
from heritage_eval.benchmarks.muse.taxonomy import CAPABILITIES, TASK_IDS, TASKS
from heritage_eval.core.types import Outcome

DISTRACTOR_TASKS = ("activity_localization", "activity_description", "remote_interaction")
POSITION_DIMS = ("lateral", "depth", "vertical")
REMOTE_TURNS = {0: "entity", 1: "evidence"}


def _judged(rows: Iterable[TurnResult]) -> list[TurnResult]:
    return [r for r in rows if r.state in (Outcome.SCORED, Outcome.UNPARSED)
            and r.score is not None]


def task_stats(rows: Sequence[TurnResult]) -> dict[str, Any]:
    """``{"n", "score", "invalid_rate", "states"}`` for the turns of one task."""
    states = Counter(r.state.value for r in rows)
    judged = _judged(rows)
    answered = states["scored"] + states["unparsed"] + states["unscored"]
    return {
        "n": len(judged),
        "score": fmean(r.score or 0.0 for r in judged) if judged else None,
        "invalid_rate": states["unparsed"] / answered if answered else None,
        "states": {s.value: states[s.value] for s in Outcome},
    }


def _macro(per_task: dict[str, dict[str, Any]], tasks: Iterable[str]) -> dict[str, Any]:
    scores = {t: per_task[t]["score"] for t in tasks
              if t in per_task and per_task[t]["n"] > 0}
    return {"score": fmean(scores.values()) if scores else None, "tasks": sorted(scores)}


def _position(rows: Sequence[TurnResult]) -> dict[str, Any]:
    judged = [r for r in _judged(rows) if r.dims is not None]
    if not judged:
        return {"n": 0}
    out: dict[str, Any] = {"n": len(judged)}
    for d in POSITION_DIMS:
        out[d] = fmean(float((r.dims or {}).get(d, False)) for r in judged)
    out["all_three"] = fmean(r.score or 0.0 for r in judged)
    return out


def _remote(rows: Sequence[TurnResult]) -> dict[str, Any]:
    judged = _judged(rows)
    per_turn: dict[str, Any] = {}
    for idx, name in REMOTE_TURNS.items():
        sel = [r.score or 0.0 for r in judged if r.turn == idx]
        per_turn[name] = {"n": len(sel), "score": fmean(sel) if sel else None}
    by_q: dict[str, dict[int, float]] = defaultdict(dict)
    for r in judged:
        by_q[r.question_id][r.turn] = r.score or 0.0
    complete = [v for v in by_q.values() if set(REMOTE_TURNS) <= set(v)]
    both = fmean(float(all(v[i] == 1.0 for i in REMOTE_TURNS)) for v in complete) \
        if complete else None
    return {"per_turn": per_turn, "both_correct": {"n": len(complete), "score": both}}


def _distractors(rows: Sequence[TurnResult]) -> dict[str, Any]:
    chosen = [r for r in rows if r.state == Outcome.SCORED and r.chosen_distractor]
    all_counts = Counter(r.chosen_distractor for r in chosen)
    wrong = Counter(r.chosen_distractor for r in chosen if r.score == 0.0)
    return {"chosen": dict(sorted(all_counts.items())),
            "wrong_only": dict(sorted(wrong.items())),
            "n_wrong": sum(wrong.values())}


def summarize(model: str, rows: Sequence[TurnResult], extra: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    """The result block of ``summary.json`` for one model (see module docstring)."""
    by_task: dict[str, list[TurnResult]] = defaultdict(list)
    for r in rows:
        by_task[r.task].append(r)
    order = [t for t in TASK_IDS if t in by_task] + sorted(set(by_task) - set(TASK_IDS))
    per_task = {t: task_stats(by_task[t]) for t in order}
    levels = sorted({i.level for i in TASKS.values()}, key=["low", "mid", "high"].index)
    grans = sorted({i.granularity for i in TASKS.values()},
                   key=["pixel", "crop", "image"].index)
    states = Counter(r.state.value for r in rows)
    answered = states["scored"] + states["unparsed"] + states["unscored"]
    task_invalid = [v["invalid_rate"] for v in per_task.values()
                    if v["invalid_rate"] is not None]
    reasons = Counter((r.reason or "")[:120] for r in rows
                      if r.state in (Outcome.ERROR, Outcome.UNSCORED))
    result: dict[str, Any] = {
        "model": model,
        "per_task": per_task,
        "per_capability": {c: _macro(per_task, [t for t in TASK_IDS
                                                if TASKS[t].capability == c])
                           for c in CAPABILITIES},
        "per_level": {lv: _macro(per_task, [t for t in TASK_IDS if TASKS[t].level == lv])
                      for lv in levels},
        "per_granularity": {g: _macro(per_task, [t for t in TASK_IDS
                                                 if TASKS[t].granularity == g])
                            for g in grans},
        "relative_position": _position(by_task.get("relative_position", [])),
        "remote_interaction": _remote(by_task.get("remote_interaction", [])),
        "distractor_types": {t: _distractors(by_task[t]) for t in DISTRACTOR_TASKS
                             if t in by_task},
        "states": {s.value: states[s.value] for s in Outcome},
        "invalid_rate": states["unparsed"] / answered if answered else None,
        "mean_task_invalid_rate": fmean(task_invalid) if task_invalid else None,
        "error_reasons": dict(reasons.most_common(20)),
    }
    result.update(extra or {})
    return result
