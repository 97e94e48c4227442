"""Score one MUSE turn: parse the model's answer, compare with the key, record the outcome.

Per answer format (``QuestionTurn.answer_format``):

- ``choice``: :func:`~heritage_eval.core.parsing.parse_choice` with the turn's labels, option
  texts, option boxes (an echoed box selects its option) and tag; score 1 if the parsed
  label is the key, else 0. The chosen option's ``distractor_type`` is recorded
  (``"correct"`` for the key) for error analysis.
- ``number``: :func:`~heritage_eval.core.parsing_values.parse_number`; exact match (paper:
  count accuracy); a negative number is unparsed.
- ``position``: :func:`~heritage_eval.core.parsing_values.parse_position`; ``dims`` records each of
  lateral / depth / vertical as correct or not; the turn score is 1 only when all three
  are correct (question-level accuracy). Per-dimension accuracy is aggregated separately.
- ``open``: :func:`~heritage_eval.core.parsing.parse_tagged`; score = cosine similarity of
  the answer's and the reference's embeddings (paper: text-embedding-3-large cosine,
  :func:`~heritage_eval.metrics.embeddings.cosine`), raised to 0 when negative so scores
  stay fractions in [0, 1] (tables print x100; flag ``cosine_negative_as_0`` in
  ``details.metric_flags``). A zero or non-finite vector, or an empty reference answer,
  makes the turn ``unscored`` with the reason. Embedding
  happens afterwards for all turns at once (:func:`score_open_answers`); an embedder
  failure makes those turns ``unscored`` with the reason (never 0).

  Our addition for interpretability (not in the paper): sentence-embedding cosines
  concentrate high (with multilingual-e5-small even "asdf qwerty" scores ~74 against an
  unrelated reference), so :func:`score_open_answers` also measures a per-task *chance
  floor* in the same run: the mean cosine of each answer with the references of the
  OTHER questions of that task (mismatched pairs,
  :func:`~heritage_eval.metrics.embeddings.mismatched_mean`, computed in bounded blocks
  by :func:`.chance_floor.chance_floor`). The per-run summary reports
  it beside the score, with the floor-adjusted score ``(score - floor) / (1 - floor)``
  clipped to [0, 1].

States: ``error`` (no response: transport failure, missing image, earlier turn failed),
``unparsed`` (answered, no valid answer: score 0, counted in the invalid rate),
``unscored`` (metric failed), ``scored``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel
from tqdm import tqdm

from heritage_eval.benchmarks.muse.chance_floor import chance_floor
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
from heritage_eval.core.parsing import Parsed, parse_choice, parse_tagged
from heritage_eval.core.parsing_values import parse_number, parse_position
from heritage_eval.core.types import Outcome, Response
from heritage_eval.metrics.embeddings import (
    Embedder,
    EmbeddingError,
    FloatArray,
    cosine,
)
from heritage_eval.metrics.flags import COSINE_NEGATIVE_AS_ZERO, merge_flags


class TurnResult(BaseModel):
    """One scored turn: one line of ``samples.jsonl``.

    ``score`` in [0, 1] (``None`` for ``error`` / ``unscored``); ``dims`` per-dimension
    correctness for relative position; ``latency_s`` seconds of the model call;
    ``parse_flags``: the answer parser's flags (``Parsed.flags``; empty when nothing was
    unusual);
    ``metric_flags``: what the open-answer metric had to do (``cosine_negative_as_0``,
    ``cosine_clipped``, ``cosine_zero_vector`` … see ``metrics.flags``), else ``None``.
    """

    question_id: str
    image_id: str
    task: str
    turn: int
    answer_format: str
    state: Outcome
    parsed: Any = None
    parse_method: str | None = None
    parse_flags: list[str] = []
    answer: Any = None
    chosen_distractor: str | None = None
    score: float | None = None
    dims: dict[str, bool] | None = None
    raw_response: str | None = None
    reason: str | None = None
    latency_s: float | None = None
    cached: bool = False
    metric_flags: list[str] | None = None


def _parse(turn: QuestionTurn, text: str) -> Parsed:
    fmt = turn.answer_format
    if fmt == "choice":
        labels = [o.label for o in turn.options]
        texts = {o.label: o.text for o in turn.options if o.text}
        boxes = {o.label: o.box for o in turn.options if o.box}
        return parse_choice(text, labels, texts or None, tag=turn.tag,
                            option_boxes=boxes or None)
    if fmt == "number":
        return parse_number(text, tag=turn.tag or "count")
    if fmt == "position":
        return parse_position(text)
    if turn.tag:
        return parse_tagged(text, turn.tag)
    stripped = text.strip()
    return Parsed(stripped, None, "untagged") if stripped else Parsed(None, "empty response")


def score_turn(question: Question, index: int, response: Response | None,
               missing_reason: str = "not sent") -> TurnResult:
    """Score turn ``index`` of ``question`` given the model's ``response``.

    ``response`` ``None`` (the turn was never sent) gives an ``error`` row with
    ``missing_reason``. Open answers come back ``scored`` with ``score=None``; call
    :func:`score_open_answers` to fill them.
    """
    turn = question.turns[index]
    base: dict[str, Any] = {"question_id": question.id, "image_id": question.image_id,
                            "task": turn.task, "turn": index,
                            "answer_format": turn.answer_format, "answer": turn.answer}
    if response is None or not response.ok:
        reason = missing_reason if response is None else response.error
        return TurnResult(**base, state=Outcome.ERROR, reason=reason,
                          latency_s=None if response is None else response.latency_s)
    base |= {"raw_response": response.text, "latency_s": response.latency_s,
             "cached": response.cached}
    parsed = _parse(turn, response.text or "")
    base["parse_flags"] = list(parsed.flags)
    if not parsed.ok:
        dims = ({d: False for d in ("lateral", "depth", "vertical")}
                if turn.answer_format == "position" else None)
        return TurnResult(**base, state=Outcome.UNPARSED, score=0.0, reason=parsed.reason,
                          parse_method=parsed.method, dims=dims)
    base |= {"parsed": parsed.value, "parse_method": parsed.method}
    fmt = turn.answer_format
    if fmt == "choice":
        chosen = next(o for o in turn.options if o.label == parsed.value)
        return TurnResult(**base, state=Outcome.SCORED,
                          score=float(parsed.value == turn.answer),
                          chosen_distractor=chosen.distractor_type)
    if fmt == "number":
        return TurnResult(**base, state=Outcome.SCORED,
                          score=float(parsed.value == int(turn.answer)))
    if fmt == "position":
        dims = {d: parsed.value[d] == turn.answer.get(d) for d in parsed.value}
        return TurnResult(**base, state=Outcome.SCORED, dims=dims,
                          score=float(all(dims.values())))
    return TurnResult(**base, state=Outcome.SCORED, score=None)


@dataclass
class OpenScoring:
    """What :func:`score_open_answers` did.

    ``scored`` / ``unscored``: open-answer turns given a score / made ``unscored``.
    ``floors``: per task ``{"floor": mean mismatched cosine in [0, 1] or None, "pairs":
    number of mismatched pairs, "note": why there is no floor (or None)}``.
    ``failures``: distinct embedder failure reasons (for a warning).
    """

    scored: int = 0
    unscored: int = 0
    floors: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def embed_batch(embedder: Embedder, batch: list[str]
                ) -> tuple[list[FloatArray | None], str | None]:
    """One ``embedder.embed`` call: ``(vectors, None)``, or ``([None] * len(batch),
    reason)`` when it fails (:class:`EmbeddingError`, ``ValueError`` or a wrong number of
    vectors)."""
    try:
        vecs = embedder.embed(batch)
        if len(vecs) != len(batch):
            raise EmbeddingError(f"{len(vecs)} vectors for {len(batch)} texts")
        return list(vecs), None
    except (EmbeddingError, ValueError) as exc:
        return [None] * len(batch), str(exc)


def _embed(embedder: Embedder, texts: list[str], batch_size: int, bar: tqdm[Any]
           ) -> tuple[list[FloatArray | None], list[str]]:
    """Embed in batches; a failing batch gives ``None`` per text and its reason."""
    out: list[FloatArray | None] = []
    errors: list[str] = []
    for i in range(0, len(texts), batch_size):
        vecs, error = embed_batch(embedder, texts[i:i + batch_size])
        out += vecs
        if error is not None:
            errors.append(error)
        bar.update(len(vecs))
    return out, errors


def _fail_rows(rows: list[TurnResult], reason: str, res: OpenScoring) -> None:
    for r in rows:
        r.state, r.score, r.reason = Outcome.UNSCORED, None, f"embedding failed: {reason}"
    res.unscored += len(rows)
    if reason not in res.failures:
        res.failures.append(reason)


def score_open_answers(results: list[TurnResult], embedder: Embedder | None,
                       batch_size: int = 64) -> OpenScoring:
    """Fill ``score`` of every parsed open answer in place (cosine, clipped to [0, 1]) and
    measure each task's chance floor (module docstring).

    References are embedded once per question (deduplicated by question id, over every
    open row of the task, whatever its state). Without an embedder, or for a batch that
    fails, those turns become ``unscored`` with the reason, never 0. The floor of a task
    uses every embedded answer of that task; it is ``None`` with fewer than two questions.
    """
    res = OpenScoring()
    open_rows: dict[str, list[TurnResult]] = defaultdict(list)
    for r in results:
        if r.answer_format == "open":
            open_rows[r.task].append(r)
    pending = {t: [r for r in rows if r.state == Outcome.SCORED and r.score is None]
               for t, rows in open_rows.items()}
    refs = {t: dict.fromkeys(r.question_id for r in rows) for t, rows in open_rows.items()}
    ref_text = {(r.task, r.question_id): str(r.answer or "") for r in results
                if r.answer_format == "open"}
    total = sum(len(p) + len(refs[t]) for t, p in pending.items() if p)
    bar = tqdm(total=total, desc="embedding open answers", unit="text", file=sys.stderr,
               disable=None if total else True)
    for task, rows in pending.items():
        if not rows:
            continue
        if embedder is None:
            _fail_rows(rows, "no embedder configured", res)
            res.floors[task] = {"floor": None, "pairs": 0, "note": "no embedder"}
            continue
        qids = list(refs[task])
        got, errs = _embed(embedder, [ref_text[(task, q)] for q in qids], batch_size, bar)
        ref_vecs = [v for v in got if v is not None]
        if errs:
            _fail_rows(rows, f"references: {errs[0]}", res)
            res.floors[task] = {"floor": None, "pairs": 0, "note": "references not embedded"}
            continue
        ans_vecs, errs = _embed(embedder, [str(r.parsed) for r in rows], batch_size, bar)
        row_of = {q: i for i, q in enumerate(qids)}
        done: list[tuple[FloatArray, int]] = []
        for r, vec in zip(rows, ans_vecs, strict=True):
            if vec is None:
                _fail_rows([r], errs[0], res)
                continue
            own = row_of[r.question_id]
            if not ref_text[(task, r.question_id)].strip():
                _fail_rows([r], "empty reference answer", res)
                continue
            cos = cosine(vec, ref_vecs[own])
            if cos.value is None:
                r.metric_flags = list(cos.flags)
                _fail_rows([r], str(cos.reason), res)
                continue
            neg = (COSINE_NEGATIVE_AS_ZERO,) if cos.value < 0.0 else ()
            r.score = max(0.0, cos.value)
            r.metric_flags = merge_flags(cos.flags, neg) or None
            done.append((vec, own))
            res.scored += 1
        floor, pairs = (chance_floor(np.stack([v for v, _ in done]), np.stack(ref_vecs),
                                     [o for _, o in done]) if done else (None, 0))
        note = None if floor is not None else (
            "fewer than two questions" if len(qids) < 2 else "no answer embedded")
        res.floors[task] = {"floor": floor, "pairs": pairs, "note": note}
    bar.close()
    return res
