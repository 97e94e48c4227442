"""Send each distinct request once while it is in flight (the runner's single flight).

Rule (issue 22 item 6): requests with the same cache key that are in flight at once are
sent once, and every asker gets the answer.

- Same process: the first asker registers a future for ``(cache file, key)``; a second
  asker (another conversation of the run, or of another run on another event loop or
  thread of this process) awaits it and takes the answer, marked ``cached=True`` as a
  cache hit would be. If the first asker's request failed or was cancelled, the waiters
  start over (one of them sends), as failures are never cached.
- Across processes sharing the cache file: the sender claims the key in the cache
  (:mod:`.cache_claims`); another process seeing a fresh claim polls for the answer and
  takes it from the cache, or sends itself once the claim ends unanswered or goes stale.

The answer is stored (:meth:`~.cache.ResponseCache.put`) before the waiters are told, so
an asker arriving just after the first finished finds it in the cache.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

from heritage_eval.core import cache_claims
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.types import Response

#: Requests in flight in this process, by (resolved cache path, key).
_FLIGHTS: dict[tuple[Path, str], concurrent.futures.Future[Response]] = {}
_FLIGHTS_LOCK = threading.Lock()


async def send_once(cache: ResponseCache, key: str, model: str,
                    send: Callable[[], Awaitable[Response]]) -> Response:
    """The answer to the request with cache key ``key``: from the cache, from an
    identical request already in flight (this process or another sharing the cache),
    or from ``send()`` — whose successful answer is stored under ``model`` (the backend
    spec). Exceptions of ``send()`` propagate (the waiters then try on their own)."""
    ident = (cache.resolved, key)
    while True:
        hit = cache.get(key)
        if hit is not None:
            return hit
        with _FLIGHTS_LOCK:
            flight = _FLIGHTS.get(ident)
            mine = flight is None
            if flight is None:
                flight = _FLIGHTS[ident] = concurrent.futures.Future()
        if not mine:
            try:  # (shield: a cancelled waiter must not cancel the sender's future)
                resp = await asyncio.shield(asyncio.wrap_future(flight))
            except (asyncio.CancelledError, concurrent.futures.CancelledError):
                if flight.cancelled():
                    continue  # the sender was cancelled: start over
                raise  # this waiter itself was cancelled
            if resp.ok:
                return resp.model_copy(update={"cached": True})
            continue  # the sender failed: start over (one waiter sends)
        try:
            resp = await _send_claimed(cache, key, model, send)
        except BaseException:
            flight.cancel()
            raise
        else:
            flight.set_result(resp)
            return resp
        finally:
            with _FLIGHTS_LOCK:
                if _FLIGHTS.get(ident) is flight:
                    del _FLIGHTS[ident]


async def _claim(cache: ResponseCache, key: str) -> cache_claims.ClaimResult:
    """Claim ``key`` on the event loop when the write lock is free (~20 µs), else in a
    worker thread (the lock may be held for a while by another process)."""
    result = cache.claims.claim_nowait(key)
    if result is None:
        result = await asyncio.to_thread(cache.claims.claim, key)
    return result


async def _send_claimed(cache: ResponseCache, key: str, model: str,
                        send: Callable[[], Awaitable[Response]]) -> Response:
    """Claim ``key`` across processes, waiting while another process holds a fresh claim;
    send and store the answer, or return the one another process stored."""
    claim = await _claim(cache, key)
    delay = cache_claims.POLL_MIN_S
    while claim.state == "theirs":
        await asyncio.sleep(delay)
        delay = min(2 * delay, cache_claims.POLL_MAX_S)
        hit = cache.get(key)
        if hit is not None:
            return hit
        if not cache.claims.held_by_other(key):
            claim = await _claim(cache, key)
    if claim.state == "stored":
        resp = Response.model_validate_json(claim.data or "{}")
        resp.cached = True
        return resp
    try:
        resp = await send()
        if resp.ok:
            cache.put(key, model, resp)  # the writer deletes the claim with the answer
            cache.claims.answered(key)
            return resp
    except BaseException:
        cache.claims.release(key)
        raise
    cache.claims.release(key)
    return resp
