"""``openai:NAME`` — one model behind one or several OpenAI-compatible endpoints.

Works with vLLM, SGLang, LMDeploy, Ollama, llama.cpp server and hosted APIs.

- **No default host**: ``--base-url`` (repeatable), ``--base-urls-file`` or
  ``$OPENAI_BASE_URL`` is required.
- **Pre-flight** (:meth:`OpenAICompatBackend.preflight`, run once before the first request
  if nobody called it): a key must be set for a non-local host; ``GET {url}/models`` on
  every endpoint within :data:`PREFLIGHT_TIMEOUT_S`. A 404 there is followed by a one-token
  chat probe (a server without ``/models`` stays usable); if that fails too, the error
  suggests adding ``/v1``. Failures raise :class:`~heritage_eval.models.endpoints.EndpointError`
  with the reason; with several endpoints, those failing are taken out and the run goes on.
- **Retries** (``max_retries`` after the first attempt): timeouts, connection errors, 5xx,
  429 (honouring ``Retry-After``) and 200 bodies that are not a completion, with
  exponential backoff and full jitter; a retry goes to another endpoint when there is one.
  401/403 (``auth``), 413 (``input_too_large``) and other 4xx fail at once; a content
  filter is retried once. Every failure names its kind in ``meta["failure"]`` and no key
  ever appears in an error (see :func:`~heritage_eval.models.openai_parse.redact`).
- **Circuit breaker**: after the endpoints have worked, ``circuit_breaker`` (default 8)
  failed attempts in a row spanning at least ``circuit_window_s`` open the circuit:
  :attr:`OpenAICompatBackend.fatal_error` holds the reason, requests in flight are cut and
  every further request returns ``circuit open: …`` at once (``failure="circuit_open"``).
- **Balancing and adaptive concurrency**: least-outstanding-requests over the endpoints
  (:class:`~heritage_eval.models.endpoints.EndpointPool`), attempts gated by an AIMD
  limit starting at the concurrency and at most concurrency x endpoints
  (:class:`~heritage_eval.models.endpoints.AdaptiveLimit`).
- **Reasoning models**: reasoning goes to ``meta["reasoning"]``; see
  :mod:`~heritage_eval.models.openai_parse`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import time
from typing import Any

from heritage_eval.core.images import SizeCap
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import BackendOptions, ModelBackend, register_backend
from heritage_eval.models.endpoints import (
    AdaptiveLimit,
    Endpoint,
    EndpointError,
    EndpointPool,
    is_local_url,
    without_userinfo,
)
from heritage_eval.models.openai_body import (
    BODY_OPTION_KEYS,
    ImageCache,
    body_options,
    build_body,
)
from heritage_eval.models.openai_http import (
    Client,
    HttpResult,
    TransportError,
    make_client,
)
from heritage_eval.models.openai_http import retry_after as _retry_after
from heritage_eval.models.openai_parse import parse_completion, redact, snippet
from heritage_eval.models.openai_preflight import run_preflight

log = logging.getLogger(__name__)

#: Each pre-flight request's time limit, seconds (a bad setup fails in under 2 s).
PREFLIGHT_TIMEOUT_S = 1.5


class OpenAICompatBackend(ModelBackend):
    """Chat-completions client (see the module docstring). ``model_id`` is the served
    name; ``base_url`` the first endpoint (it names the deployment in the cache key, so
    adding replicas keeps the cache); ``base_urls`` all of them."""

    backend = "openai"

    def __init__(self, model_id: str, options: BackendOptions) -> None:
        if not model_id:
            raise ValueError("openai backend needs a model name: --model openai:NAME")
        self.model_id = model_id
        extra = options.extra
        per_endpoint = int(_number(extra.get("max_concurrency", "8"), "max_concurrency"))
        self.backoff_base_s = _number(extra.get("backoff_base_s", "1.0"), "backoff_base_s")
        self.backoff_max_s = _number(extra.get("backoff_max_s", "60.0"), "backoff_max_s")
        self.breaker_n = int(_number(extra.get("circuit_breaker", "8"), "circuit_breaker",
                                     zero_ok=True))
        self.breaker_window_s = _number(extra.get("circuit_window_s", "5"), "circuit_window_s",
                                        zero_ok=True)
        failures = int(_number(extra.get("endpoint_failures", "3"), "endpoint_failures"))
        cooldown = _number(extra.get("cooldown_s", "10"), "cooldown_s")
        self.check_endpoints = _flag(extra.get("preflight", "1"), "preflight")
        self.body_fields, self.limit_field = body_options(extra)
        urls = list(getattr(options, "base_urls", ()) or ())
        if not urls and (options.base_url or os.environ.get("OPENAI_BASE_URL")):
            urls = [options.base_url or os.environ["OPENAI_BASE_URL"]]
        if not urls:
            raise ValueError("no endpoint given: pass --base-url URL (e.g. "
                             "http://localhost:8000/v1; repeatable), --base-urls-file FILE "
                             "or set $OPENAI_BASE_URL; no default host is assumed")
        # credentials in a URL (https://user:KEY@host) are never sent nor kept: the key
        # comes from --api-key-env; the redactor masks them in any text
        self.base_urls = [without_userinfo(u).rstrip("/") for u in urls]
        self.base_url = self.base_urls[0]
        self.api_key_env = options.api_key_env
        self.cap: SizeCap = options.image_cap
        self.timeout_s = options.timeout_s
        self.max_retries = max(0, options.max_retries)
        concurrency = getattr(options, "concurrency", None) or per_endpoint
        self.max_concurrency = concurrency * len(self.base_urls)
        self.gate = AdaptiveLimit(initial=concurrency, maximum=self.max_concurrency)
        self.pool = EndpointPool(self.base_urls, failures, cooldown)
        self.images = ImageCache()
        #: Why the backend stopped (pre-flight refused, circuit open), or ``None``.
        self.fatal_error: str | None = None
        self._fatal_kind = ""
        self._checked = False
        self._armed = False
        self._streak = 0
        self._streak_start = 0.0
        self._client: Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._tripped: asyncio.Event | None = None

    def identity(self) -> dict[str, Any]:
        ident: dict[str, Any] = {"backend": self.backend, "model": self.model_id,
                                 "base_url": self.base_url,
                                 "image_cap": [self.cap.max_side, self.cap.max_pixels]}
        if self.body_fields or self.limit_field != "max_tokens":
            ident["request_options"] = {**self.body_fields, "limit_field": self.limit_field}
        return ident

    # ------------------------------------------------------------------ plumbing
    def _key(self) -> str:
        return os.environ.get(self.api_key_env, "")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "User-Agent": "heritage-eval"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _redact(self, text: str) -> str:
        return redact(text, [self._key()])

    def _loop_state(self) -> tuple[Client, asyncio.Lock, asyncio.Event]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop  # a new event loop (asyncio.run per call): fresh state
            self._client = None
            self._lock, self._tripped = asyncio.Lock(), asyncio.Event()
            if self.fatal_error is not None:
                self._tripped.set()
        if self._client is None:
            self._client = make_client(self.max_concurrency)
        assert self._lock is not None and self._tripped is not None
        return self._client, self._lock, self._tripped

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None
        self._loop = None

    # ------------------------------------------------------------------ pre-flight
    async def preflight(self) -> None:
        """Check the setup once (idempotent; see the module docstring): key present for a
        non-local host, ``GET /models`` on every endpoint. Raises
        :class:`~heritage_eval.models.endpoints.EndpointError` with the reason (and
        stores it in :attr:`fatal_error`); with several endpoints only when none passes.
        Takes under 2 s when the setup is bad."""
        client, lock, _ = self._loop_state()
        async with lock:
            if self._checked:
                if self.fatal_error is not None:
                    raise EndpointError(self.fatal_error, self._fatal_kind)
                return
            try:
                if not self._key():
                    remote = [u for u in self.base_urls if not is_local_url(u)]
                    if remote:
                        raise EndpointError(
                            f"no API key for {remote[0]}: set ${self.api_key_env} (or name "
                            "another variable with --api-key-env); only local hosts may go "
                            "without one", "auth")
                if self.check_endpoints:
                    try:
                        await self._check_all(client)
                    finally:  # the caller may run this in a loop of its own: leave no
                        await client.aclose()  # connection bound to it; a new client
                        self._client = None  # is made for the requests
            except EndpointError as exc:
                self.fatal_error, self._fatal_kind = self._redact(str(exc)), exc.kind
                self._checked = True
                raise EndpointError(self.fatal_error, exc.kind) from None
            self._checked = True
            self._armed = True

    async def _check_all(self, client: Client) -> None:
        eps = self.pool.endpoints
        errors = await asyncio.gather(*(run_preflight(
            client, ep.url, self.model_id, self._headers(),
            min(PREFLIGHT_TIMEOUT_S, self.timeout_s), self.api_key_env) for ep in eps))
        failed = [(ep, err) for ep, err in zip(eps, errors, strict=True) if err is not None]
        if len(failed) == len(eps):
            first = failed[0][1]
            assert first is not None
            if len(eps) == 1:
                raise first
            raise EndpointError("no endpoint passed the pre-flight check: "
                                + "; ".join(str(e) for _, e in failed), first.kind)
        for ep, err in failed:
            self.pool.mark_down(ep, str(err))
            log.warning("endpoint left out for now: %s", self._redact(str(err)))

    # ------------------------------------------------------------------ requests
    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        if not self._checked:
            with contextlib.suppress(EndpointError):
                await self.preflight()
        if self.fatal_error is not None:
            return self._stopped(0)
        args = (self.model_id, messages, settings, self.cap, self.images, self.body_fields,
                self.limit_field)
        if self.images.all_cached(messages, self.cap):
            body, sizes = build_body(*args)
        else:  # decoding and PNG encoding: off the event loop
            body, sizes = await asyncio.to_thread(build_body, *args)
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        resp = await self._send(data, sizes)
        transforms = getattr(sizes, "transforms", None)
        if transforms:  # images re-encoded to fit --model-option max_request_mb
            resp.meta["image_transforms"] = transforms
        return resp

    def _stopped(self, attempts: int, sizes: list[list[int]] | None = None) -> Response:
        prefix = "circuit open: " if self._fatal_kind == "circuit_open" else "not sent: "
        return Response(text=None, error=prefix + (self.fatal_error or ""),
                        attempts=max(1, attempts),
                        meta={"sent_image_sizes": sizes or [], "failure": self._fatal_kind})

    async def _send(self, data: bytes, sizes: list[list[int]]) -> Response:
        client, _, tripped = self._loop_state()
        headers = self._headers()
        filter_retries = 1
        avoid: Endpoint | None = None
        attempt = 0
        while True:
            attempt += 1
            if self.fatal_error is not None:
                return self._stopped(attempt - 1, sizes)
            async with self.gate:
                if self.fatal_error is not None:  # opened while this one waited its turn
                    return self._stopped(attempt - 1, sizes)
                ep = self.pool.acquire(avoid)
                healthy: bool | None = None
                start = time.perf_counter()
                try:
                    r = await client.request("POST", f"{ep.url}/chat/completions", data,
                                             headers, self.timeout_s)
                    resp, kind, retry, wait, healthy = self._judge(r, ep, data, attempt, sizes,
                                                                   time.perf_counter() - start)
                except TransportError as exc:
                    kind = "timeout" if exc.kind == "timeout" else (
                        "unreachable" if exc.kind == "unreachable" else "connection")
                    resp = Response(text=None, error=f"{exc} ({ep.url})", attempts=attempt,
                                    meta={"sent_image_sizes": sizes, "failure": kind})
                    retry, wait, healthy = True, None, False
                finally:
                    self.pool.release(ep, healthy)
            if healthy:
                self.gate.completed(resp.latency_s)
                self._streak, self._armed = 0, True
            elif healthy is False:
                self._note_failure(resp.error or kind)
            if kind == "content_filter":
                retry, filter_retries = filter_retries > 0, filter_retries - 1
            if not retry or attempt > self.max_retries:
                if retry and attempt > 1:
                    resp.error = f"{resp.error} (after {attempt} attempts)"
                if resp.error:
                    resp.error = self._redact(resp.error)
                return resp
            avoid = ep if healthy is False else None
            if wait is None:
                if healthy is False and len(self.pool.endpoints) > 1:
                    wait = 0.0  # another endpoint takes it at once
                else:
                    cap = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
                    wait = random.uniform(0, cap)
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(tripped.wait(), wait)

    def _judge(self, r: HttpResult, ep: Endpoint, data: bytes, attempt: int,
               sizes: list[list[int]], latency: float
               ) -> tuple[Response, str, bool, float | None, bool | None]:
        """(response, failure kind or 'ok', retry?, wait s or None, endpoint healthy?)."""
        meta: dict[str, Any] = {"sent_image_sizes": sizes}
        if r.status == 200:
            resp, verdict = parse_completion(r.body, latency, attempt, sizes)
            if verdict == "malformed":
                return resp, verdict, True, None, False
            return resp, verdict, verdict == "content_filter", None, True
        text = snippet(r.body)
        status = r.status
        if status == 429:
            self.gate.overloaded()
            kind, retry, wait = "rate_limited", True, _retry_after(r.headers.get("retry-after"))
            error, healthy = f"HTTP 429: {text}", None
        elif status == 413:
            kind, retry, wait, healthy = "input_too_large", False, None, None
            error = f"HTTP 413: request of {len(data):,} bytes too large for {ep.url}: {text}"
        elif status in (401, 403):
            kind, retry, wait, healthy = "auth", False, None, None
            error = (f"HTTP {status}: {ep.url} refused the request (check "
                     f"${self.api_key_env}): {text}")
        elif status >= 500:
            kind, retry, wait, healthy = "server_error", True, None, False
            error = f"HTTP {status}: {text}"
        else:
            kind, retry, wait, healthy = "client_error", False, None, None
            hint = " (is the model name right?)" if status == 404 else ""
            error = f"HTTP {status}: {text}{hint}"
        meta["failure"] = kind
        return (Response(text=None, error=error, attempts=attempt, latency_s=latency, meta=meta),
                kind, retry, wait, healthy)

    def _note_failure(self, error: str) -> None:
        now = time.monotonic()
        if self._streak == 0:
            self._streak_start = now
        self._streak += 1
        if (self.breaker_n and self._armed and self.fatal_error is None
                and self._streak >= self.breaker_n
                and now - self._streak_start >= self.breaker_window_s):
            where = ", ".join(self.base_urls)
            self.fatal_error = self._redact(
                f"{self._streak} requests in a row failed over {now - self._streak_start:.1f} "
                f"s after the endpoint had worked ({where}); last error: {error}")
            self._fatal_kind = "circuit_open"
            log.error("circuit open: %s", self.fatal_error)
            if self._tripped is not None:
                self._tripped.set()
            if self._client is not None:
                self._client.abort()


def _number(value: str, key: str, zero_ok: bool = False) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{key} must be a number, got {value!r}") from None
    if number < 0 or (number == 0 and not zero_ok):
        raise ValueError(f"{key} must be {'>= 0' if zero_ok else '> 0'}, got {value!r}")
    return number


def _flag(value: str, key: str) -> bool:
    if value.lower() not in ("1", "0", "true", "false"):
        raise ValueError(f"{key} must be 1 or 0, got {value!r}")
    return value.lower() in ("1", "true")


OPTION_KEYS = {
    "max_concurrency": "parallel requests per endpoint when --concurrency is not given "
                       "(default 8)",
    "backoff_base_s": "first retry wait cap, s (default 1)",
    "backoff_max_s": "largest retry wait, s (default 60)",
    "circuit_breaker": "failed requests in a row that stop the run once the endpoint has "
                       "worked (default 8; 0 = never)",
    "circuit_window_s": "shortest time those failures must span, s (default 5)",
    "endpoint_failures": "failures in a row that take one of several endpoints out for a "
                         "cool-down (default 3)",
    "cooldown_s": "first cool-down of a failing endpoint, s, doubled on relapse (default 10)",
    "preflight": "1 (default): check key and GET /models before the first request; 0: skip",
    **BODY_OPTION_KEYS,
}

register_backend("openai", lambda rest, opts: OpenAICompatBackend(rest, opts),
                 "any OpenAI-compatible chat endpoint: openai:NAME --base-url URL "
                 "(repeatable: replicas are balanced; key from --api-key-env)",
                 option_keys=OPTION_KEYS)
