"""Run a model on a MUSE question file and score every turn.

One question = one :class:`~heritage_eval.core.types.Conversation`: its turns are sent in
order and the model's own answer to each turn stays in the history for the next (the
4-turn affective dialogue, the 2-turn remote interaction); each turn is scored on its own.
Each turn's user message carries that turn's images (absolute paths, in the order listed)
followed by the prompt text.

A malformed line of the question file is an ``error`` row naming ``file:line`` (reported
apart from the tasks); a missing image makes its question an ``error`` row naming the
file. The conversation ``payload`` (offline baselines): ``{"sample_id", "options": {turn
index: [answers]}, "question", "base_dir"}`` (:func:`turn_options`). A backend's
``supported_tasks`` (task ids) limits the turns sent: others get no row, so a
task-specific baseline leaves no 0 % / 100 %-invalid rows behind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from heritage_eval.benchmarks.muse.chance_options import (
    MIN_COUNT_RANGE as MIN_COUNT_RANGE,
)
from heritage_eval.benchmarks.muse.chance_options import (
    OPEN_CHOICES as OPEN_CHOICES,
)
from heritage_eval.benchmarks.muse.chance_options import (
    POSITION_ORDER as POSITION_ORDER,
)
from heritage_eval.benchmarks.muse.chance_options import (
    ChanceOptions,
    turn_options,
)
from heritage_eval.benchmarks.muse.generators.dialogue_fill import EmotionCarry, needs_fill
from heritage_eval.benchmarks.muse.question_reader import (
    QuestionSet,
    image_path,
)
from heritage_eval.benchmarks.muse.question_reader import (
    load_question_set as load_question_set,
)
from heritage_eval.benchmarks.muse.questions import Question, resolve_image_path
from heritage_eval.benchmarks.muse.scoring import (
    OpenScoring,
    TurnResult,
    score_open_answers,
    score_turn,
)
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.datapath import regular_file_problem
from heritage_eval.core.runner import ItemResult, RunItem, run_items
from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    ImagePart,
    Message,
)
from heritage_eval.metrics.embeddings import Embedder
from heritage_eval.models.base import ModelBackend


def question_group(q: Question) -> str:
    """The group a question counts under for ``--limit``: its task, or
    ``affective_dialogue`` for the multi-task 4-turn dialogue."""
    tasks = {t.task for t in q.turns}
    return q.turns[0].task if len(tasks) == 1 else "affective_dialogue"


class Selection:
    """The ``--tasks`` / ``--limit`` rule of :func:`select`, one question at a time:
    :meth:`takes` says whether the next question (in file order) is selected."""

    def __init__(self, tasks: list[str] | None, limit: int | None) -> None:
        self.tasks = tasks
        self.limit = limit
        self.per: Counter[str] = Counter()

    def takes(self, q: Question) -> bool:
        if self.tasks and not any(t.task in self.tasks for t in q.turns):
            return False
        g = question_group(q)
        if self.limit is not None and self.per[g] >= self.limit:
            return False
        self.per[g] += 1
        return True


def select(qs: QuestionSet, tasks: list[str] | None, limit: int | None) -> list[Question]:
    """Questions with at least one turn in ``tasks`` (all when ``None``), at most ``limit``
    per :func:`question_group`, in file order."""
    rule = Selection(tasks, limit)
    return [q for q in qs.questions if rule.takes(q)]


def missing_image(q: Question, qs: QuestionSet,
                  allow_outside: bool | None = None) -> str | None:
    """Reason naming the first image of ``q`` that is not a file, or that resolves
    outside its data folder (``../..``, absolute, a symlink leading out; see
    ``questions.resolve_image_path(check=True)``), else ``None``. ``allow_outside``:
    ``True`` skips the folder check; ``None`` follows ``--allow-outside-paths`` (the
    process policy of :mod:`heritage_eval.core.paths`)."""
    from heritage_eval.core.paths import PathOutsideRoot

    for i, t in enumerate(q.turns):
        for rel in [*t.images, *(o.image for o in t.options if o.image)]:
            try:
                path = resolve_image_path(qs.path.resolve(), qs.header, rel, qs.images_dir,
                                          check=True, allow_outside=allow_outside)
            except PathOutsideRoot as exc:
                return f"turn {i}: {exc}"
            if (kind := regular_file_problem(path)) not in (None, "file not found"):
                return f"turn {i}: image {rel!r} ({path}): {kind}"
            if kind is not None:
                hint = (f"; generated images travel with the question file: keep "
                        f"{qs.path.stem}_assets/ beside it" if f"{qs.path.stem}_assets/"
                        in rel.replace("\\", "/") else "")
                return f"turn {i}: image {rel!r} not found (looked for {path}){hint}"
    return None


def conversation_for(q: Question, qs: QuestionSet, n_turns: int | None = None,
                     chance: ChanceOptions | None = None) -> Conversation:
    """The conversation for ``q`` (first ``n_turns`` turns; all when ``None``); a turn
    with the emotion slot is filled from the model's turn-2 answer as it is sent
    (:mod:`.generators.dialogue_fill`)."""
    turns = q.turns[:n_turns] if n_turns else q.turns
    chance = chance or ChanceOptions.from_questions(qs.questions)
    msgs = tuple(Message.user(*[ImagePart(path=str(image_path(qs, rel))) for rel in t.images],
                              t.prompt) for t in turns)
    payload = {"sample_id": q.id,
               "options": {str(i): turn_options(q, i, t, chance, qs.header.seed)
                           for i, t in enumerate(turns)},
               "question": q.model_dump(mode="json"), "base_dir": str(qs.base_dir)}
    return Conversation(turns=msgs, payload=payload,
                        fill_turn=EmotionCarry(q) if needs_fill(q) else None)


@dataclass
class RunOutput:
    """Rows of the questions run (file order: question, then turn), what open-answer
    scoring did, and the tasks skipped because the backend does not attempt them
    (task -> number of turns not sent)."""

    rows: list[TurnResult]
    open: OpenScoring
    skipped_tasks: dict[str, int] = field(default_factory=dict)


def supported_tasks(backend: ModelBackend) -> frozenset[str] | None:
    """The task ids ``backend`` declares it attempts (``supported_tasks``), else ``None``
    (all tasks)."""
    value: Any = getattr(backend, "supported_tasks", None)
    return frozenset(value) if value is not None else None


@dataclass
class TurnPlan:
    """Which turns of the selected questions are sent and scored.

    ``keep``: question id -> indices of the turns scored (in ``tasks`` and attempted by
    the backend; every selected question has an entry); ``load_errors``: question id
    -> ``file:line: reason`` for a question whose image is missing (not sent; its kept
    turns become ``error`` rows); ``skipped``: task -> turns not sent because the
    backend does not attempt the task.
    """

    keep: Mapping[str, list[int]] = field(default_factory=dict)
    load_errors: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def sends(self, qid: str) -> bool:
        """Whether question ``qid`` is sent (it has a kept turn and all its images)."""
        return bool(self.keep.get(qid)) and qid not in self.load_errors


def plan_turns(qs: QuestionSet, questions: list[Question], attempted: frozenset[str] | None,
               tasks: list[str] | None = None) -> TurnPlan:
    """The :class:`TurnPlan` of ``questions`` for a backend attempting ``attempted`` tasks
    (``None``: all) and the ``--tasks`` selection (``None``: all). Checks that images
    exist (file system reads only)."""
    keep: dict[str, list[int]] = {}
    plan = TurnPlan(keep=keep)
    skipped: Counter[str] = Counter()
    for q in questions:
        wanted = [i for i, t in enumerate(q.turns) if not tasks or t.task in tasks]
        keep[q.id] = [i for i in wanted if attempted is None or q.turns[i].task in attempted]
        skipped.update(q.turns[i].task for i in wanted if i not in keep[q.id])
        if not keep[q.id]:
            continue
        reason = missing_image(q, qs)
        if reason:
            plan.load_errors[q.id] = f"{qs.path}:{qs.lines.get(q.id, '?')}: {reason}"
    plan.skipped = dict(skipped)
    return plan


def planned_conversation(q: Question, qs: QuestionSet, plan: TurnPlan,
                         chance: ChanceOptions) -> Conversation | None:
    """The conversation sent for ``q`` (up to its last kept turn), or ``None`` when it
    is not sent (no kept turn, or a missing image)."""
    if not plan.sends(q.id):
        return None
    return conversation_for(q, qs, max(plan.keep[q.id]) + 1, chance)


def score_rows(questions: list[Question], plan: TurnPlan, results: Mapping[str, ItemResult],
               embedder: Embedder | None) -> RunOutput:
    """One row per kept turn (file order: question, then turn) from the responses
    received, with open answers embedded and the chance floors measured."""
    rows = [r for q in questions for r in question_rows(q, plan, results.get(q.id))]
    return RunOutput(rows, score_open_answers(rows, embedder), dict(plan.skipped))


def question_rows(q: Question, plan: TurnPlan, res: ItemResult | None) -> list[TurnResult]:
    """The rows of ``q``'s kept turns (in turn order) from its result ``res`` (``None``:
    not sent); open answers are left to score (:func:`.scoring.score_turn`)."""
    keep = plan.keep.get(q.id, [])
    if q.id in plan.load_errors:
        return [score_turn(q, i, None, plan.load_errors[q.id]) for i in keep]
    why = f"not sent: an earlier turn failed ({res.error})" if res and res.error \
        else "no response received"
    got = res.responses if res is not None else []
    return [score_turn(q, i, got[i] if i < len(got) else None, why) for i in keep]


def run_questions(qs: QuestionSet, questions: list[Question], backend: ModelBackend,
                  settings: GenerationSettings, cache: ResponseCache | None,
                  embedder: Embedder | None, tasks: list[str] | None = None,
                  concurrency: int | None = None) -> RunOutput:
    """Send ``questions`` to ``backend`` and score every turn in ``tasks`` (all if None)
    that the backend attempts (:func:`supported_tasks`); turns after the last kept one
    are not sent, the file's unreadable lines (``qs.bad``) not included. ``run muse``
    does the same through the platform engine, streamed (``Muse.iter_score``)."""
    plan = plan_turns(qs, questions, supported_tasks(backend), tasks)
    chance = ChanceOptions.from_questions(qs.questions)
    items = [RunItem(q.id, conv) for q in questions
             if (conv := planned_conversation(q, qs, plan, chance)) is not None]
    results = run_items(items, backend, settings, cache, concurrency, desc="muse")
    return score_rows(questions, plan, results, embedder)
