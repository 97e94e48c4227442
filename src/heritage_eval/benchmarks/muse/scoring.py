"""Score one MUSE turn: parse the model's answer, compare with the key, record the outcome.

Per answer format (``QuestionTurn.answer_format``):

- ``choice``: :func:`~heritage_eval.core.parsing.parse_choice` with the turn's labels, option
  texts and tag; score 1 if the parsed label is the key, else 0. The chosen option's
  ``distractor_type`` is recorded (``"correct"`` for the key) for error analysis.
- ``number``: :func:`~heritage_eval.core.parsing.parse_number`; exact match (paper: count
  accuracy).
- ``position``: :func:`~heritage_eval.core.parsing.parse_position`; ``dims`` records each of
  lateral / depth / vertical as correct or not; the turn score is 1 only when all three
  are correct (question-level accuracy). Per-dimension accuracy is aggregated separately.
- ``open``: :func:`~heritage_eval.core.parsing.parse_tagged`; score = cosine similarity of
  the answer's and the reference's embeddings (paper: text-embedding-3-large cosine),
  clipped below at 0 so scores stay fractions in [0, 1] (tables print x100). Embedding
  happens in one batch afterwards (:func:`score_open_answers`); an embedder failure makes
  those turns ``unscored``.

States: ``error`` (no response: transport failure, missing image, earlier turn failed),
``unparsed`` (answered, no valid answer: score 0, counted in the invalid rate),
``unscored`` (metric failed), ``scored``.
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel
from tqdm import tqdm

from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
from heritage_eval.core.parsing import (
    Parsed,
    parse_choice,
    parse_number,
    parse_position,
    parse_tagged,
)
from heritage_eval.core.types import Outcome, Response
from heritage_eval.metrics.embeddings import Embedder, EmbeddingError


class TurnResult(BaseModel):
    """One scored turn: one line of ``samples.jsonl``.

    ``score`` in [0, 1] (``None`` for ``error`` / ``unscored``); ``dims`` per-dimension
    correctness for relative position; ``latency_s`` seconds of the model call.
    """

    question_id: str
    image_id: str
    task: str
    turn: int
    answer_format: str
    state: Outcome
    parsed: Any = None
    parse_method: str | None = None
    answer: Any = None
    chosen_distractor: str | None = None
    score: float | None = None
    dims: dict[str, bool] | None = None
    raw_response: str | None = None
    reason: str | None = None
    latency_s: float | None = None
    cached: bool = False


def _parse(turn: QuestionTurn, text: str) -> Parsed:
    fmt = turn.answer_format
    if fmt == "choice":
        labels = [o.label for o in turn.options]
        texts = {o.label: o.text for o in turn.options if o.text}
        return parse_choice(text, labels, texts or None, tag=turn.tag)
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


def score_open_answers(results: list[TurnResult], embedder: Embedder | None,
                       batch_size: int = 64) -> int:
    """Fill ``score`` of every parsed open answer in place (cosine, clipped to [0, 1]).

    Embeds in batches of ``batch_size`` pairs with a progress bar. Without an embedder, or
    when a batch fails, those turns become ``unscored`` with the reason. Returns the number
    of turns scored.
    """
    pending = [r for r in results if r.answer_format == "open"
               and r.state == Outcome.SCORED and r.score is None]
    done = 0
    bar = tqdm(total=len(pending), desc="embedding open answers", unit="answer",
               file=sys.stderr, disable=None if pending else True)
    for i in range(0, len(pending), batch_size):
        batch = pending[i:i + batch_size]
        try:
            if embedder is None:
                raise EmbeddingError("no embedder configured")
            sims = embedder.similarity([str(r.parsed) for r in batch],
                                       [str(r.answer or "") for r in batch])
        except (EmbeddingError, ValueError) as exc:
            for r in batch:
                r.state, r.reason = Outcome.UNSCORED, f"embedding failed: {exc}"
        else:
            for r, s in zip(batch, sims, strict=True):
                r.score = max(0.0, float(s))
                done += 1
        bar.update(len(batch))
    bar.close()
    return done
