"""Generator output type shared by every task module."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

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

T = TypeVar("T")


class Without(Sequence[T]):
    """``items`` without the entries ``items[start:stop]`` (none when they are equal): a
    read-only view in the same order, made in O(1) — the list it stands for costs
    O(len(items)) per image, quadratic over a corpus. ``random.choice`` / ``sample``
    draw from it exactly as from that list (they use only ``len`` and indexing)."""

    def __init__(self, items: Sequence[T], start: int, stop: int) -> None:
        self.items, self.start, self.gap = items, start, stop - start

    def __len__(self) -> int:
        return len(self.items) - self.gap

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("index out of range")
        return self.items[i + self.gap if i >= self.start else i]


def others_than(sorted_ids: Sequence[str], own: str) -> Without[str]:
    """``[i for i in sorted_ids if i != own]`` as a :class:`Without` view; ``sorted_ids``
    in ascending order (as :attr:`~.context.Corpus.image_ids`)."""
    return Without(sorted_ids, bisect_left(sorted_ids, own), bisect_right(sorted_ids, own))


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
