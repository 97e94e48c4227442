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
- ``error_reasons`` / ``unscored_reasons``: most frequent reasons (whole; one longer
  than :data:`REASON_CHARS` characters cut with a visible " …").

The block is computed by :class:`.summary_fold.SummaryFold`, one row at a time (the
streamed ``run muse`` folds its records as they are written); :func:`summarize` is that
fold over a list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heritage_eval.benchmarks.muse.analysis.summary_fold import (
    DISTRACTOR_TASKS,
    POSITION_DIMS,
    REASON_CHARS,
    REMOTE_TURNS,
    SummaryFold,
    TaskFold,
    floor_adjusted,
)
from heritage_eval.benchmarks.muse.scoring import TurnResult

__all__ = ["DISTRACTOR_TASKS", "POSITION_DIMS", "REASON_CHARS", "REMOTE_TURNS",
           "floor_adjusted", "summarize", "task_stats"]


def task_stats(rows: Sequence[TurnResult], floor: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """``{"n", "score", "invalid_rate", "states"}`` for the turns of one task (module
    docstring); with ``floor`` (an entry of ``OpenScoring.floors``) also
    ``chance_floor``, ``floor_pairs``, ``floor_adjusted``."""
    fold = TaskFold()
    for r in rows:
        fold.add(r)
    return fold.stats(floor)


def summarize(model: str, rows: Sequence[TurnResult], extra: dict[str, Any] | None = None,
              floors: dict[str, dict[str, Any]] | None = None,
              bad_lines: Sequence[TurnResult] = ()) -> dict[str, Any]:
    """The result block of ``summary.json`` for one model (see module docstring).

    ``rows``: the turns of the questions run; ``floors``: ``OpenScoring.floors``;
    ``bad_lines``: error rows for unreadable question-file lines (kept out of the tasks).
    """
    fold = SummaryFold()
    for r in rows:
        fold.add(r)
    for r in bad_lines:
        fold.add_bad(r)
    return fold.result(model, extra, floors)
