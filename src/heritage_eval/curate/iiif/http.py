"""HTTP GET with retries for the IIIF ingester (httpx, synchronous).

Retried: HTTP 429 and 5xx, connection errors and timeouts, up to ``retries`` more times,
waiting ``backoff * 2**attempt`` seconds, or the server's ``Retry-After`` (seconds or an
HTTP-date, every form the model backend reads: :func:`heritage_eval.models.ratelimit.
retry_after`, docs/retries.md) capped at :data:`MAX_RETRY_AFTER_S`. Other statuses (404,
403…) fail at once.

Bodies are streamed and counted (``client.stream``): a body over the ``max_http_body``
cap (``docs/limits.md``; a ``Content-Length`` over it is refused before the body is read)
fails at once with a reason naming the cap, having held at most the cap plus one chunk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

from heritage_eval.core.sizecap import MAX_HTTP_BODY, CapExceeded, human
from heritage_eval.models.ratelimit import retry_after

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
#: Longest wait taken from a ``Retry-After`` header, seconds.
MAX_RETRY_AFTER_S = 60.0


class FetchError(Exception):
    """A request that failed for good; ``reason`` is short and human-readable
    (``"HTTP 404"``, ``"timeout after 5s"``)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True)
class Fetched:
    """A successful response: final ``url``, ``content`` bytes and ``content_type``."""

    url: str
    content: bytes
    content_type: str


def _wait(response: httpx.Response | None, attempt: int, backoff: float) -> float:
    """Seconds before the next try: the largest readable ``Retry-After`` of ``response``
    (capped at :data:`MAX_RETRY_AFTER_S`), else ``backoff * 2**attempt``. Never raises."""
    lines = response.headers.get_list("retry-after") if response is not None else []
    waits = [w for line in lines if (w := retry_after(line)) is not None]
    if waits:
        return min(MAX_RETRY_AFTER_S, max(waits))
    return backoff * (2 ** attempt)


def read_body(response: httpx.Response, limit: int | None = None) -> bytes:
    """The body of the streamed ``response``, counted as it arrives; raises
    :class:`~heritage_eval.core.sizecap.CapExceeded` (naming the ``max_http_body`` cap,
    ``limit`` by default its value) as soon as more arrives, or at once when the
    ``Content-Length`` header declares more."""
    top = MAX_HTTP_BODY.value() if limit is None else limit
    where = f"{response.url}"
    declared = response.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > top:
        raise MAX_HTTP_BODY.exceeded(where, "response body",
                                     f"Content-Length {human(int(declared))}", top)
    chunks: list[bytes] = []
    done = 0
    for chunk in response.iter_bytes():
        done += len(chunk)
        if done > top:
            raise MAX_HTTP_BODY.exceeded(where, "response body",
                                         f"more than {human(top)} received", top)
        chunks.append(chunk)
    return b"".join(chunks)


def get(client: httpx.Client, url: str, timeout: float, retries: int = 3,
        backoff: float = 1.0, max_body: int | None = None) -> Fetched:
    """GET ``url`` (redirects followed) with retries; raises :class:`FetchError` with
    the status or the kind of failure once no retry is left, or at once for a body over
    the ``max_http_body`` cap (``max_body`` bytes, default the cap's value; never
    retried: the server would send it again)."""
    reason = ""
    for attempt in range(retries + 1):
        response: httpx.Response | None = None
        try:
            with client.stream("GET", url, timeout=timeout, follow_redirects=True) as response:
                if response.status_code < 400:
                    return Fetched(str(response.url), read_body(response, max_body),
                                   response.headers.get("content-type", ""))
            reason = f"HTTP {response.status_code}"
            if response.status_code not in RETRY_STATUS:
                raise FetchError(url, reason)
        except CapExceeded as exc:
            raise FetchError(url, exc.reason) from None
        except httpx.TimeoutException:
            reason = f"timeout after {timeout:g}s"
        except httpx.HTTPError as exc:
            reason = f"connection failed ({type(exc).__name__}: {exc})"
        if attempt < retries:
            time.sleep(_wait(response, attempt, backoff))
    raise FetchError(url, reason + (f" (after {retries} retries)" if retries else ""))
