"""Generator output type shared by every task module."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.questions import Question


@dataclass
class Generated:
    """Questions made for one image, plus ``(task, reason)`` for every annotation item
    (image, person, activity…) a task had to skip."""

    questions: list[Question] = field(default_factory=list)
    skips: list[tuple[str, str]] = field(default_factory=list)

    def skip(self, task: str, reason: str) -> Generated:
        self.skips.append((task, reason))
        return self


Generator = Callable[[ImageContext], Generated]
