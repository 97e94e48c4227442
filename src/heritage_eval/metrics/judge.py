"""LLM-as-a-judge with a rubric: each text gets one score per rubric dimension.

The judge is any chat model behind a :class:`~heritage_eval.core.backends.ModelBackend`
(in practice ``openai:NAME`` on an OpenAI-compatible endpoint). It must answer with a
JSON object holding a number for every dimension, e.g. ``{"terminology": 7,
"richness": 5.5}``. Finding the object is lenient, reading it is strict:

- the object may sit in a fenced Markdown block (```` ```json … ``` ````) or follow or
  precede prose (``Here is my evaluation: {…}``); JSON objects that hold none of the
  rubric's dimensions are ignored, and two *different* objects that do are ambiguous;
- a missing key, a non-number (``"4/5"``, ``"7"``), a boolean, a non-integer on an
  integer rubric (``Rubric.integer``) or a value outside ``[low, high]`` makes the reply
  unusable, with the reason.

Retry policy (:func:`run_judge`): an unusable reply is re-asked up to ``reask`` more
times (default 2, so at most 3 attempts); if every attempt is unusable the judge request
*fails*: the response is returned not ``ok`` (``error`` names the reason, the last reply
is kept in ``meta["judge_raw"]``), so the response cache, which stores only ``ok``
responses, never stores a malformed reply as a success, and a re-run asks again. A reply
cached by an older version that no longer parses is re-asked once more under a
separate cache key (``judge_reask`` in the payload). The judgment is then ``unscored``:
left out of the means and counted as a judge failure, never turned into a 0.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heritage_eval.core.backends import ModelBackend
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    Message,
    Outcome,
    Response,
    stable_hash,
)

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)\n?\s*```", re.S)


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
    #: True for integer scales (1–5 Likert): 4.5 is then unusable too.
    integer: bool = False

    @property
    def hash(self) -> str:
        """Fingerprint of the wording and scale (recorded in provenance)."""
        parts: list[object] = [self.name, self.system, self.instructions, self.dimensions,
                               self.low, self.high]
        return stable_hash([*parts, "integer"] if self.integer else parts)


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


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text`` (inside fences or prose), in order."""
    dec = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = dec.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            out.append(obj)
        pos = text.find("{", end)
    return out


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def parse_judgment(text: str | None, rubric: Rubric) -> Judgment:
    """Parse a judge answer: find the JSON object leniently, read it strictly (module doc).

    Returns a ``scored`` :class:`Judgment` with one float per rubric dimension (within
    ``[rubric.low, rubric.high]``), or ``unscored`` with the reason; never raises.
    """
    if text is None or not text.strip():
        return Judgment(Outcome.UNSCORED, reason="empty judge answer", raw=text)
    # reasoning is never the judgment: drop <think> blocks first (as for answers)
    plain = re.sub(r"(?is)<think>.*?</think>", "", text).strip()
    body = _FENCE.sub(lambda m: "\n" + m.group(1) + "\n", plain)
    objects = [o for o in _json_objects(body) if any(d in o for d in rubric.dimensions)]
    if not objects and _is_json(body):
        try:
            is_object = isinstance(json.loads(body), dict)
        except ValueError:
            is_object = False
        why = ("JSON without the rubric's keys at the top level ("
               f"{', '.join(rubric.dimensions)}; keys are case-sensitive)" if is_object
               else "JSON but not an object")
        return Judgment(Outcome.UNSCORED, reason=f"judge answer is {why}", raw=text)
    if not objects:
        return Judgment(Outcome.UNSCORED, reason="judge answer is not a JSON object with "
                        f"the rubric's keys ({', '.join(rubric.dimensions)})", raw=text)
    if any(o != objects[0] for o in objects[1:]):
        return Judgment(Outcome.UNSCORED, reason="ambiguous: the judge answer holds "
                        f"{len(objects)} different JSON judgments", raw=text)
    obj = objects[0]
    scores: dict[str, float] = {}
    for dim in rubric.dimensions:
        if dim not in obj:
            return Judgment(Outcome.UNSCORED, reason=f"judge answer lacks {dim!r}", raw=text)
        value = obj[dim]
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(float(value)):
            return Judgment(Outcome.UNSCORED, reason=f"{dim!r} is not a number: {value!r}",
                            raw=text)
        if rubric.integer and not float(value).is_integer():
            return Judgment(Outcome.UNSCORED, reason=f"{dim!r} is not an integer: {value!r}",
                            raw=text)
        if not rubric.low <= float(value) <= rubric.high:
            return Judgment(Outcome.UNSCORED, reason=f"{dim!r}={value} outside "
                            f"[{rubric.low:g}, {rubric.high:g}]", raw=text)
        scores[dim] = float(value)
    return Judgment(Outcome.SCORED, scores=scores, raw=text)


class _CheckedJudge(ModelBackend):
    """A judge backend whose replies must parse: an unusable reply is re-asked up to
    ``reask`` times, then the request fails (not ``ok``, hence never cached).

    Cache keys are those of ``inner`` (same identity), so usable replies cached before
    still hit; ``keyed_payload`` adds the payload to the key (the stale-reply pass)."""

    def __init__(self, inner: ModelBackend, rubric: Rubric, reask: int,
                 keyed_payload: bool = False) -> None:
        self.inner, self.rubric, self.reask = inner, rubric, max(0, reask)
        self.backend, self.model_id = inner.backend, inner.model_id
        self.max_concurrency, self.reads_prompt = inner.max_concurrency, inner.reads_prompt
        self.reads_payload = inner.reads_payload or keyed_payload

    @property
    def spec(self) -> str:
        return self.inner.spec

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        attempts = 0
        for _ in range(self.reask + 1):
            resp = await self.inner.generate(messages, settings, payload)
            attempts += resp.attempts
            if not resp.ok:
                return resp.model_copy(update={"attempts": attempts})
            judged = parse_judgment(resp.text, self.rubric)
            if judged.outcome is Outcome.SCORED:
                return resp.model_copy(update={"attempts": attempts})
        return Response(text=None, attempts=attempts, latency_s=resp.latency_s,
                        usage=resp.usage, meta=dict(resp.meta, judge_raw=resp.text),
                        error=f"judge reply unusable after {self.reask + 1} attempt(s): "
                              f"{judged.reason}")

    async def aclose(self) -> None:
        await self.inner.aclose()


def judge_conversation(rubric: Rubric, text: str, context: str) -> Conversation:
    """The request asking the judge to score ``text`` given ``context``."""
    prompt = rubric.instructions.format(context=context, text=text)
    return Conversation(system=rubric.system, turns=(Message.user(prompt),),
                        payload={"task": f"judge:{rubric.name}"})


def run_judge(rubric: Rubric, items: Mapping[str, tuple[str, str]], backend: ModelBackend,
              cache: ResponseCache | None, settings: GenerationSettings | None = None,
              concurrency: int | None = None, reask: int = 2) -> dict[str, Judgment]:
    """Judge every ``id -> (text, context)``; returns ``id -> Judgment`` (same ids).

    ``settings`` default to temperature 0 and 300 new tokens. ``reask`` (>= 0): how many
    more times an unusable reply is asked again (module doc: retry policy); the reason of
    an unscored judgment then reads ``judge request failed: judge reply unusable after N
    attempt(s): …``. Never raises for a single failed request: it becomes an
    ``unscored`` judgment naming the error.
    """
    settings = settings or GenerationSettings(temperature=0.0, max_tokens=300)
    run = {k: RunItem(id=k, conversation=judge_conversation(rubric, t, c))
           for k, (t, c) in items.items()}
    checked = _CheckedJudge(backend, rubric, reask)
    results = run_items(list(run.values()), checked, settings, cache, concurrency,
                        desc="judge")
    stale = [k for k, res in results.items() if res.responses and not res.error
             and res.responses[-1].cached
             and parse_judgment(res.responses[-1].text, rubric).outcome is not Outcome.SCORED]
    if stale:  # malformed replies cached by an older version: ask again, keyed apart
        again = [RunItem(id=k, conversation=run[k].conversation.model_copy(update={
            "payload": dict(run[k].conversation.payload, judge_reask=1)})) for k in stale]
        results |= run_items(again, _CheckedJudge(backend, rubric, reask, keyed_payload=True),
                             settings, cache, concurrency, desc="judge (re-ask)")
    out: dict[str, Judgment] = {}
    for key in items:
        res = results.get(key)
        if res is None or not res.responses:
            out[key] = Judgment(Outcome.UNSCORED, reason="judge request not sent")
        elif res.error:
            out[key] = Judgment(Outcome.UNSCORED, reason=f"judge request failed: {res.error}",
                                raw=res.responses[-1].meta.get("judge_raw"))
        else:
            out[key] = parse_judgment(res.responses[-1].text, rubric)
    return out


def mean_scores(judgments: Sequence[Judgment], dimension: str) -> float | None:
    """Mean of ``dimension`` over scored judgments; ``None`` when none is scored."""
    vals = [s for j in judgments if (s := j.score(dimension)) is not None]
    return sum(vals) / len(vals) if vals else None
