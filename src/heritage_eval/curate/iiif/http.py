"""HTTP GET with retries for the IIIF ingester (httpx, synchronous).

Retried: HTTP 429 and 5xx, connection errors and timeouts, up to ``retries`` more times,
waiting ``backoff * 2**attempt`` seconds (or the server's ``Retry-After`` in seconds,
capped at 60). Other statuses (404, 403…) fail at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


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
    header = response.headers.get("retry-after") if response is not None else None
    if header and header.strip().isdigit():
        return min(60.0, float(header.strip()))
    return backoff * (2 ** attempt)


def get(client: httpx.Client, url: str, timeout: float, retries: int = 3,
        backoff: float = 1.0) -> Fetched:
    """GET ``url`` (redirects followed) with retries; raises :class:`FetchError` with
    the status or the kind of failure once no retry is left."""
    reason = ""
    for attempt in range(retries + 1):
        response: httpx.Response | None = None
        try:
            response = client.get(url, timeout=timeout, follow_redirects=True)
        except httpx.TimeoutException:
            reason = f"timeout after {timeout:g}s"
        except httpx.HTTPError as exc:
            reason = f"connection failed ({type(exc).__name__}: {exc})"
        else:
            if response.status_code < 400:
                return Fetched(str(response.url), response.content,
                               response.headers.get("content-type", ""))
            reason = f"HTTP {response.status_code}"
            if response.status_code not in RETRY_STATUS:
                raise FetchError(url, reason)
        if attempt < retries:
            time.sleep(_wait(response, attempt, backoff))
    raise FetchError(url, reason + (f" (after {retries} retries)" if retries else ""))
