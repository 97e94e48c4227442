"""Reading a chat-completions reply honestly: answers, reasoning, and every kind of failure.

:func:`parse_completion` turns a 200 body into a :class:`~heritage_eval.core.types.Response`
and a *verdict*:

- ``"ok"``: an answer (``finish_reason`` kept, ``"length"`` included: it is an answer);
- ``"malformed"``: not a usable completion (bad JSON, HTML, no ``choices``, no
  ``message``): retried like a 5xx; the error starts ``malformed body:``;
- ``"content_filter"``: ``choices: []`` with ``prompt_filter_results`` or
  ``finish_reason: "content_filter"``: retried once, never cached;
- ``"reasoning_only"``: reasoning text but no final content;
- ``"truncated_no_answer"``: no final content and ``finish_reason: "length"`` (the token
  budget ran out before any answer, reasoning or not);
- ``"empty_answer"``: ``content`` null, empty or white space only, without reasoning;
- ``"refused"``: a ``message.refusal`` and no content.

All but ``"malformed"`` are the model's failures: never cached, and scored by the
``--model-failures`` policy of :mod:`heritage_eval.benchmarks.outcomes` (a wrong answer by
default).

Reasoning (``message.reasoning_content`` / ``message.reasoning``, a leading
``<think>…</think>`` block, or text before a lone ``</think>`` when the template opened the
block) goes to ``meta["reasoning"]``, never into ``text``. Failures set
``meta["failure"]`` to their kind. :func:`redact` removes keys from any text shown.
"""

from __future__ import annotations

import json
import re
from typing import Any

from heritage_eval.core.types import Response, Usage
from heritage_eval.core.unicode_text import replace_lone_surrogates

#: Characters of a server's body quoted in an error message.
SNIPPET_CHARS = 300

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_AUTH_RE = re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(bearer\s+)?[^\s\"',;}]+")
_BEARER_RE = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{4,}")
_SK_RE = re.compile(r"\bsk-[A-Za-z0-9_-]{6,}")


def redact(text: str, secrets: list[str]) -> str:
    """``text`` without any of ``secrets`` (values of 4+ characters), ``Authorization``
    header values, ``Bearer`` tokens or ``sk-…`` keys."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    text = _AUTH_RE.sub(lambda m: m.group(1) + "[redacted]", text)
    text = _BEARER_RE.sub("Bearer [redacted]", text)
    return _SK_RE.sub("sk-[redacted]", text)


def snippet(body: bytes | str, limit: int = SNIPPET_CHARS) -> str:
    """The start of a body for an error message, whitespace collapsed."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def split_reasoning(content: str) -> tuple[str, str | None]:
    """``(answer, reasoning)`` of a content string with ``<think>`` blocks.

    A leading ``<think>…</think>`` block is reasoning; an unclosed leading ``<think>`` makes
    everything reasoning (cut off while thinking); text before a lone ``</think>`` (the chat
    template opened the block) is reasoning. Anything else is answer."""
    stripped = content.lstrip()
    if stripped.startswith(_THINK_OPEN):
        inner = stripped[len(_THINK_OPEN):]
        end = inner.find(_THINK_CLOSE)
        if end < 0:
            return "", inner.strip()
        return inner[end + len(_THINK_CLOSE):].strip(), inner[:end].strip()
    end = content.find(_THINK_CLOSE)
    if end >= 0 and _THINK_OPEN not in content[:end]:
        return content[end + len(_THINK_CLOSE):].strip(), content[:end].strip()
    return content, None


def _content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # some servers return content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def parse_completion(raw: bytes, latency_s: float, attempts: int, sizes: list[list[int]]
                     ) -> tuple[Response, str]:
    """``(response, verdict)`` of a 200 body (verdicts in the module docstring). The
    response of a failure has ``text=None``, ``error`` and ``meta["failure"]`` set."""
    meta: dict[str, Any] = {"sent_image_sizes": sizes}

    def fail(verdict: str, error: str) -> tuple[Response, str]:
        meta["failure"] = verdict
        return Response(text=None, error=error, latency_s=latency_s, attempts=attempts,
                        meta=meta), verdict

    try:
        data = json.loads(raw)
    except ValueError:
        kind = "HTML page" if raw.lstrip()[:1] == b"<" else "not JSON"
        return fail("malformed", f"malformed body: {kind}: {snippet(raw)!r}")
    if not isinstance(data, dict):
        return fail("malformed", f"malformed body: not a JSON object: {snippet(raw)!r}")
    choices = data.get("choices")
    if choices == [] and data.get("prompt_filter_results"):
        return fail("content_filter", f"content filter: the prompt was filtered: {snippet(raw)}")
    if not isinstance(choices, list) or not choices:
        what = "empty 'choices'" if choices == [] else "no 'choices'"
        return fail("malformed", f"malformed body: {what}: {snippet(raw)}")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return fail("malformed", f"malformed body: no 'message' in the first choice: "
                                 f"{snippet(raw)}")
    finish = choice.get("finish_reason")
    meta["finish_reason"] = finish
    usage_raw = data.get("usage")
    usage: dict[str, Any] = usage_raw if isinstance(usage_raw, dict) else {}
    details = usage.get("completion_tokens_details")
    if isinstance(details, dict) and details.get("reasoning_tokens") is not None:
        meta["reasoning_tokens"] = details["reasoning_tokens"]
    content = _content_text(message.get("content"))
    if content:  # a lone surrogate escape cannot be cached or written: one U+FFFD for it
        content = replace_lone_surrogates(content)
    reasoning_parts = [str(message[k]) for k in ("reasoning_content", "reasoning")
                       if isinstance(message.get(k), str) and message[k].strip()]
    if content:
        content, think = split_reasoning(content)
        if think:
            reasoning_parts.append(think)
    reasoning = "\n\n".join(dict.fromkeys(reasoning_parts)) or None
    if reasoning:
        meta["reasoning"] = reasoning = replace_lone_surrogates(reasoning)
    if finish == "content_filter":
        return fail("content_filter", f"content filter: finish_reason content_filter: "
                                      f"{snippet(raw)}")
    refusal = message.get("refusal")
    if not content and isinstance(refusal, str) and refusal.strip():
        return fail("refused", f"refused: {snippet(refusal)}")
    if not (content or "").strip():
        if finish == "length":
            what = "reasoning only" if reasoning else "no content"
            return fail("truncated_no_answer", f"no final answer: stopped at the max-tokens "
                                               f"limit ({what})")
        if reasoning:
            return fail("reasoning_only", "reasoning only: no final answer")
        return fail("empty_answer", "empty answer")  # content null, empty or blank
    return Response(text=content if content is not None else "", latency_s=latency_s,
                    attempts=attempts, meta=meta,
                    usage=Usage(prompt_tokens=_int(usage.get("prompt_tokens")),
                                completion_tokens=_int(usage.get("completion_tokens")))), "ok"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
