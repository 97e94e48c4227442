"""Run a model on a MUSE question file and score every turn.

One question = one :class:`~heritage_eval.core.types.Conversation`: its turns are sent in
order and the model's own answer to each turn stays in the history for the next (the
4-turn affective dialogue, the 2-turn remote interaction); each turn is scored on its own.
Each turn's user message carries that turn's images (absolute paths, in the order listed)
followed by the prompt text.

The question file is read line by line so one malformed line becomes an ``error`` row
naming ``file:line`` instead of stopping the run; a missing image does the same for its
question. The conversation ``payload`` (for offline baselines) is ``{"sample_id",
"options": {turn index: [labels]}, "question": Question as JSON, "base_dir"}``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from heritage_eval.benchmarks.muse.questions import (
    SCHEMA_VERSION,
    Question,
    QuestionFileError,
    QuestionFileHeader,
)
from heritage_eval.benchmarks.muse.scoring import TurnResult, score_open_answers, score_turn
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    ImagePart,
    Message,
    Outcome,
)
from heritage_eval.metrics.embeddings import Embedder
from heritage_eval.models.base import ModelBackend


@dataclass
class QuestionSet:
    """Questions read from one file; ``bad`` holds a ``TurnResult`` error row for every
    line that could not be read; ``lines`` maps question id -> line number."""

    path: Path
    header: QuestionFileHeader
    questions: list[Question] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    bad: list[TurnResult] = field(default_factory=list)

    @property
    def base_dir(self) -> Path:
        return self.path.resolve().parent


def _bad_row(path: Path, lineno: int, data: object, reason: str) -> TurnResult:
    qid, task = f"{path.name}:{lineno}", "unknown"
    if isinstance(data, dict):
        qid = str(data.get("id") or qid)
        turns = data.get("turns")
        if isinstance(turns, list) and turns and isinstance(turns[0], dict):
            task = str(turns[0].get("task") or task)
    return TurnResult(question_id=qid, image_id="", task=task, turn=0, answer_format="",
                      state=Outcome.ERROR,
                      reason=f"{path}:{lineno}: " + "; ".join(reason.splitlines()))


def load_question_set(path: str | Path) -> QuestionSet:
    """Read a question file tolerantly.

    Raises :class:`QuestionFileError` (naming the file) only when the header is missing,
    invalid or of an unsupported schema version: without it nothing can be run.
    """
    p = Path(path)
    header: QuestionFileHeader | None = None
    qs: QuestionSet | None = None
    seen: set[str] = set()
    with p.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            data: object = None
            try:
                data = json.loads(raw)
                if header is None:
                    header = QuestionFileHeader.model_validate(data)
                    if header.schema_version != SCHEMA_VERSION:
                        raise QuestionFileError(
                            f"{p}:{lineno}: unsupported schema_version "
                            f"{header.schema_version!r} (expected {SCHEMA_VERSION!r})")
                    qs = QuestionSet(path=p, header=header)
                    continue
                q = Question.model_validate(data)
            except (json.JSONDecodeError, ValidationError) as exc:
                if header is None:
                    raise QuestionFileError(f"{p}:{lineno}: no valid header: {exc}") from exc
                assert qs is not None
                qs.bad.append(_bad_row(p, lineno, data, f"malformed question: {exc}"))
                continue
            assert qs is not None
            if q.id in seen:
                qs.bad.append(_bad_row(p, lineno, data, f"duplicate question id {q.id!r}"))
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


def missing_image(q: Question, base: Path) -> str | None:
    """Reason naming the first image of ``q`` that is not a file, else ``None``."""
    for i, t in enumerate(q.turns):
        for rel in [*t.images, *(o.image for o in t.options if o.image)]:
            if not (base / rel).is_file():
                return f"turn {i}: image not found: {base / rel}"
    return None


def conversation_for(q: Question, base: Path, n_turns: int | None = None) -> Conversation:
    """The conversation for ``q`` (first ``n_turns`` turns; all when ``None``)."""
    turns = q.turns[:n_turns] if n_turns else q.turns
    msgs = tuple(Message.user(*[ImagePart(path=str(base / rel)) for rel in t.images],
                              t.prompt) for t in turns)
    payload = {"sample_id": q.id,
               "options": {str(i): [o.label for o in t.options] for i, t in enumerate(turns)},
               "question": q.model_dump(mode="json"), "base_dir": str(base)}
    return Conversation(turns=msgs, payload=payload)


def run_questions(qs: QuestionSet, questions: list[Question], backend: ModelBackend,
                  settings: GenerationSettings, cache: ResponseCache | None,
                  embedder: Embedder | None, tasks: list[str] | None = None,
                  concurrency: int | None = None) -> list[TurnResult]:
    """Send ``questions`` to ``backend`` and score every turn in ``tasks`` (all if None).

    Returns rows in file order (question, then turn), followed by the file's bad lines.
    Turns after the last selected one are not sent.
    """
    base = qs.base_dir
    items: list[RunItem] = []
    load_errors: dict[str, str] = {}
    keep: dict[str, list[int]] = {}
    for q in questions:
        keep[q.id] = [i for i, t in enumerate(q.turns) if not tasks or t.task in tasks]
        if not keep[q.id]:
            continue
        reason = missing_image(q, base)
        if reason:
            load_errors[q.id] = f"{qs.path}:{qs.lines.get(q.id, '?')}: {reason}"
            continue
        items.append(RunItem(q.id, conversation_for(q, base, max(keep[q.id]) + 1)))
    results = run_items(items, backend, settings, cache, concurrency, desc="muse")
    rows: list[TurnResult] = []
    for q in questions:
        res = results.get(q.id)
        for i in keep[q.id]:
            if q.id in load_errors:
                rows.append(score_turn(q, i, None, load_errors[q.id]))
                continue
            resp = res.responses[i] if res is not None and i < len(res.responses) else None
            why = f"not sent: an earlier turn failed ({res.error})" if res and res.error \
                else "no response received"
            rows.append(score_turn(q, i, resp, why))
    score_open_answers(rows, embedder)
    return rows + [r for r in qs.bad if not tasks or r.task in tasks]
