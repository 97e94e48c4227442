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

import json
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from heritage_eval.benchmarks.muse.generators.dialogue_fill import EmotionCarry, needs_fill
from heritage_eval.benchmarks.muse.questions import (
    MAX_COUNT,
    READABLE_SCHEMA_VERSIONS,
    Question,
    QuestionFileError,
    QuestionFileHeader,
    QuestionTurn,
    resolve_image_path,
    validation_reason,
)
from heritage_eval.benchmarks.muse.scoring import (
    OpenScoring,
    TurnResult,
    score_open_answers,
    score_turn,
)
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.datapath import open_regular, regular_file_problem
from heritage_eval.core.runner import ItemResult, RunItem, run_items
from heritage_eval.core.sizecap import LongLine, iter_lines
from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    ImagePart,
    Message,
    Outcome,
    stable_hash,
)
from heritage_eval.metrics.embeddings import Embedder
from heritage_eval.models.base import ModelBackend

#: Counts offered to ``baseline:random`` for a count turn: 0..max(MIN_COUNT_RANGE, the
#: largest count answer in the file), so its chance level is 1 / (that maximum + 1).
MIN_COUNT_RANGE = 10
#: Other questions' references offered to ``baseline:random`` for an open turn.
OPEN_CHOICES = 32
#: Canonical values per relative-position dimension (those of ``POSITION_VALUES``), in
#: the order the prompts list them.
POSITION_ORDER = {"lateral": ("left", "none", "right"), "depth": ("front", "none", "back"),
                  "vertical": ("above", "none", "under")}


@dataclass
class QuestionSet:
    """Questions read from one file; ``bad`` holds a ``TurnResult`` error row for every
    line that could not be read (its line number at the same index of ``bad_lines``);
    ``lines`` maps question id -> line number;
    ``images_dir`` overrides the folder of source images (``run muse --images``): the
    ``@images/…`` references of a schema-2 file are looked up there."""

    path: Path
    header: QuestionFileHeader
    questions: list[Question] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    bad: list[TurnResult] = field(default_factory=list)
    images_dir: Path | None = None
    bad_lines: list[int] = field(default_factory=list)

    @property
    def base_dir(self) -> Path:
        return self.path.resolve().parent


def image_path(qs: QuestionSet, rel: str) -> Path:
    """Absolute path of image reference ``rel`` of the question file: a source artwork
    (``@images/…``) under ``qs.images_dir`` when given, else where the header says; any
    other path relative to the question file's folder (``questions.resolve_image_path``)."""
    return resolve_image_path(qs.path.resolve(), qs.header, rel, qs.images_dir)


def _bad_row(path: Path, lineno: int, data: object, reason: str) -> TurnResult:
    """An ``error`` row for an unreadable line; its ``task`` is whatever the line names
    (or ""), but such rows are reported apart from the tasks."""
    qid, task = f"{path.name}:{lineno}", ""
    if isinstance(data, dict):
        qid = str(data.get("id") or qid)
        turns = data.get("turns")
        if isinstance(turns, list) and turns and isinstance(turns[0], dict):
            task = str(turns[0].get("task") or "")
    return TurnResult(question_id=qid, image_id="", task=task, turn=0, answer_format="",
                      state=Outcome.ERROR,
                      reason=f"{path}:{lineno}: " + "; ".join(reason.splitlines()))


def load_question_set(path: str | Path, images_dir: Path | None = None) -> QuestionSet:
    """Read a question file tolerantly: a bad question line becomes an error row.

    The file is read in binary and each line decoded on its own, so a line that is not
    UTF-8 (one stray byte), over the ``max_line_bytes`` cap (read past without being
    held; docs/limits.md), not JSON, or not a valid question — including a ``choice``
    answer that is none of its options, or a negative count
    (:class:`~.questions.QuestionTurn` validation) — becomes an ``error`` row naming
    ``file:line`` and the reason, and the other questions run. Raises
    :class:`QuestionFileError` (naming the file and line) only when the header is
    missing, unreadable, invalid or of an unsupported schema version: without it nothing
    can be run. ``OSError`` propagates for an unreadable file.
    """
    p = Path(path)
    qs: QuestionSet | None = None
    seen: set[str] = set()
    with open_regular(p) as fh:  # a FIFO or device: NotARegularFile, never waited on
        for lineno, raw_bytes in iter_lines(fh, str(p)):  # one line held, capped
            data: object = None
            if isinstance(raw_bytes, LongLine):  # read past, never held: one error row
                if qs is None:
                    raise QuestionFileError(f"{p}:{lineno}: no valid header: "
                                            f"{raw_bytes.reason}")
                qs.bad.append(_bad_row(p, lineno, None, raw_bytes.reason))
                qs.bad_lines.append(lineno)
                continue
            try:
                raw = raw_bytes.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                reason = (f"line is not valid UTF-8 (byte 0x{raw_bytes[exc.start]:02x} at "
                          f"byte {exc.start + 1} of the line)")
                if qs is None:
                    raise QuestionFileError(f"{p}:{lineno}: no valid header: {reason}") from exc
                qs.bad.append(_bad_row(p, lineno, None, reason))
                qs.bad_lines.append(lineno)
                continue
            if not raw.strip():
                continue
            try:
                data = json.loads(raw.rstrip("\r\n"))  # an error's column is on this line
                if qs is None:
                    header = QuestionFileHeader.model_validate(data)
                    if header.schema_version not in READABLE_SCHEMA_VERSIONS:
                        raise QuestionFileError(
                            f"{p}:{lineno}: unsupported schema_version "
                            f"{header.schema_version!r} (readable: "
                            f"{', '.join(READABLE_SCHEMA_VERSIONS)})")
                    qs = QuestionSet(path=p, header=header, images_dir=images_dir)
                    continue
                q = Question.model_validate(data)
            except (json.JSONDecodeError, ValidationError) as exc:
                if qs is None:
                    raise QuestionFileError(f"{p}:{lineno}: no valid header: {exc}") from exc
                why = validation_reason(exc) if isinstance(exc, ValidationError) else \
                    f"malformed JSON ({exc.msg} at column {exc.colno})"
                qs.bad.append(_bad_row(p, lineno, data, f"question rejected: {why}"))
                qs.bad_lines.append(lineno)
                continue
            if q.id in seen:
                qs.bad.append(_bad_row(p, lineno, data, f"duplicate question id {q.id!r}"))
                qs.bad_lines.append(lineno)
                continue
            seen.add(q.id)
            qs.questions.append(q)
            qs.lines[q.id] = lineno
    if qs is None:
        raise QuestionFileError(f"{p}: empty question file (no header)")
    return qs


def question_group(q: Question) -> str:
    """The group a question counts under for ``--limit``: its task, or
    ``affective_dialogue`` for the multi-task 4-turn dialogue."""
    tasks = {t.task for t in q.turns}
    return q.turns[0].task if len(tasks) == 1 else "affective_dialogue"


def select(qs: QuestionSet, tasks: list[str] | None, limit: int | None) -> list[Question]:
    """Questions with at least one turn in ``tasks`` (all when ``None``), at most ``limit``
    per :func:`question_group`, in file order."""
    per: Counter[str] = Counter()
    out = []
    for q in qs.questions:
        if tasks and not any(t.task in tasks for t in q.turns):
            continue
        g = question_group(q)
        if limit is not None and per[g] >= limit:
            continue
        per[g] += 1
        out.append(q)
    return out


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


@dataclass(frozen=True)
class ChanceOptions:
    """What ``baseline:random`` may answer on non-choice turns (see :func:`turn_options`)."""

    max_count: int
    references: dict[str, list[tuple[str, str]]]  # task -> [(question id, reference)]

    @classmethod
    def from_questions(cls, questions: list[Question]) -> ChanceOptions:
        counts = [int(t.answer) for q in questions for t in q.turns
                  if t.answer_format == "number" and isinstance(t.answer, int | float)]
        refs: dict[str, list[tuple[str, str]]] = {}
        for q in questions:
            for t in q.turns:
                if t.answer_format == "open" and t.answer:
                    refs.setdefault(t.task, []).append((q.id, str(t.answer)))
        largest = max(MIN_COUNT_RANGE, *counts) if counts else MIN_COUNT_RANGE
        return cls(min(largest, MAX_COUNT), refs)  # never a list of a billion options


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
    others = [ref for qid, ref in chance.references.get(turn.task, []) if qid != q.id]
    rng = random.Random(int(stable_hash([seed, q.id, index, "random-open"]), 16))
    picked = rng.sample(others, min(OPEN_CHOICES, len(others)))
    return [_tagged(turn.tag, ref) for ref in picked]


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
    the backend); ``load_errors``: question id -> ``file:line: reason`` for a question
    whose image is missing (not sent; its kept turns become ``error`` rows);
    ``skipped``: task -> turns not sent because the backend does not attempt the task.
    """

    keep: dict[str, list[int]] = field(default_factory=dict)
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
    plan = TurnPlan()
    skipped: Counter[str] = Counter()
    for q in questions:
        wanted = [i for i, t in enumerate(q.turns) if not tasks or t.task in tasks]
        plan.keep[q.id] = [i for i in wanted
                           if attempted is None or q.turns[i].task in attempted]
        skipped.update(q.turns[i].task for i in wanted if i not in plan.keep[q.id])
        if not plan.keep[q.id]:
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
