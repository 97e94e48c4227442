"""The ``--model-option`` keys of the ``openai`` backend that shape sending: concurrency,
retries and waits, circuit breaker, endpoint cool-down, pre-flight (request-body keys are
in :mod:`~heritage_eval.models.openai_body`). See ``docs/retries.md`` for the rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from heritage_eval.models.openai_body import BODY_OPTION_KEYS
from heritage_eval.models.ratelimit import MAX_RETRY_AFTER_S


@dataclass(frozen=True)
class SendOptions:
    """Parsed sending options (seconds unless named otherwise)."""

    per_endpoint: int = 8
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_retry_after_s: float = MAX_RETRY_AFTER_S
    circuit_breaker: int = 8
    circuit_window_s: float = 5.0
    endpoint_failures: int = 3
    cooldown_s: float = 10.0
    preflight: bool = True


def send_options(extra: Mapping[str, str]) -> SendOptions:
    """:class:`SendOptions` from ``--model-option`` strings; a missing key keeps its
    default. Raises ``ValueError`` naming the key for a non-number, a negative, or a zero
    where zero means nothing."""
    d = SendOptions()

    def get(key: str, default: float, zero_ok: bool = False) -> float:
        return number(extra[key], key, zero_ok) if key in extra else default

    return SendOptions(
        per_endpoint=int(get("max_concurrency", d.per_endpoint)),
        backoff_base_s=get("backoff_base_s", d.backoff_base_s),
        backoff_max_s=get("backoff_max_s", d.backoff_max_s),
        max_retry_after_s=get("max_retry_after_s", d.max_retry_after_s, zero_ok=True),
        circuit_breaker=int(get("circuit_breaker", d.circuit_breaker, zero_ok=True)),
        circuit_window_s=get("circuit_window_s", d.circuit_window_s, zero_ok=True),
        endpoint_failures=int(get("endpoint_failures", d.endpoint_failures)),
        cooldown_s=get("cooldown_s", d.cooldown_s),
        preflight=flag(extra.get("preflight", "1"), "preflight"))


def number(value: str, key: str, zero_ok: bool = False) -> float:
    """``value`` as a finite number >= 0 (> 0 unless ``zero_ok``); ``ValueError`` else."""
    try:
        result = float(value)
    except ValueError:
        raise ValueError(f"{key} must be a number, got {value!r}") from None
    if not result < float("inf") or result < 0 or (result == 0 and not zero_ok):
        raise ValueError(f"{key} must be {'>= 0' if zero_ok else '> 0'}, got {value!r}")
    return result


def flag(value: str, key: str) -> bool:
    """``"1"``/``"true"`` or ``"0"``/``"false"`` (any case); ``ValueError`` else."""
    if value.lower() not in ("1", "0", "true", "false"):
        raise ValueError(f"{key} must be 1 or 0, got {value!r}")
    return value.lower() in ("1", "true")


OPTION_KEYS = {
    "max_concurrency": "parallel requests per endpoint when --concurrency is not given "
                       "(default 8)",
    "backoff_base_s": "first retry wait cap, s (default 1)",
    "backoff_max_s": "largest retry wait, s (default 60)",
    "max_retry_after_s": "longest wait accepted from a server's Retry-After, s; a longer "
                         "one fails the request instead (default 120)",
    "circuit_breaker": "failed requests in a row that stop the run once the endpoint has "
                       "worked (default 8; 0 = never)",
    "circuit_window_s": "shortest time those failures must span, s (default 5)",
    "endpoint_failures": "failures in a row that take one of several endpoints out for a "
                         "cool-down (default 3)",
    "cooldown_s": "first cool-down of a failing endpoint, s, doubled on relapse (default 10)",
    "preflight": "1 (default): check key and GET /models before the first request; 0: skip",
    **BODY_OPTION_KEYS,
}
