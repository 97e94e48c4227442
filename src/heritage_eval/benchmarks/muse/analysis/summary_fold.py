"""One model's MUSE result block folded one turn row at a time (:class:`SummaryFold`).

:func:`.summary.summarize` is this fold over a list of rows; the streamed ``run muse``
(:mod:`..summary_sink`) feeds it each record's row as the record is written and keeps
no row. What is kept: per task the state counts and the exact sum of the judged scores
(:class:`ExactMean`: ``statistics.fmean`` of the same values, to the last bit, whatever
the order), the relative-position and remote-interaction sums, distractor counts, the
distinct artworks judged, the distinct error / unscored reasons with their counts, the
remote-interaction turns of the question at hand (to pair turn 0 with turn 1: the rows
of one question come one after another, as records do), and the first 20
unreadable-line reasons. Definitions: :mod:`.summary`.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from statistics import fmean
from typing import Any

from heritage_eval.benchmarks.muse.scoring import TurnResult
from heritage_eval.benchmarks.muse.taxonomy import CAPABILITIES, TASK_IDS, TASKS
from heritage_eval.core.reason_text import REASON_LIMIT, short_reason
from heritage_eval.core.types import Outcome

DISTRACTOR_TASKS = ("activity_localization", "activity_description", "remote_interaction")
POSITION_DIMS = ("lateral", "depth", "vertical")
REMOTE_TURNS = {0: "entity", 1: "evidence"}
#: Reasons are grouped whole; one longer than REASON_CHARS characters is cut with " …"
#: (:func:`~heritage_eval.core.reason_text.short_reason`).
REASON_CHARS = REASON_LIMIT
_JUDGED = (Outcome.SCORED, Outcome.UNPARSED)


class ExactMean:
    """A running mean equal to ``statistics.fmean`` of the values added (``fsum / n``):
    the sum is kept exactly as non-overlapping partials (Shewchuk's algorithm, the one
    ``math.fsum`` uses), so the order of the values does not matter."""

    __slots__ = ("n", "partials")

    def __init__(self) -> None:
        self.n = 0
        self.partials: list[float] = []

    def add(self, x: float) -> None:
        """Add one finite value."""
        self.n += 1
        i = 0
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                self.partials[i] = lo
                i += 1
            x = hi
        self.partials[i:] = [x]

    def mean(self) -> float | None:
        """``fsum(values) / n``; ``None`` when nothing was added."""
        return math.fsum(self.partials) / self.n if self.n else None


class DistinctCount:
    """How many distinct strings were added (:meth:`add`, ``len()``), keeping a 16-byte
    BLAKE2b digest of each rather than the string (a set of artwork ids took about
    85 bytes an artwork): digests are appended, and sorted and deduplicated each time
    they reach twice the distinct count (so at most 32 bytes a distinct string). The
    count is exact unless two strings share a digest (a chance of about 2**-128 a
    pair)."""

    __slots__ = ("_buf", "_kept", "_last")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._kept = 0  # distinct digests at the start of _buf, since the last compaction
        self._last: str | None = None

    def add(self, text: str) -> None:
        if text == self._last:  # the turns of one question: one artwork
            return
        self._last = text
        self._buf += hashlib.blake2b(text.encode("utf-8", "surrogatepass"),
                                     digest_size=16).digest()
        if len(self._buf) >= 32 * max(1024, self._kept):
            self._compact()

    def _compact(self) -> None:
        import numpy as np  # only once there are digests to sort

        unique = np.unique(np.frombuffer(bytes(self._buf), dtype="V16"))
        self._buf = bytearray(unique.tobytes())
        self._kept = len(unique)

    def __len__(self) -> int:
        self._compact()
        return self._kept


def floor_adjusted(score: float | None, floor: float | None) -> float | None:
    """``(score - floor) / (1 - floor)`` clipped to [0, 1]; ``None`` when either is missing
    or the floor is 1 (nothing above chance can be measured)."""
    if score is None or floor is None or floor >= 1.0:
        return None
    return min(1.0, max(0.0, (score - floor) / (1.0 - floor)))


def judged(row: TurnResult) -> bool:
    """A turn judged: ``scored`` or ``unparsed``, with a score."""
    return row.state in _JUDGED and row.score is not None


class TaskFold:
    """One task's ``{"n", "score", "invalid_rate", "states"}`` (:mod:`.summary`)."""

    __slots__ = ("score", "states", "unparsed")

    def __init__(self) -> None:
        self.states: Counter[str] = Counter()
        self.score = ExactMean()
        self.unparsed = 0

    def add(self, row: TurnResult) -> None:
        """Fold one turn of the task."""
        self.states[row.state.value] += 1
        if judged(row):
            self.score.add(row.score or 0.0)
            self.unparsed += row.state == Outcome.UNPARSED

    def stats(self, floor: dict[str, Any] | None = None) -> dict[str, Any]:
        """The task's block; with ``floor`` (an ``OpenScoring.floors`` entry) also
        ``chance_floor``, ``floor_pairs``, ``floor_adjusted``."""
        n = self.score.n
        out: dict[str, Any] = {
            "n": n, "score": self.score.mean(),
            "invalid_rate": self.unparsed / n if n else None,
            "states": {s.value: self.states[s.value] for s in Outcome},
        }
        if self.states["scored"] == 0 and self.states["unscored"] > 0:
            out["score"] = None
            out["score_note"] = (f"not measured: the metric failed for all "
                                 f"{self.states['unscored']} answered turn(s) that could "
                                 "be scored")
        if floor is not None:
            out["chance_floor"] = floor.get("floor")
            out["floor_pairs"] = floor.get("pairs", 0)
            out["floor_adjusted"] = floor_adjusted(out["score"], floor.get("floor"))
        return out


def _macro(per_task: dict[str, dict[str, Any]], tasks: list[str]) -> dict[str, Any]:
    """The mean of the tasks' scores; a task without one (``n`` 0, or not measured:
    ``score_note``) is left out."""
    scores = {t: per_task[t]["score"] for t in tasks
              if t in per_task and per_task[t]["n"] > 0 and per_task[t]["score"] is not None}
    return {"score": fmean(scores.values()) if scores else None, "tasks": sorted(scores)}


class SummaryFold:
    """The result block of one model: :meth:`add` each turn row, :meth:`add_bad` each
    unreadable-line row, then :meth:`result` (see the module docstring)."""

    def __init__(self) -> None:
        self.tasks: dict[str, TaskFold] = {}
        self.states: Counter[str] = Counter()
        self.artworks = DistinctCount()
        self.reasons = {Outcome.ERROR: Counter[str](), Outcome.UNSCORED: Counter[str]()}
        self.position = {d: ExactMean() for d in (*POSITION_DIMS, "all_three")}
        self.remote = {i: ExactMean() for i in REMOTE_TURNS}
        self.remote_q: tuple[str, dict[int, float]] | None = None  # the question at hand
        self.remote_done = [0, 0]  # questions with both turns judged, both correct
        self.chosen: dict[str, Counter[str]] = {}
        self.wrong: dict[str, Counter[str]] = {}
        self.n_bad = 0
        self.bad_reasons: list[str] = []

    def add(self, row: TurnResult) -> None:
        """Fold one turn row."""
        task = self.tasks.get(row.task)
        if task is None:
            task = self.tasks[row.task] = TaskFold()
        task.add(row)
        self.states[row.state.value] += 1
        if row.state in _JUDGED:
            self.artworks.add(row.image_id)
        if row.state in self.reasons:
            self.reasons[row.state][short_reason(row.reason or "", REASON_CHARS)] += 1
        if row.task in DISTRACTOR_TASKS:
            chosen = self.chosen.setdefault(row.task, Counter())
            wrong = self.wrong.setdefault(row.task, Counter())
            if row.state == Outcome.SCORED and row.chosen_distractor:
                chosen[row.chosen_distractor] += 1
                if row.score == 0.0:
                    wrong[row.chosen_distractor] += 1
        if not judged(row):
            return
        if row.task == "relative_position" and row.dims is not None:
            for d in POSITION_DIMS:
                self.position[d].add(float(row.dims.get(d, False)))
            self.position["all_three"].add(row.score or 0.0)
        if row.task == "remote_interaction":
            if row.turn in self.remote:
                self.remote[row.turn].add(row.score or 0.0)
            if self.remote_q is None or self.remote_q[0] != row.question_id:
                self._close_remote()
                self.remote_q = (row.question_id, {})
            self.remote_q[1][row.turn] = row.score or 0.0

    def add_bad(self, row: TurnResult) -> None:
        """Fold the error row of an unreadable question-file line."""
        self.n_bad += 1
        if len(self.bad_reasons) < 20:
            self.bad_reasons.append(row.reason or "")

    def _position(self) -> dict[str, Any]:
        n = self.position["all_three"].n
        if not n:
            return {"n": 0}
        return {"n": n, **{d: m.mean() for d, m in self.position.items()}}

    @staticmethod
    def _pair(turns: dict[int, float]) -> tuple[int, int]:
        """``(1, both correct)`` for a question with both turns judged, else ``(0, 0)``."""
        if not set(REMOTE_TURNS) <= set(turns):
            return 0, 0
        return 1, int(all(turns[i] == 1.0 for i in REMOTE_TURNS))

    def _close_remote(self) -> None:
        if self.remote_q is not None:
            n, both = self._pair(self.remote_q[1])
            self.remote_done[0] += n
            self.remote_done[1] += both

    def _remote(self) -> dict[str, Any]:
        per_turn = {name: {"n": self.remote[i].n, "score": self.remote[i].mean()}
                    for i, name in REMOTE_TURNS.items()}
        n, both = self._pair(self.remote_q[1]) if self.remote_q is not None else (0, 0)
        n, both = n + self.remote_done[0], both + self.remote_done[1]
        # fmean of n values 0.0 / 1.0 (as summarize computed it) is exactly both / n
        return {"per_turn": per_turn,
                "both_correct": {"n": n, "score": both / n if n else None}}

    def result(self, model: str, extra: dict[str, Any] | None = None,
               floors: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """The ``summary.json`` result block (``floors``: ``OpenScoring.floors``)."""
        order = [t for t in TASK_IDS if t in self.tasks] + sorted(set(self.tasks)
                                                                  - set(TASK_IDS))
        floors = floors or {}
        per_task = {t: self.tasks[t].stats(floors.get(t)) for t in order}
        levels = sorted({i.level for i in TASKS.values()}, key=["low", "mid", "high"].index)
        grans = sorted({i.granularity for i in TASKS.values()},
                       key=["pixel", "crop", "image"].index)
        n = self.states["scored"] + self.states["unparsed"]
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
            "relative_position": self._position(),
            "remote_interaction": self._remote(),
            "distractor_types": {t: {"chosen": dict(sorted(self.chosen[t].items())),
                                     "wrong_only": dict(sorted(self.wrong[t].items())),
                                     "n_wrong": sum(self.wrong[t].values())}
                                 for t in DISTRACTOR_TASKS if t in self.tasks},
            "states": {s.value: self.states[s.value] for s in Outcome},
            "n": n,
            # distinct artworks behind n (the clusters of the intervals; not summed per task)
            "n_artworks": len(self.artworks),
            "invalid_rate": self.states["unparsed"] / n if n else None,
            "mean_task_invalid_rate": fmean(task_invalid) if task_invalid else None,
            "error_reasons": dict(self.reasons[Outcome.ERROR].most_common(20)),
            "unscored_reasons": dict(self.reasons[Outcome.UNSCORED].most_common(20)),
            "bad_lines": {"n": self.n_bad, "reasons": list(self.bad_reasons)},
        }
        result.update(extra or {})
        return result
