"""Generator output type shared by every task module."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.prompts import (
    choice_format,
    join,
    option_lines,
    template,
)
from heritage_eval.benchmarks.muse.questions import OptionRecord, Question, QuestionTurn


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


def box_note(images: Sequence[str]) -> str:
    """The note on box coordinates, plus the drawn-copy note when the turn sends the
    artwork with its boxes drawn as a second image."""
    return template("box_note") + (" " + template("drawn_note") if len(images) > 1 else "")


def boxed_choice_turn(task: str, question: str, images: list[str],
                      options: list[OptionRecord], answer: str, params: dict[str, Any],
                      decimals: int = 3, answer_format: str | None = None) -> QuestionTurn:
    """A multiple-choice turn about boxed regions: the prompt is ``question``,
    :func:`box_note`, the options (boxes with ``decimals`` decimals) and the answer-format
    block ``answer_format`` (default: ``[option] <letter>``)."""
    prompt = join(question, box_note(images), "Options:\n" + option_lines(options, decimals),
                  answer_format or choice_format("option", len(options)))
    return QuestionTurn(task=task, prompt=prompt, images=images, answer_format="choice",
                        tag="option", options=options, answer=answer, params=params)
