"""What one HTTP reply of a chat-completions endpoint means for the ``openai`` backend:
an answer, a failure kind, whether to retry, the wait the server asked for, and whether
the endpoint looks healthy (the table is in ``docs/retries.md``)."""

from __future__ import annotations

from typing import Any, NamedTuple

from heritage_eval.core.types import Response
from heritage_eval.models.openai_http import HttpResult
from heritage_eval.models.openai_parse import parse_completion, snippet
from heritage_eval.models.ratelimit import server_wait


class Verdict(NamedTuple):
    """``response``; ``kind`` (``"ok"``, ``"length"``… from the parser, or a failure
    kind); ``retry``; ``wait`` (seconds the server asked for, not capped, or ``None``);
    ``healthy`` (True: a good answer, False: an endpoint failure, None: neither)."""

    response: Response
    kind: str
    retry: bool
    wait: float | None
    healthy: bool | None


def judge(r: HttpResult, url: str, data: bytes, attempt: int, sizes: list[list[int]],
          latency_s: float, key_env: str, now: float) -> Verdict:
    """The :class:`Verdict` on reply ``r`` from endpoint ``url`` to request body ``data``
    (attempt number ``attempt``, 1-based); ``now`` is the POSIX time an HTTP-date in
    ``Retry-After`` is measured from. ``Retry-After`` is read on 429 and 503 only
    (RFC 9110 §10.2.3 gives it a meaning there)."""
    if r.status == 200:
        resp, verdict = parse_completion(r.body, latency_s, attempt, sizes)
        if verdict == "malformed":
            return Verdict(resp, verdict, True, None, False)
        return Verdict(resp, verdict, verdict == "content_filter", None, True)
    text = snippet(r.body)
    status = r.status
    wait = server_wait(r.headers, now) if status in (429, 503) else None
    healthy: bool | None = None
    if status == 429:
        kind, retry, error = "rate_limited", True, f"HTTP 429: {text}"
    elif status == 413:
        kind, retry = "input_too_large", False
        error = f"HTTP 413: request of {len(data):,} bytes too large for {url}: {text}"
    elif status in (401, 403):
        kind, retry = "auth", False
        error = f"HTTP {status}: {url} refused the request (check ${key_env}): {text}"
    elif status >= 500:
        kind, retry, healthy, error = "server_error", True, False, f"HTTP {status}: {text}"
    else:
        kind, retry = "client_error", False
        hint = " (is the model name right?)" if status == 404 else ""
        error = f"HTTP {status}: {text}{hint}"
    meta: dict[str, Any] = {"sent_image_sizes": sizes, "failure": kind}
    return Verdict(Response(text=None, error=error, attempts=attempt, latency_s=latency_s,
                            meta=meta), kind, retry, wait, healthy)
