"""``openai:NAME`` — any OpenAI-compatible chat-completions endpoint.

Works with vLLM, SGLang, LMDeploy, Ollama, llama.cpp server and hosted APIs. Images are
sent as base64 PNG data URLs after applying the size cap; the size actually sent is
recorded in ``Response.meta["sent_image_sizes"]``. The API key is read from the
environment variable named by ``BackendOptions.api_key_env`` at request time and never
stored. Retries: timeouts, connection errors, 429 (honouring ``Retry-After``) and 5xx,
with exponential backoff and full jitter; other 4xx fail at once.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from heritage_eval.core.images import SizeCap, data_url, encode_image, load_image
from heritage_eval.core.types import (
    GenerationSettings,
    ImagePart,
    Message,
    Response,
    TextPart,
    Usage,
)
from heritage_eval.models.base import BackendOptions, ModelBackend, register_backend

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Largest wait honoured from a Retry-After header, seconds.
MAX_RETRY_AFTER_S = 120.0


class OpenAICompatBackend(ModelBackend):
    """Chat-completions client with bounded retries. ``model_id`` is the served name."""

    backend = "openai"

    def __init__(self, model_id: str, options: BackendOptions) -> None:
        if not model_id:
            raise ValueError("openai backend needs a model name: --model openai:NAME")
        self.model_id = model_id
        self.base_url = (options.base_url or os.environ.get("OPENAI_BASE_URL")
                         or DEFAULT_BASE_URL).rstrip("/")
        self.api_key_env = options.api_key_env
        self.cap: SizeCap = options.image_cap
        self.timeout_s = options.timeout_s
        self.max_retries = max(0, options.max_retries)
        extra = options.extra
        self.max_concurrency = int(_number(extra.get("max_concurrency", "8"), "max_concurrency"))
        self.backoff_base_s = _number(extra.get("backoff_base_s", "1.0"), "backoff_base_s")
        self.backoff_max_s = _number(extra.get("backoff_max_s", "60.0"), "backoff_max_s")
        self._client: httpx.AsyncClient | None = None
        # Set once the endpoint has answered anything (any HTTP status).
        self._reachable = False
        # Set when the endpoint was never reachable: later requests fail at once.
        self._unreachable: str | None = None

    def identity(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model_id, "base_url": self.base_url,
                "image_cap": [self.cap.max_side, self.cap.max_pixels]}

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env, "")
        return {"Authorization": f"Bearer {key}"} if key else {}

    def build_payload(self, messages: list[Message], settings: GenerationSettings
                      ) -> tuple[dict[str, Any], list[list[int]]]:
        """The JSON body for ``/chat/completions`` and the image sizes sent ([w, h])."""
        sizes: list[list[int]] = []
        out_msgs: list[dict[str, Any]] = []
        for m in messages:
            if m.role != "user" or not m.images():
                out_msgs.append({"role": m.role, "content": m.text()})
                continue
            parts: list[dict[str, Any]] = []
            for p in m.content:
                if isinstance(p, TextPart):
                    parts.append({"type": "text", "text": p.text})
                elif isinstance(p, ImagePart):
                    img = load_image(p.path, p.page, self.cap)
                    sizes.append([img.width, img.height])
                    parts.append({"type": "image_url",
                                  "image_url": {"url": data_url(encode_image(img))}})
            out_msgs.append({"role": m.role, "content": parts})
        body: dict[str, Any] = {"model": self.model_id, "messages": out_msgs,
                                "temperature": settings.temperature,
                                "max_tokens": settings.max_tokens}
        if settings.top_p is not None:
            body["top_p"] = settings.top_p
        if settings.seed is not None:
            body["seed"] = settings.seed
        return body, sizes

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        if self._unreachable is not None:
            return Response(text=None, error=f"not sent: {self._unreachable}")
        body, sizes = await asyncio.to_thread(self.build_payload, messages, settings)
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout_s)
        url = f"{self.base_url}/chat/completions"
        last_error = "no attempt made"
        for attempt in range(1, self.max_retries + 2):
            start = time.perf_counter()
            wait: float | None = None
            connect_failed = False
            try:
                r = await self._client.post(url, json=body, headers=self._headers())
            except httpx.TimeoutException:
                last_error = f"timeout after {self.timeout_s:g} s ({url})"
            except httpx.HTTPError as exc:
                connect_failed = isinstance(exc, httpx.ConnectError)
                last_error = f"connection error ({url}): {type(exc).__name__}: {exc}"
            else:
                self._reachable = True
                latency = time.perf_counter() - start
                if r.status_code == 200:
                    return _parse_ok(r, latency, attempt, sizes)
                last_error = f"HTTP {r.status_code}: {r.text[:300]}"
                if r.status_code == 429:
                    wait = _retry_after(r.headers.get("retry-after"))
                elif r.status_code < 500:
                    return Response(text=None, error=last_error, attempts=attempt,
                                    meta={"sent_image_sizes": sizes})
            if attempt > self.max_retries:
                if connect_failed and not self._reachable:
                    self._unreachable = (f"endpoint {self.base_url} unreachable "
                                         f"({last_error}); check --base-url")
                break
            if wait is None:
                cap = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
                wait = random.uniform(0, cap)
            await asyncio.sleep(wait)
        return Response(text=None, error=f"{last_error} (after {self.max_retries + 1} attempts)",
                         attempts=self.max_retries + 1, meta={"sent_image_sizes": sizes})

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _number(value: str, key: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{key} must be a number, got {value!r}") from None
    if number <= 0:
        raise ValueError(f"{key} must be > 0, got {value!r}")
    return number


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or HTTP date), capped."""
    if not value:
        return None
    try:
        return min(MAX_RETRY_AFTER_S, max(0.0, float(value)))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return min(MAX_RETRY_AFTER_S, max(0.0, when - time.time()))


def _parse_ok(r: httpx.Response, latency: float, attempt: int,
              sizes: list[list[int]]) -> Response:
    meta: dict[str, Any] = {"sent_image_sizes": sizes}
    try:
        data = r.json()
        choice = data["choices"][0]
        content = choice["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        return Response(text=None, error=f"malformed response body ({type(exc).__name__}): "
                        f"{r.text[:200]}", latency_s=latency, attempts=attempt, meta=meta)
    if isinstance(content, list):  # some servers return content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    usage = data.get("usage") or {}
    meta["finish_reason"] = choice.get("finish_reason")
    return Response(text=content if content is not None else "", latency_s=latency,
                    attempts=attempt, meta=meta,
                    usage=Usage(prompt_tokens=usage.get("prompt_tokens"),
                                completion_tokens=usage.get("completion_tokens")))


register_backend("openai", lambda rest, opts: OpenAICompatBackend(rest, opts),
                 "any OpenAI-compatible chat endpoint: openai:NAME --base-url URL "
                 "(key from --api-key-env)",
                 option_keys={"max_concurrency": "default parallel requests (default 8; "
                                                 "--concurrency overrides)",
                              "backoff_base_s": "first retry wait cap, s (default 1)",
                              "backoff_max_s": "largest retry wait, s (default 60)"})
