"""Aggregate one model's turn results into the ``summary.json`` result block.

Definitions (all fractions in [0, 1]; tables print x100):

- per task: ``n`` = turns scored, i.e. ``scored`` + ``unparsed`` (an unparsed answer is
  judged: it counts 0); ``score`` = mean turn score over those ``n``; ``invalid_rate`` =
  unparsed / ``n``. ``error`` turns (no answer: transport failure, missing image, earlier
  turn failed) and ``unscored`` turns (the metric failed, e.g. the embedder) are excluded
  from ``n``, ``score`` and ``invalid_rate`` and counted separately in ``states``. When
  ``n`` is 0 the score and invalid rate are ``None``; when no turn of a task could be
  measured (``scored`` 0 while ``unscored`` > 0) the score is ``None`` too, with
  ``score_note``: a mean over the unparsed zeros alone would read as a real 0.
- open-answer tasks (3, 4) also carry ``chance_floor`` (mean mismatched-pair cosine, see
  :mod:`heritage_eval.benchmarks.muse.scoring`), ``floor_pairs`` and ``floor_adjusted`` =
  ``(score - floor) / (1 - floor)`` clipped to [0, 1]: our addition for interpretability,
  the paper reports ``score`` only.
- per capability / level / granularity: macro mean of the task scores of the tasks in the
  group that have ``n > 0`` (each task weighs the same, as in the paper's taxonomy plots).
- relative position: accuracy per dimension (lateral, depth, vertical) and all three
  correct, over the judged turns (an unparsed answer is wrong in every dimension).
- remote interaction: accuracy per turn (0 = interacting entity, 1 = evidence) and the
  share of questions with both turns correct (among questions with both turns judged).
- distractor types (tasks 5, 6, 11): counts of the chosen option's ``distractor_type``
  over parsed answers (``correct`` included), and the same restricted to wrong answers.
- ``invalid_rate``: unparsed / n over all turns; ``mean_task_invalid_rate``: mean of the
  per-task invalid rates (the paper's "mean invalid response rate").
- ``bad_lines``: question-file lines that could not be read (``{"n", "reasons"}``); they
  are reported here, never as a task.
- ``error_reasons`` / ``unscored_reasons``: most frequent reasons (first
  :data:`REASON_CHARS` characters).
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
#: Reasons are grouped on their first REASON_CHARS characters.
REASON_CHARS = 300


def _judged(rows: Iterable[TurnResult]) -> list[TurnResult]:
    return [r for r in rows if r.state in (Outcome.SCORED, Outcome.UNPARSED)
            and r.score is not None]


def floor_adjusted(score: float | None, floor: float | None) -> float | None:
    """``(score - floor) / (1 - floor)`` clipped to [0, 1]; ``None`` when either is missing
    or the floor is 1 (nothing above chance can be measured)."""
    if score is None or floor is None or floor >= 1.0:
        return None
    return min(1.0, max(0.0, (score - floor) / (1.0 - floor)))


def task_stats(rows: Sequence[TurnResult], floor: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """``{"n", "score", "invalid_rate", "states"}`` for the turns of one task (module
    docstring); with ``floor`` (an entry of ``OpenScoring.floors``) also
    ``chance_floor``, ``floor_pairs``, ``floor_adjusted``."""
    states = Counter(r.state.value for r in rows)
    judged = _judged(rows)
    n = len(judged)
    out: dict[str, Any] = {
        "n": n,
        "score": fmean(r.score or 0.0 for r in judged) if judged else None,
        "invalid_rate": sum(r.state == Outcome.UNPARSED for r in judged) / n if n else None,
        "states": {s.value: states[s.value] for s in Outcome},
    }
    if states["scored"] == 0 and states["unscored"] > 0:
        out["score"] = None
        out["score_note"] = (f"not measured: the metric failed for all {states['unscored']} "
                             "answered turn(s) that could be scored")
    if floor is not None:
        out["chance_floor"] = floor.get("floor")
        out["floor_pairs"] = floor.get("pairs", 0)
        out["floor_adjusted"] = floor_adjusted(out["score"], floor.get("floor"))
    return out


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


def _reasons(rows: Sequence[TurnResult], state: Outcome) -> dict[str, int]:
    return dict(Counter((r.reason or "")[:REASON_CHARS] for r in rows if r.state == state
                        ).most_common(20))


def summarize(model: str, rows: Sequence[TurnResult], extra: dict[str, Any] | None = None,
              floors: dict[str, dict[str, Any]] | None = None,
              bad_lines: Sequence[TurnResult] = ()) -> dict[str, Any]:
    """The result block of ``summary.json`` for one model (see module docstring).

    ``rows``: the turns of the questions run; ``floors``: ``OpenScoring.floors``;
    ``bad_lines``: error rows for unreadable question-file lines (kept out of the tasks).
    """
    by_task: dict[str, list[TurnResult]] = defaultdict(list)
    for r in rows:
        by_task[r.task].append(r)
    order = [t for t in TASK_IDS if t in by_task] + sorted(set(by_task) - set(TASK_IDS))
    floors = floors or {}
    per_task = {t: task_stats(by_task[t], floors.get(t)) for t in order}
    levels = sorted({i.level for i in TASKS.values()}, key=["low", "mid", "high"].index)
    grans = sorted({i.granularity for i in TASKS.values()},
                   key=["pixel", "crop", "image"].index)
    states = Counter(r.state.value for r in rows)
    judged = states["scored"] + states["unparsed"]
    task_invalid = [v["invalid_rate"] for v in per_task.values()
                    if v["invalid_rate"] is not None]
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
        "n": judged,
        # distinct artworks behind n (the clusters of the intervals; not summed per task)
        "n_artworks": len({r.image_id for r in rows
                           if r.state in (Outcome.SCORED, Outcome.UNPARSED)}),
        "invalid_rate": states["unparsed"] / judged if judged else None,
        "mean_task_invalid_rate": fmean(task_invalid) if task_invalid else None,
        "error_reasons": _reasons(rows, Outcome.ERROR),
        "unscored_reasons": _reasons(rows, Outcome.UNSCORED),
        "bad_lines": {"n": len(bad_lines),
                      "reasons": [r.reason or "" for r in bad_lines[:20]]},
    }
    result.update(extra or {})
    return result
