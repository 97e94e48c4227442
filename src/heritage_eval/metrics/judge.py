"""LLM-as-a-judge with a rubric: each text gets one 0–10 score per rubric dimension.

The judge is any chat model behind a :class:`~heritage_eval.models.base.ModelBackend`
(in practice ``openai:NAME`` on an OpenAI-compatible endpoint). It must answer with one
JSON object holding a number for every dimension, e.g. ``{"terminology": 7,
"richness": 5.5}``. Parsing is strict: the whole answer must be that object (optionally
inside one Markdown code fence); a missing key, a non-number, a boolean or a value
outside the scale makes the judgment ``unscored`` with the reason. A failed request is
``unscored`` too. An unscored judgment is never turned into a 0.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    Message,
    Outcome,
    stable_hash,
)
from heritage_eval.models.base import ModelBackend

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?\s*```$", re.S)


@dataclass(frozen=True)
class Rubric:
    """A judging rubric. ``system``: the judge's role. ``instructions``: what to judge and
    how (may use ``{context}`` and ``{text}`` placeholders). ``dimensions``: JSON keys the
    judge must return. ``low``/``high``: the score scale (inclusive)."""

    name: str
    system: str
    instructions: str
    dimensions: tuple[str, ...]
    low: float = 0.0
    high: float = 10.0

    @property
    def hash(self) -> str:
        """Fingerprint of the wording and scale (recorded in provenance)."""
        return stable_hash([self.name, self.system, self.instructions, self.dimensions,
                            self.low, self.high])


@dataclass(frozen=True)
class Judgment:
    """One judged text. ``scores``: dimension -> score (empty unless ``scored``).
    ``outcome``: ``scored`` or ``unscored``; ``reason`` says why it is unscored; ``raw``:
    the judge's answer text (``None`` on transport failure)."""

    outcome: Outcome
    scores: dict[str, float] = field(default_factory=dict)
    reason: str | None = None
    raw: str | None = None

    def score(self, dimension: str) -> float | None:
        return self.scores.get(dimension) if self.outcome is Outcome.SCORED else None


def parse_judgment(text: str | None, rubric: Rubric) -> Judgment:
    """Strictly parse a judge answer (see the module docstring)."""
    if text is None or not text.strip():
        return Judgment(Outcome.UNSCORED, reason="empty judge answer", raw=text)
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        return Judgment(Outcome.UNSCORED, reason=f"judge answer is not a JSON object: {exc}",
                        raw=text)
    if not isinstance(obj, dict):
        return Judgment(Outcome.UNSCORED, reason="judge answer is JSON but not an object",
                        raw=text)
    scores: dict[str, float] = {}
    for dim in rubric.dimensions:
        if dim not in obj:
            return Judgment(Outcome.UNSCORED, reason=f"judge answer lacks {dim!r}", raw=text)
        value = obj[dim]
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(float(value)):
            return Judgment(Outcome.UNSCORED, reason=f"{dim!r} is not a number: {value!r}",
                            raw=text)
        if not rubric.low <= float(value) <= rubric.high:
            return Judgment(Outcome.UNSCORED, reason=f"{dim!r}={value} outside "
                            f"[{rubric.low:g}, {rubric.high:g}]", raw=text)
        scores[dim] = float(value)
    return Judgment(Outcome.SCORED, scores=scores, raw=text)


def judge_conversation(rubric: Rubric, text: str, context: str) -> Conversation:
    """The request asking the judge to score ``text`` given ``context``."""
    prompt = rubric.instructions.format(context=context, text=text)
    return Conversation(system=rubric.system, turns=(Message.user(prompt),),
                        payload={"task": f"judge:{rubric.name}"})


def run_judge(rubric: Rubric, items: Mapping[str, tuple[str, str]], backend: ModelBackend,
              cache: ResponseCache | None, settings: GenerationSettings | None = None,
              concurrency: int | None = None) -> dict[str, Judgment]:
    """Judge every ``id -> (text, context)``; returns ``id -> Judgment`` (same ids).

    ``settings`` default to temperature 0 and 300 new tokens. Never raises for a single
    failed request: it becomes an ``unscored`` judgment naming the error.
    """
    settings = settings or GenerationSettings(temperature=0.0, max_tokens=300)
    run = [RunItem(id=k, conversation=judge_conversation(rubric, t, c))
           for k, (t, c) in items.items()]
    results = run_items(run, backend, settings, cache, concurrency, desc="judge")
    out: dict[str, Judgment] = {}
    for key in items:
        res = results.get(key)
        if res is None or not res.responses:
            out[key] = Judgment(Outcome.UNSCORED, reason="judge request not sent")
        elif res.error:
            out[key] = Judgment(Outcome.UNSCORED, reason=f"judge request failed: {res.error}")
        else:
            out[key] = parse_judgment(res.responses[-1].text, rubric)
    return out


def mean_scores(judgments: Sequence[Judgment], dimension: str) -> float | None:
    """Mean of ``dimension`` over scored judgments; ``None`` when none is scored."""
    vals = [s for j in judgments if (s := j.score(dimension)) is not None]
    return sum(vals) / len(vals) if vals else None
