"""``run muse``'s question file as compact facts, its questions read again on each pass.

:func:`index_questions` reads the file once (:class:`~.question_reader.QuestionScan`,
the tolerant reader of ``load_question_set``), applies ``--tasks`` / ``--limit``
(:class:`~.run.Selection`, the rule of :func:`~.run.select`) and keeps, per selected
question, only what a later step needs: its id (the engine's distinct-id check and the
turn plan), its line number (to read it again), its turns' ``(task, answer format)``
(interned: a few shapes shared by every question) and, when an image is missing, the
load error :func:`~.run.plan_turns` would give (the images are checked here, once, as
``plan_turns`` checked them before the run). Over the whole file it keeps what a chance
baseline may answer (:class:`~.chance_options.ChanceOptions`), the tasks found and the
prompt hash of the provenance, folded as the lines go by. Lookups by question id (the
turn plan's ``keep``, ``qs.lines``) go through :class:`InOrder`, not a dictionary.

The selected questions themselves are a
:class:`~heritage_eval.core.lazy_samples.ReiterableSamples` that reads them again
(:func:`~.question_reader.reread_questions`) on each pass: the engine's planning pass and
the scoring pass, which follows it a window behind. Memory is then about 200 bytes a
question after loading and planning (tests/muse/test_question_file_memory.py) instead of
the ~13 kB a parsed question takes; each pass costs one more parse (about 50 µs a
question). A file of fewer than :data:`LAZY_FROM` selected questions is
held as a list (one parse in all). Either way the questions, the plan and every result
are the same.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TypeVar

from heritage_eval.benchmarks.muse.chance_options import ChanceFold, ChanceOptions
from heritage_eval.benchmarks.muse.question_reader import (
    QuestionScan,
    QuestionSet,
    reread_questions,
)
from heritage_eval.benchmarks.muse.questions import Question
from heritage_eval.benchmarks.muse.run import Selection, TurnPlan, missing_image
from heritage_eval.core.lazy_samples import (
    DataChangedError,
    ReiterableSamples,
    describe_change,
    file_identities,
)

#: Selected questions from which the questions are read again on each pass instead of
#: held (a parsed question takes about 13 kB: 65 MB at this size).
LAZY_FROM = 5_000

V = TypeVar("V")

#: ``(task, answer format)`` of each turn of a question
Shape = tuple[tuple[str, str], ...]


class InOrder(Mapping[str, V]):
    """``ids[i] -> value(i)`` without a dictionary: a few cursors follow the lookups, so
    lookups in the ids' order — by up to :attr:`CURSORS` interleaved passes, e.g. the
    planning pass and the scoring pass a window behind it — cost O(1) each; any other
    is a scan of ``ids``."""

    CURSORS = 4

    def __init__(self, ids: Sequence[str], value: Callable[[int], V]) -> None:
        self._ids = ids
        self._value = value
        self._cursors = [0] * self.CURSORS  # most recently used first

    def _find(self, qid: str) -> int | None:
        ids, cursors = self._ids, self._cursors
        n = len(ids)
        for k, c in enumerate(cursors):
            for j in (c, c + 1):
                if j < n and ids[j] == qid:
                    del cursors[k]
                    cursors.insert(0, j)
                    return j
        start = cursors[0]
        for j in chain(range(start, n), range(min(start, n))):
            if ids[j] == qid:
                cursors.pop()
                cursors.insert(0, j)
                return j
        return None

    def __getitem__(self, qid: str) -> V:
        j = self._find(qid)
        if j is None:
            raise KeyError(qid)
        return self._value(j)

    def __contains__(self, qid: object) -> bool:
        return isinstance(qid, str) and self._find(qid) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


class PromptHash:
    """``stable_hash([every prompt])`` (:func:`heritage_eval.core.types.stable_hash`: the
    first 16 hex digits of the SHA-256 of the list's JSON) folded one prompt at a time:
    the JSON of a list of strings is ``[`` + the strings' JSON joined by ``", "`` +
    ``]``. A lone surrogate is encoded as is (``surrogatepass``) where ``stable_hash``
    would raise."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256(b"[")
        self._first = True

    def add(self, prompt: str) -> None:
        text = json.dumps(prompt, ensure_ascii=False)
        self._sha.update(((", " if not self._first else "") + text).encode(
            "utf-8", "surrogatepass"))
        self._first = False

    def hexdigest(self, length: int = 16) -> str:
        sha = self._sha.copy()
        sha.update(b"]")
        return sha.hexdigest()[:length]


@dataclass
class QuestionIndex:
    """The selected questions of a question file and the facts kept of them (module
    docstring). ``qs``: header and unreadable lines; its ``questions`` re-read every
    readable question on each pass. ``samples``: the selected questions (re-read, or a
    list under :data:`LAZY_FROM`); ``ids`` / ``shapes``: their ids and turn shapes, in
    order; ``load_errors``: id -> ``file:line: reason`` of a selected question with a
    missing image; ``n_readable`` / ``file_tasks``: the readable questions of the file
    and their tasks; ``chance``: what ``baseline:random`` may answer; ``prompt_hash``:
    ``stable_hash`` of the selected questions' prompts."""

    qs: QuestionSet
    samples: Sequence[Question]
    ids: list[str]
    shapes: list[Shape]
    load_errors: dict[str, str]
    n_readable: int
    file_tasks: frozenset[str]
    chance: ChanceOptions
    prompt_hash: str

    def selected_tasks(self, tasks: list[str] | None) -> set[str]:
        """The tasks of the selected questions' turns that ``tasks`` keeps (``None``:
        all)."""
        return {task for shape in set(self.shapes) for task, _ in shape
                if not tasks or task in tasks}

    def needs_embedder(self, attempted: frozenset[str] | None,
                       tasks: list[str] | None) -> bool:
        """Whether an open-answer turn is kept (in ``tasks`` and attempted)."""
        return any(fmt == "open" and (not tasks or task in tasks)
                   and (attempted is None or task in attempted)
                   for shape in set(self.shapes) for task, fmt in shape)

    def turn_plan(self, attempted: frozenset[str] | None,
                  tasks: list[str] | None) -> TurnPlan:
        """:func:`~.run.plan_turns` of the selected questions, from the facts kept: the
        same ``keep`` (an :class:`InOrder` mapping, no dictionary; one list per turn
        shape, shared: not to be changed), ``skipped`` (same order) and ``load_errors``
        (those of questions with a kept turn)."""
        skipped: Counter[str] = Counter()
        memo: dict[Shape, tuple[list[int], list[str]]] = {}
        for shape in self.shapes:
            got = memo.get(shape)
            if got is None:
                wanted = [i for i, (task, _) in enumerate(shape) if not tasks or task in tasks]
                keep = [i for i in wanted if attempted is None or shape[i][0] in attempted]
                got = memo[shape] = (keep, [shape[i][0] for i in wanted if i not in keep])
            skipped.update(got[1])
        shapes = self.shapes
        keep_of = InOrder(self.ids, lambda i: memo[shapes[i]][0])
        return TurnPlan(keep=keep_of, skipped=dict(skipped), load_errors={
            qid: why for qid, why in self.load_errors.items() if keep_of[qid]})


def index_questions(path: Path, images_dir: Path | None, tasks: list[str] | None,
                    limit: int | None, lazy_from: int | None = None) -> QuestionIndex:
    """Read the question file ``path`` once (see the module docstring); ``tasks`` /
    ``limit``: the selection (:func:`~.run.select`); ``lazy_from``: :data:`LAZY_FROM`
    when ``None``. Raises as :func:`~.question_reader.load_question_set` (``OSError``,
    ``UnicodeDecodeError``, :class:`~.questions.QuestionFileError`)."""
    lazy_from = LAZY_FROM if lazy_from is None else lazy_from
    before = file_identities([path])  # a file replaced during this read: stopped below
    scan = QuestionScan(path, images_dir)
    rule = Selection(tasks, limit)
    chance = ChanceFold()
    prompts = PromptHash()
    readable, lines = array("I"), array("I")
    ids: list[str] = []
    shapes: list[Shape] = []
    interned: dict[Shape, Shape] = {}
    load_errors: dict[str, str] = {}
    file_tasks: set[str] = set()
    held: list[Question] | None = []
    for lineno, q in scan:
        chance.add(q)
        readable.append(lineno)
        file_tasks.update(t.task for t in q.turns)
        if not rule.takes(q):
            continue
        ids.append(q.id)
        lines.append(lineno)
        shape = tuple((t.task, t.answer_format) for t in q.turns)
        shapes.append(interned.setdefault(shape, shape))
        for t in q.turns:
            prompts.add(t.prompt)
        reason = missing_image(q, scan.qs)
        if reason:
            load_errors[q.id] = f"{scan.qs.path}:{lineno}: {reason}"
        if held is not None:
            held.append(q)
            if len(held) >= lazy_from:
                held = None
    qs = scan.qs
    guard = lambda: file_identities([path])  # noqa: E731 - the file each pass re-reads
    if (what := describe_change(before, guard())) is not None:
        raise DataChangedError(f"the data changed while running: {what}")
    qs.questions = ReiterableSamples(lambda: reread_questions(qs.path, readable),
                                     len(readable), guard=guard)
    qs.lines = InOrder(ids, lines.__getitem__)
    samples: Sequence[Question] = held if held is not None else ReiterableSamples(
        lambda: reread_questions(qs.path, lines, ids), len(ids), ids, guard=guard)
    return QuestionIndex(qs=qs, samples=samples, ids=ids, shapes=shapes,
                         load_errors=load_errors, n_readable=len(readable),
                         file_tasks=frozenset(file_tasks), chance=chance.result(),
                         prompt_hash=prompts.hexdigest())
