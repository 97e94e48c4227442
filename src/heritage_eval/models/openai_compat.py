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
  429 and 200 bodies that are not a completion, with exponential backoff and full jitter;
  a retry goes to another endpoint when there is one. A 429 whose ``Retry-After`` (or
  ``retry-after-ms``) states a wait blocks that endpoint for every worker until the wait
  has passed; a stated wait over ``max_retry_after_s`` (default 120 s) is not waited for:
  the request fails as ``rate_limited`` unless another endpoint can take it
  (:mod:`~heritage_eval.models.ratelimit`, ``docs/retries.md``).
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
- **Clock**: every wait and time reading goes through :attr:`OpenAICompatBackend.clock`
  (:class:`~heritage_eval.models.ratelimit.Clock`) and jitter through ``rng``; tests
  replace both.
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
from collections.abc import Callable
from typing import Any

from heritage_eval.core.images import SizeCap
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import BackendOptions, ModelBackend, register_backend
from heritage_eval.models.endpoints import (
    AdaptiveLimit,
    Endpoint,
    EndpointError,
    EndpointPool,
    endpoint_root,
    endpoint_url,
    is_local_url,
)
from heritage_eval.models.openai_body import ImageCache, body_options, build_body
from heritage_eval.models.openai_http import Client, TransportError, make_client
from heritage_eval.models.openai_options import OPTION_KEYS, send_options
from heritage_eval.models.openai_parse import redact
from heritage_eval.models.openai_preflight import run_preflight
from heritage_eval.models.openai_verdict import judge
from heritage_eval.models.ratelimit import Clock, backoff_s
from heritage_eval.models.ratelimit import retry_after as _retry_after

__all__ = ["OPTION_KEYS", "OpenAICompatBackend", "_retry_after"]

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
        opts = send_options(extra)
        self.backoff_base_s = opts.backoff_base_s
        self.backoff_max_s = opts.backoff_max_s
        #: Longest server-stated wait honoured, seconds; a longer one fails the request.
        self.max_retry_after_s = opts.max_retry_after_s
        self.breaker_n = opts.circuit_breaker
        self.breaker_window_s = opts.circuit_window_s
        self.check_endpoints = opts.preflight
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
        self.base_urls = [endpoint_root(u) for u in urls]  # the URL rule: endpoints.py
        self.base_url = self.base_urls[0]
        self.api_key_env = options.api_key_env
        self.cap: SizeCap = options.image_cap
        self.timeout_s = options.timeout_s
        self.max_retries = max(0, options.max_retries)
        concurrency = getattr(options, "concurrency", None) or opts.per_endpoint
        self.max_concurrency = concurrency * len(self.base_urls)
        # the run asked for `concurrency` per endpoint: the shared gate starts at all of it
        # (a 429 halves it; docs/retries.md §6)
        self.gate = AdaptiveLimit(initial=self.max_concurrency, maximum=self.max_concurrency)
        self.pool = EndpointPool(self.base_urls, opts.endpoint_failures, opts.cooldown_s)
        self._clock = Clock()
        #: Source of the backoff jitter (``uniform(a, b)``).
        self.rng: random.Random = random.Random()
        #: Makes the HTTP client (argument: connections allowed at once).
        self.client_factory: Callable[[int], Client] = make_client
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

    @property
    def clock(self) -> Clock:
        """Where every wait and time reading of the backend goes (pool and gate too)."""
        return self._clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self._clock = clock
        self.pool.monotonic = self.gate.monotonic = clock.monotonic

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
            self._client = self.client_factory(self.max_concurrency)
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
        """Send until an answer, a final failure or no retry left (``docs/retries.md``)."""
        client, _, tripped = self._loop_state()
        headers = self._headers()
        filter_retries = 1
        avoid: Endpoint | None = None
        attempt = 0  # requests sent
        last: Response | None = None
        while True:
            if self.fatal_error is not None:
                return self._stopped(attempt, sizes)
            blocked = self.pool.wait_s()  # every endpoint told to wait: the soonest's wait
            if blocked > self.max_retry_after_s:
                return self._too_long(last, attempt, blocked, sizes)
            if blocked > 0:
                await self._pause(blocked, tripped)
                continue
            async with self.gate:
                if self.fatal_error is not None:  # opened while this one waited its turn
                    return self._stopped(attempt, sizes)
                ep = self.pool.acquire(avoid)
                if ep is None:  # told to wait while this one waited its turn
                    continue
                attempt += 1
                healthy: bool | None = None
                start = self.clock.monotonic()
                try:
                    r = await client.request("POST", endpoint_url(ep.url, "/chat/completions"),
                                             data, headers, self.timeout_s)
                    resp, kind, retry, wait, healthy = judge(
                        r, ep.url, data, attempt, sizes, self.clock.monotonic() - start,
                        self.api_key_env, self.clock.wall())
                    if r.status == 429:
                        self.gate.overloaded()
                except TransportError as exc:
                    kind = "timeout" if exc.kind == "timeout" else (
                        "unreachable" if exc.kind == "unreachable" else "connection")
                    resp = Response(text=None, error=f"{exc} ({ep.url})", attempts=attempt,
                                    meta={"sent_image_sizes": sizes, "failure": kind})
                    retry, wait, healthy = True, None, False
                finally:
                    self.pool.release(ep, healthy)
            if wait is not None:  # the server said how long: nobody sends to it before
                self.pool.told_to_wait(ep, wait)
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
            last = resp
            avoid = ep if healthy is not True else None
            if wait is not None or (healthy is False and len(self.pool.endpoints) > 1):
                continue  # the pool holds the stated wait; another endpoint may go at once
            await self._pause(backoff_s(attempt, self.backoff_base_s, self.backoff_max_s,
                                        self.rng), tripped)

    async def _pause(self, seconds: float, tripped: asyncio.Event) -> None:
        """Sleep ``seconds`` on :attr:`clock`, cut short when the circuit opens."""
        if seconds <= 0 or tripped.is_set():
            return
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        trip = asyncio.ensure_future(tripped.wait())
        try:
            await asyncio.wait((sleeper, trip), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            trip.cancel()

    def _too_long(self, last: Response | None, attempt: int, wait_s: float,
                  sizes: list[list[int]]) -> Response:
        """The request ends as ``rate_limited``: every endpoint asked for a wait longer
        than :attr:`max_retry_after_s` (``wait_s``: the shortest of them)."""
        where = self.base_url if len(self.base_urls) == 1 else "every endpoint"
        why = (f"{where} asked to wait {wait_s:.0f} s more, longer than "
               f"max_retry_after_s={self.max_retry_after_s:g}")
        error = f"{last.error}; not retried: {why}" if last else f"not sent: {why}"
        meta: dict[str, Any] = dict(last.meta) if last else {"sent_image_sizes": sizes}
        meta["failure"] = "rate_limited"
        return Response(text=None, error=self._redact(error), attempts=max(1, attempt),
                        latency_s=last.latency_s if last else 0.0, meta=meta)

    def _note_failure(self, error: str) -> None:
        now = self.clock.monotonic()
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


register_backend("openai", lambda rest, opts: OpenAICompatBackend(rest, opts),
                 "any OpenAI-compatible chat endpoint: openai:NAME --base-url URL "
                 "(repeatable: replicas are balanced; key from --api-key-env)",
                 option_keys=OPTION_KEYS)
