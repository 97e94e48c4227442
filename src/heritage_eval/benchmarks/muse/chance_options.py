"""What a chance baseline (``baseline:random``) may answer on a MUSE turn.

:class:`ChanceOptions` holds the two facts of the whole question file it needs: the
largest count answer, and every open-answer reference per task with its question's id
(:class:`TaskReferences`, kept compact: the texts, and one id pointer per text).
:func:`turn_options` gives a turn's offered answers; an open turn is offered a seeded
sample of the OTHER questions' references, taken from a view of the task's references
without the question's own (:meth:`TaskReferences.others`, no copy, so it costs the
same whatever the number of questions).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from heritage_eval.benchmarks.muse.questions import MAX_COUNT, Question, QuestionTurn
from heritage_eval.core.types import stable_hash

#: Counts offered to ``baseline:random`` for a count turn: 0..max(MIN_COUNT_RANGE, the
#: largest count answer in the file), so its chance level is 1 / (that maximum + 1).
MIN_COUNT_RANGE = 10
#: Other questions' references offered to ``baseline:random`` for an open turn.
OPEN_CHOICES = 32
#: Canonical values per relative-position dimension (those of ``POSITION_VALUES``), in
#: the order the prompts list them.
POSITION_ORDER = {"lateral": ("left", "none", "right"), "depth": ("front", "none", "back"),
                  "vertical": ("above", "none", "under")}


class _Without(Sequence[str]):
    """``texts`` without the items ``[start, stop)``: a view, nothing copied."""

    __slots__ = ("_gap", "_n", "_start", "_texts")

    def __init__(self, texts: list[str], start: int, stop: int) -> None:
        self._texts, self._start, self._gap = texts, start, stop - start
        self._n = len(texts) - self._gap

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        i = index + self._n if index < 0 else index
        if not 0 <= i < self._n:
            raise IndexError(f"index {index} out of range (length {self._n})")
        return self._texts[i if i < self._start else i + self._gap]

    def __iter__(self) -> Iterator[str]:
        texts, start = self._texts, self._start
        yield from texts[:start]
        yield from texts[start + self._gap:]


class TaskReferences:
    """The reference texts of one open-answer task in the order added (question order),
    each with the id of its question. Memory: the texts, one pointer per text and one
    dictionary entry per question."""

    __slots__ = ("_scattered", "_start", "owners", "texts")

    def __init__(self) -> None:
        self.texts: list[str] = []
        #: the question id of each text (the same string objects as the questions')
        self.owners: list[str] = []
        self._start: dict[str, int] = {}
        #: ids whose texts are not all next to each other (a repeated id)
        self._scattered: set[str] = set()

    def add(self, qid: str, text: str) -> None:
        """Append question ``qid``'s reference ``text``."""
        if qid in self._start and self.owners[-1] != qid:
            self._scattered.add(qid)
        self._start.setdefault(qid, len(self.texts))
        self.texts.append(text)
        self.owners.append(qid)

    def __len__(self) -> int:
        return len(self.texts)

    def others(self, qid: str) -> Sequence[str]:
        """The texts of every question but ``qid``, in order (what ``[text for id, text
        in references if id != qid]`` gives), as a view when they can be."""
        if qid in self._scattered:
            return [t for o, t in zip(self.owners, self.texts, strict=True) if o != qid]
        start = self._start.get(qid)
        if start is None:
            return self.texts
        stop = start
        while stop < len(self.owners) and self.owners[stop] == qid:
            stop += 1
        return _Without(self.texts, start, stop)


@dataclass(frozen=True)
class ChanceOptions:
    """What ``baseline:random`` may answer on non-choice turns (see :func:`turn_options`):
    ``max_count`` (the largest count offered), ``references`` (task -> its open-answer
    references with their question ids)."""

    max_count: int
    references: dict[str, TaskReferences] = field(default_factory=dict)

    @classmethod
    def from_questions(cls, questions: Iterable[Question]) -> ChanceOptions:
        """Over every question of the file (one pass; :class:`ChanceFold` one at a
        time)."""
        fold = ChanceFold()
        for q in questions:
            fold.add(q)
        return fold.result()

    def others(self, task: str, qid: str) -> Sequence[str]:
        """The references of ``task`` of every question but ``qid``."""
        refs = self.references.get(task)
        return refs.others(qid) if refs is not None else []


class ChanceFold:
    """:class:`ChanceOptions` built one question at a time (:meth:`add`, in file order;
    :meth:`result`)."""

    def __init__(self) -> None:
        self.largest = MIN_COUNT_RANGE
        self.references: dict[str, TaskReferences] = {}

    def add(self, q: Question) -> None:
        for t in q.turns:
            if t.answer_format == "number" and isinstance(t.answer, int | float):
                self.largest = max(self.largest, int(t.answer))
            if t.answer_format == "open" and t.answer:
                self.references.setdefault(t.task, TaskReferences()).add(q.id, str(t.answer))

    def result(self) -> ChanceOptions:
        # never a list of a billion options
        return ChanceOptions(min(self.largest, MAX_COUNT), self.references)


def _tagged(tag: str | None, text: str) -> str:
    return f"[{tag}] {text}" if tag else text


def turn_options(q: Question, index: int, turn: QuestionTurn, chance: ChanceOptions,
                 seed: int) -> list[str]:
    """The answers a chance baseline may give on ``turn``, formatted as the turn asks.

    ``choice``: the option labels. ``number``: ``[count] 0`` … ``[count] K`` with
    K = max(:data:`MIN_COUNT_RANGE`, largest count in the file): chance = 1 / (K + 1).
    ``position``: the 27 lateral x depth x vertical combinations as three tagged lines:
    chance = 1/27 for all three, 1/3 per dimension. ``open``: up to :data:`OPEN_CHOICES`
    references of OTHER questions of the task (seeded sample from (file seed, question id,
    turn)), so its expected score is the task's mismatched-pair chance floor.
    """
    fmt = turn.answer_format
    if fmt == "choice":
        return [o.label for o in turn.options]
    if fmt == "number":
        return [_tagged(turn.tag or "count", str(k)) for k in range(chance.max_count + 1)]
    if fmt == "position":
        return [f"[lateral] {a}\n[depth] {b}\n[vertical] {c}" for a in POSITION_ORDER["lateral"]
                for b in POSITION_ORDER["depth"] for c in POSITION_ORDER["vertical"]]
    others = chance.others(turn.task, q.id)
    rng = random.Random(int(stable_hash([seed, q.id, index, "random-open"]), 16))
    picked = rng.sample(others, min(OPEN_CHOICES, len(others)))
    return [_tagged(turn.tag, ref) for ref in picked]
