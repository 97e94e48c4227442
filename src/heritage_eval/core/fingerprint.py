"""The configuration fingerprint of a run: the options that can change a result, stored
in ``run.json`` so that a run folder holding another configuration is refused
(:mod:`heritage_eval.core.rundir`) and a re-run of the same one resumes.

Keys are the options' keywords (``max_tokens``, ``data`` …); paths are resolved;
:data:`NON_CONFIG_OPTIONS` (how a run proceeds: concurrency, cache, executor, limit …)
are left out, so a re-run with another ``--concurrency`` resumes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Options that change how a run proceeds, not what it computes.
NON_CONFIG_OPTIONS = frozenset({
    "out", "cache", "no_cache", "concurrency", "timeout", "retries", "resume", "overwrite",
    "verbose", "limit", "api_key_env", "judge_api_key_env", "embedder_api_key_env",
    "zip_password", "zip_password_env", "extract_to", "quiet", "command", "benchmark",
    "subcommand", "base_urls", "base_urls_file", "config", "warn_downscale",
    "executor", "ray_address", "ray_workers"})


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value.resolve())
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def config_of(values: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint of flat option ``values`` (keyword -> value): every option that can
    change a result, paths resolved, without :data:`NON_CONFIG_OPTIONS` and private
    ``_`` keys. ``base_url`` is fingerprinted by its first URL (the replicas of one model
    are interchangeable)."""
    out = {}
    for key, value in sorted(values.items()):
        if key in NON_CONFIG_OPTIONS or key.startswith("_"):
            continue
        if key == "base_url" and isinstance(value, list | tuple):
            value = value[0] if value else None
        out[key] = _jsonable(value)
    return out
