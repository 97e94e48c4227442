"""Several endpoints behind one backend: options, balancing, cool-down, adaptive concurrency.

- :class:`EndpointOptions`: :class:`~heritage_eval.models.base.BackendOptions` plus the list
  of endpoint URLs and the run's ``--concurrency`` (every other backend ignores both).
- :class:`EndpointPool`: least-outstanding-requests balancing; an endpoint that fails
  ``max_failures`` attempts in a row is taken out for a cool-down (doubling on each
  relapse, at most :data:`MAX_COOLDOWN_S`) and its requests go to the others; an
  endpoint that said "wait" (429 with ``Retry-After``) gets no request until the wait
  has passed (:meth:`EndpointPool.told_to_wait`).
- :class:`AdaptiveLimit`: an AIMD gate (as lmms-eval and Inspect AI do) that the backend
  holds around every HTTP attempt; halved on 429 or when latency doubles, +1 per
  ``limit`` healthy completions (one per round of requests), always within
  ``[1, maximum]``.

Both read time from a ``monotonic`` attribute (default :func:`time.monotonic`) that tests
replace with a fake clock. The rule is written out in ``docs/retries.md``.
- :class:`EndpointError`: a setup the pre-flight check refuses (message says why).
- :func:`endpoint_root`: the one rule for an endpoint URL (``--base-url``, a line of
  ``--base-urls-file``, ``$OPENAI_BASE_URL``, a suite file's ``base_url``).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from heritage_eval.core.endpoint_urls import (  # noqa: F401  (re-exported)
    EndpointError,
    EndpointOptions,
    endpoint_root,
    endpoint_url,
    is_local_url,
    read_urls_file,
    without_userinfo,
)

if TYPE_CHECKING:  # asyncio is imported when a gate is used: the CLI starts faster
    import asyncio

#: Longest cool-down of an endpoint taken out of rotation, seconds.
MAX_COOLDOWN_S = 300.0


class Endpoint:
    """One endpoint root and its health: requests ``outstanding`` now, attempts failed in
    a row (``failures``), ``down_until`` (monotonic seconds; 0 = in rotation),
    ``blocked_until`` (monotonic seconds before which nothing may be sent: the server said
    to wait), ``answered`` (successful completions)."""

    def __init__(self, url: str) -> None:
        self.url = url if "?" in url else url.rstrip("/")
        self.outstanding = 0
        self.failures = 0
        self.down_until = 0.0
        self.blocked_until = 0.0
        self.cooldown_s = 0.0
        self.answered = 0
        self.last_error = ""


class EndpointPool:
    """Chooses an endpoint per attempt and tracks health.

    ``max_failures`` (>= 1): attempts failed in a row that take an endpoint out;
    ``cooldown_s`` (> 0): first cool-down, seconds, doubled on each relapse.
    ``monotonic``: the clock (seconds), replaceable for tests.
    """

    def __init__(self, urls: list[str], max_failures: int = 3, cooldown_s: float = 10.0) -> None:
        if not urls:
            raise ValueError("no endpoint URL")
        self.endpoints = [Endpoint(u) for u in urls]
        self.max_failures = max(1, max_failures)
        self.base_cooldown_s = cooldown_s
        self.monotonic: Callable[[], float] = time.monotonic
        self._next = 0

    def acquire(self, avoid: Endpoint | None = None) -> Endpoint | None:
        """The in-rotation endpoint with the fewest outstanding requests (ties rotate;
        ``avoid`` — the one that just failed — is taken only when nothing else is up).
        When every endpoint is cooling down, the one back soonest is used: its failures
        then feed the circuit breaker. An endpoint told to wait is never chosen: ``None``
        when every endpoint is (see :meth:`wait_s`). Counts the request as outstanding
        until :meth:`release`."""
        now = self.monotonic()
        n = len(self.endpoints)
        best: Endpoint | None = None
        free = [ep for ep in self.endpoints if ep.blocked_until <= now]
        if not free:
            return None
        for i in range(n):
            ep = self.endpoints[(self._next + i) % n]
            if ep.blocked_until > now or ep.down_until > now or (ep is avoid and len(free) > 1):
                continue
            if best is None or ep.outstanding < best.outstanding:
                best = ep
        if best is None:
            up = [ep for ep in free if ep.down_until <= now]
            best = up[0] if up else min(free, key=lambda e: e.down_until)
        self._next = (self._next + 1) % n
        best.outstanding += 1
        return best

    def release(self, ep: Endpoint, ok: bool | None, error: str = "") -> None:
        """End a request on ``ep``: ``ok`` True (healthy answer), False (an endpoint
        failure: timeout, refused, 5xx, malformed body) or None (neither: 4xx, 429)."""
        ep.outstanding -= 1
        if ok:
            ep.failures = 0
            ep.cooldown_s = 0.0
            ep.answered += 1
        elif ok is False:
            ep.failures += 1
            ep.last_error = error
            if ep.failures >= self.max_failures and len(self.endpoints) > 1:
                ep.cooldown_s = min(MAX_COOLDOWN_S, ep.cooldown_s * 2 or self.base_cooldown_s)
                ep.down_until = self.monotonic() + ep.cooldown_s
                ep.failures = 0

    def mark_down(self, ep: Endpoint, reason: str) -> None:
        """Take ``ep`` out for a cool-down now (e.g. it failed the pre-flight check)."""
        ep.last_error = reason
        ep.cooldown_s = min(MAX_COOLDOWN_S, ep.cooldown_s * 2 or self.base_cooldown_s)
        ep.down_until = self.monotonic() + ep.cooldown_s

    def told_to_wait(self, ep: Endpoint, seconds: float) -> None:
        """``ep`` asked for ``seconds`` (>= 0, may be ``inf``) without requests, from now:
        nothing is sent to it before then (a later, shorter wait never shortens it)."""
        ep.blocked_until = max(ep.blocked_until, self.monotonic() + seconds)

    def wait_s(self) -> float:
        """Seconds until some endpoint may be sent to: 0.0 when one may now, else the
        time until the earliest stated wait ends (``inf`` if that wait is endless)."""
        now = self.monotonic()
        soonest = min(ep.blocked_until for ep in self.endpoints)
        return max(0.0, soonest - now)


class AdaptiveLimit:
    """An AIMD concurrency gate: ``async with limit:`` around each attempt.

    The limit starts at ``initial`` and stays in ``[1, maximum]``. :meth:`overloaded`
    (a 429) and a smoothed latency above ``latency_factor`` x the lowest seen halve it, at
    most once per smoothed latency (one round trip; 0.1 s before any latency is known);
    healthy completions (:meth:`completed`) add one per ``limit`` of them, i.e. about one
    per round of requests (additive increase as in TCP congestion avoidance), so a halved
    limit comes back over several rounds, not one. Waiters are served first come, first
    served. ``monotonic``: the clock (seconds), replaceable for tests.
    """

    def __init__(self, initial: int, maximum: int, latency_factor: float = 2.0) -> None:
        self.maximum = max(1, maximum)
        self.limit = min(self.maximum, max(1, initial))
        self.in_flight = 0
        self.latency_factor = latency_factor
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._ewma_s: float | None = None
        self._floor_s: float | None = None
        self._last_cut = -float("inf")
        self._credit = 0
        self.cuts = 0
        self.monotonic: Callable[[], float] = time.monotonic

    async def __aenter__(self) -> None:
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return
        import asyncio

        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self._release()  # the slot was handed over: pass it on
            else:
                self._waiters.remove(fut)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def completed(self, latency_s: float) -> None:
        """A healthy completion that took ``latency_s`` seconds: count towards growth (+1
        after ``limit`` of them), or cut when the smoothed latency has risen
        ``latency_factor``-fold above the lowest seen."""
        self._floor_s = latency_s if self._floor_s is None else min(self._floor_s, latency_s)
        self._ewma_s = latency_s if self._ewma_s is None else 0.9 * self._ewma_s + 0.1 * latency_s
        if self._ewma_s > self.latency_factor * self._floor_s + 0.05:
            if self._cut():
                self._floor_s = None  # re-learn the floor at the new level
                self._ewma_s = None
            return
        self._credit += 1
        if self._credit >= self.limit and self.limit < self.maximum:
            self.limit += 1
            self._credit = 0
            self._wake()

    def overloaded(self) -> None:
        """The server said 429 (too many requests): halve the limit (once per round trip)."""
        self._cut()

    def _cut(self) -> bool:
        now = self.monotonic()
        if now - self._last_cut < (self._ewma_s or 0.1):
            return False
        self._last_cut = now
        self._credit = 0
        self.limit = max(1, self.limit // 2)
        self.cuts += 1
        return True
