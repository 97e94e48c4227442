"""The parts of a run made from its typed configuration: the model backend, the response
cache, the executor and the model's provenance fields.

Each takes the configuration sections it needs (:mod:`heritage_eval.core.config`) and
nothing else, so the engine, the Ray workers and the Python API make them alike.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.core.backends import ModelBackend, ModelSpecError, create_backend
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.config import (
    ExecutorConfig,
    ModelConfig,
    OutputConfig,
    cache_problem,
)
from heritage_eval.core.endpoint_urls import EndpointOptions, endpoint_root, read_urls_file
from heritage_eval.core.store import RunFolder
from heritage_eval.core.types import GenerationSettings

if TYPE_CHECKING:
    from heritage_eval.core.executors import Executor


def endpoint_urls(model: ModelConfig) -> list[str]:
    """Every endpoint URL of ``base_url`` (in order) then ``base_urls_file``, each as
    :func:`~heritage_eval.core.endpoint_urls.endpoint_root` makes it; duplicates dropped.
    Raises :class:`~heritage_eval.core.backends.ModelSpecError` for an unreadable or bad
    file or a URL the rule refuses."""
    urls = list(model.base_url)
    if model.base_urls_file is not None:
        try:
            urls += read_urls_file(model.base_urls_file)
        except (OSError, ValueError) as exc:
            raise ModelSpecError(f"--base-urls-file: {exc}") from exc
    return list(dict.fromkeys(endpoint_root(u) for u in urls))


def backend_from_config(model: ModelConfig) -> ModelBackend:
    """The backend named by ``model.model`` with the shared options (every endpoint URL,
    the run's concurrency, image cap, timeout, retries, ``--model-option`` pairs).
    Raises ``ModelSpecError`` (a usage error) for an unknown or refused spec."""
    if not model.model:
        raise ModelSpecError("no model given (--model / model=)")
    urls = endpoint_urls(model)
    opts = EndpointOptions(
        base_url=urls[0] if urls else None, base_urls=tuple(urls),
        concurrency=model.concurrency, api_key_env=model.api_key_env,
        image_cap=model.image_cap, timeout_s=model.timeout, max_retries=model.retries,
        extra=model.options_dict())
    return create_backend(model.model, opts)


def cache_from_config(output: OutputConfig, run: RunFolder) -> ResponseCache | None:
    """The response cache of a run (``None`` with ``no_cache``): ``cache`` or the run
    folder's. Raises :class:`~heritage_eval.core.benchmark.UsageError` when ``cache``
    cannot be a cache file (:func:`cache_problem`) or the file is not an SQLite
    database (random bytes, another program's file: SQLite says "file is not a
    database")."""
    if output.no_cache:
        return None
    from heritage_eval.core.benchmark import UsageError

    if output.cache is not None and (problem := cache_problem(Path(output.cache))):
        raise UsageError(f"--cache {problem}")
    path = output.cache or run.cache_path
    try:
        return ResponseCache(path)
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--cache {path}: cannot be used as the response cache ({exc}); "
                         "give another path, or remove the file") from None


def has_cache(output: OutputConfig) -> bool:
    """Whether the run's cache file already exists (a resumed run)."""
    if output.no_cache or output.out is None:
        return False
    return Path(output.cache or Path(output.out) / "cache.sqlite").is_file()


def portable_model(model: ModelConfig) -> ModelConfig:
    """``model`` as a Ray node must read it, whatever its working folder: the URLs of
    ``base_urls_file`` read here (into ``base_url``, in :func:`endpoint_urls` order) and a
    relative ``hf:PATH`` that exists here made absolute (joined to this process's working
    folder). The backend it makes has the same identity (URLs and weights unchanged).
    Raises ``ModelSpecError`` for an unreadable ``base_urls_file``."""
    update: dict[str, Any] = {}
    if model.base_urls_file is not None:
        update |= {"base_url": tuple(endpoint_urls(model)), "base_urls_file": None}
    prefix, sep, path = (model.model or "").partition(":")
    if prefix == "hf" and sep and path and not os.path.isabs(os.path.expanduser(path)) \
            and os.path.exists(path):
        update["model"] = f"hf:{os.path.join(os.getcwd(), path)}"
    return model.model_copy(update=update) if update else model


def executor_from_config(executor: ExecutorConfig, model: ModelConfig) -> Executor | None:
    """The executor named by ``executor.executor`` (``None``: the default local one).

    For ``ray`` each worker makes its backend from ``model`` (a picklable configuration,
    :func:`portable_model`) by :func:`backend_from_config`; the cluster is
    ``ray_address``, else ``$RAY_ADDRESS``, else a local one, and a named cluster is
    joined here. Raises ``ExecutorError`` when Ray is requested but not installed, a
    ``ray://`` address lacks the Ray Client, or the cluster does not answer within a few
    seconds, refuses the token or runs another Ray version (before anything is written
    or sent)."""
    if executor.executor == "local":
        return None
    from heritage_eval.core.executors import ExecutorError

    if importlib.util.find_spec("ray") is None:
        raise ExecutorError("--executor ray needs Ray: pip install 'heritage-eval[ray]' "
                            "(or pip install ray)")
    from heritage_eval.core.executors.ray_executor import RayExecutor, RayOptions

    ray = RayExecutor(RayOptions(address=executor.ray_address, workers=executor.ray_workers),
                      functools.partial(backend_from_config, portable_model(model)))
    ray.preflight()  # a cluster that cannot be joined: refused in seconds, nothing written
    return ray


def model_provenance(model: ModelConfig, backend: ModelBackend,
                     settings: GenerationSettings) -> dict[str, Any]:
    """The model-related provenance fields (never the API key)."""
    return {
        "model": backend.spec,
        "backend": backend.identity(),
        "generation_settings": settings.model_dump(mode="json"),
        "base_url": getattr(backend, "base_url", None),
        "base_urls": getattr(backend, "base_urls", None),
        "image_cap": {"max_side": model.max_side, "max_pixels": model.max_pixels},
    }
