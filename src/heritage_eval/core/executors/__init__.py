"""Where a run's conversations are executed: this process, or a Ray cluster.

An :class:`Executor` takes the request plan (``RunItem``s), a backend, the decoding
settings and the response cache, and returns one ``ItemResult`` per item, exactly like
:func:`heritage_eval.core.runner.run_items` (which delegates to it). Every executor
obeys one rule: only the calling process reads and writes the SQLite cache, and the cache
key is the request (never a worker, rank or GPU count), so a run killed under one executor
resumes under any other.

- :class:`LocalExecutor` (default): asyncio in this process, bounded concurrency.
- :class:`RayExecutor` (``--executor ray``, optional extra ``[ray]``): backend replicas as
  Ray actors, the plan streamed to them in small chunks, results cached as they arrive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from heritage_eval.core.executors.local import LocalExecutor

if TYPE_CHECKING:
    from heritage_eval.core.backends import ModelBackend
    from heritage_eval.core.cache import ResponseCache
    from heritage_eval.core.executors.ray_executor import RayExecutor, RayOptions
    from heritage_eval.core.runner import ItemResult, RunItem
    from heritage_eval.core.types import GenerationSettings


class Executor(Protocol):
    """Runs a request plan; see the package docstring. ``name`` is ``local`` or ``ray``."""

    name: str

    def run(self, items: Sequence[RunItem], backend: ModelBackend,
            settings: GenerationSettings, cache: ResponseCache | None,
            concurrency: int | None = None, desc: str = "requests",
            on_result: Callable[[ItemResult], None] | None = None,
            ) -> dict[str, ItemResult]:
        """``{item id: ItemResult}`` in input order; per-item failures are results with
        an error, never exceptions. ``concurrency``: conversations in flight per backend
        replica (default: the backend's ``max_concurrency``)."""
        ...


class ExecutorError(RuntimeError):
    """The executor cannot run at all (Ray missing, cluster unreachable, a replica that
    cannot create the backend); the message says why. Raised before any request is sent."""


def __getattr__(name: str) -> object:
    # RayExecutor / RayOptions on first use, so that importing this package never imports ray
    if name in ("RayExecutor", "RayOptions"):
        from heritage_eval.core.executors import ray_executor

        return getattr(ray_executor, name)
    raise AttributeError(name)


__all__ = ["Executor", "ExecutorError", "LocalExecutor", "RayExecutor", "RayOptions"]
