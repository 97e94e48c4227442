"""``--model oracle-replay:NAME --model-option answers=FILE``: an offline model that
replays answers recorded elsewhere.

``FILE`` is a JSON object, glyph id -> the answer text a model gave (``NAME`` names that
model in the run). A glyph missing from the file gets a failed request (an ``error``
record, left out of the score); an empty string is the model's own failure (an empty
answer: wrong by default, left out under ``--model-failures exclude``). Registered when
the plug-in loads (``BenchmarkPlugin(backends=("oracle_demo.replay",))``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from heritage_eval.plugin import (
    BackendOptions,
    GenerationSettings,
    Message,
    ModelBackend,
    Response,
    read_regular_text,
    register_backend,
)

PREFIX = "oracle-replay"


class ReplayBackend(ModelBackend):
    """Answers each conversation from the file, by ``payload["sample_id"]``."""

    backend = PREFIX
    max_concurrency = 16
    reads_payload = True  # the answer depends on the payload's sample id: cache key

    def __init__(self, name: str, options: BackendOptions) -> None:
        path = options.extra.get("answers")
        if not path:
            raise ValueError("needs --model-option answers=FILE (a JSON object: glyph id "
                             "-> recorded answer text)")
        try:
            text = read_regular_text(path)
            answers = json.loads(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"answers file {path}: {exc}") from None
        if not isinstance(answers, dict) or not all(
                isinstance(v, str) for v in answers.values()):
            raise ValueError(f"answers file {path}: expected a JSON object of strings")
        self.model_id = name or "replay"
        self.answers: dict[str, str] = answers
        self.digest = hashlib.sha256(text.encode()).hexdigest()[:16]

    def identity(self) -> dict[str, Any]:
        """Backend, name and the file's hash: another file never reuses cached answers."""
        return {"backend": self.backend, "model": self.model_id, "answers": self.digest}

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        sample = str(payload.get("sample_id"))
        if sample not in self.answers:
            return Response(text=None, error=f"no recorded answer for {sample!r}")
        return Response(text=self.answers[sample], meta={"finish_reason": "stop"})


register_backend(PREFIX, lambda name, options: ReplayBackend(name, options),
                 "replay answers recorded elsewhere (oracle-recognition example plug-in): "
                 "--model oracle-replay:NAME",
                 option_keys={"answers": "JSON file: glyph id -> recorded answer text"})
