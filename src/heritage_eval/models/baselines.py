"""``baseline:random`` — seeded chance baseline for multiple-choice questions.

Reads the option labels from the conversation payload (``payload["options"]``: list of
labels such as ``["A", "B", "C", "D"]``, or a dict turn-index -> labels for multi-turn
conversations) and answers one of them, chosen by a generator seeded from (seed, sample
id, turn): the same run gives the same answers. Turns without options (open answers)
get an empty answer, which the benchmark's parser marks ``unparsed``.
"""

from __future__ import annotations

import random
from typing import Any

from heritage_eval.core.types import GenerationSettings, Message, Response, stable_hash
from heritage_eval.models.base import BackendOptions, ModelBackend, register_backend


class RandomBaseline(ModelBackend):
    """Uniform random choice among the offered options (the chance row of a table)."""

    reads_payload = True  # answers from the structured payload: part of the cache key

    backend = "baseline"
    max_concurrency = 64

    def __init__(self, options: BackendOptions) -> None:
        self.model_id = "random"
        try:
            self.seed = int(options.extra.get("seed", "0"))
        except ValueError:
            raise ValueError(f"seed must be an integer, got {options.extra['seed']!r}") from None

    def identity(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model_id, "seed": self.seed}

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        turn = int(payload.get("turn", 0))
        options = payload.get("options")
        if isinstance(options, dict):
            options = options.get(str(turn), options.get(turn))
        if not options:
            return Response(text="", meta={"note": "no options offered"})
        key = stable_hash([self.seed, payload.get("sample_id"), turn])
        rng = random.Random(int(key, 16))
        return Response(text=str(rng.choice(list(options))))


register_backend("baseline:random", lambda rest, opts: RandomBaseline(opts),
                 "seeded uniform random choice among the options (chance baseline)",
                 option_keys={"seed": "integer seed of the choices (default 0)"})
