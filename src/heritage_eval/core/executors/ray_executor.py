"""``--executor ray``: the request plan spread over backend replicas on a Ray cluster.

The driver (this process) reads the cache first, a batch of items per query: items whose
every turn is cached are answered at once, and for the others the cached first turns
travel with the item. The rest is cut into small chunks and streamed to Ray actors, each
holding one backend replica made in the actor by ``backend_factory`` (an in-process
``hf:`` model on its own GPU, or an HTTP client fanning out to endpoints). An actor runs
its conversations with bounded concurrency (turns of a conversation in order) and
returns the chunk's ``ItemResult``s; the driver waits on the chunk refs (``ray.wait``),
writes every new answer to the SQLite cache as it arrives and hands that actor its next
chunk, so faster replicas get more work. Workers never touch the cache and the key never
mentions a worker or GPU count: a killed run resumes on any cluster size, or locally.
A node runs in its own working folder, so every conversation leaves the driver with its
file references absolute (:mod:`.work_paths`); a replica that dies (its node lost) has
its chunks sent once more to the replicas still alive.

Ray is an optional dependency (``pip install 'heritage-eval[ray]'``); it is imported when
a run starts, never at import time.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from heritage_eval.core.data_errors import image_error_response
from heritage_eval.core.executors import ExecutorError
from heritage_eval.core.executors.ray_connect import (
    check_client,
    cluster_address,
    join,
    keep_sigterm_handler,
)
from heritage_eval.core.executors.work_paths import portable_item
from heritage_eval.core.runner import (
    ItemResult,
    RunItem,
    cached_prefixes,
    progress_bar,
    run_conversation,
    run_sync,
    store_result,
)
from heritage_eval.core.types import GenerationSettings, Response

if TYPE_CHECKING:
    from heritage_eval.core.backends import ModelBackend
    from heritage_eval.core.cache import ResponseCache

#: (item, its cached first responses) — one unit of work sent to a replica
Work = tuple[RunItem, list[Response]]
#: seconds allowed for the replicas to start and make their backend
START_TIMEOUT_S = 600.0
#: items whose cached answers are read together (:func:`cached_prefixes`)
PREFIX_CHUNK = 512


@dataclass(frozen=True)
class RayOptions:
    """How to use Ray.

    ``address``: cluster to join (``auto``: the one started on this machine with ``ray
    start``; ``ray://host:10001`` or ``host:6379``); ``None``: the one ``$RAY_ADDRESS``
    names, else a local cluster that ends with the run, with ``num_cpus`` CPUs (default:
    all cores); see :func:`.ray_connect.cluster_address`. ``workers``: backend
    replicas (default: one per GPU for a backend that wants an accelerator when the
    cluster has GPUs, else 2). ``cpus_per_worker`` / ``gpus_per_worker``: Ray resources of
    one replica (GPUs default to 1 for accelerator backends on a GPU cluster, else 0).
    ``chunk_size``: conversations per task sent to a replica (default: a quarter of the
    replica's concurrency, at least 1).
    """

    address: str | None = None
    workers: int | None = None
    num_cpus: int | None = None
    cpus_per_worker: float = 1.0
    gpus_per_worker: float | None = None
    chunk_size: int | None = None


class _Replica:
    """A Ray actor holding one backend replica (wrapped with ``ray.remote`` at run time)."""

    def __init__(self, factory: Callable[[], ModelBackend], modules: list[str]) -> None:
        for module in modules:  # backends register themselves on import
            importlib.import_module(module)
        self.backend = factory()
        self._sem: asyncio.Semaphore | None = None

    async def info(self) -> dict[str, Any]:
        """The replica's backend identity (must equal the driver's), host and pid."""
        import socket

        return {"identity": self.backend.identity(), "host": socket.gethostname(),
                "pid": os.getpid(), "max_concurrency": self.backend.max_concurrency}

    async def run(self, chunk: list[Work], settings: GenerationSettings,
                  concurrency: int) -> list[ItemResult]:
        """Run one chunk; all chunks of this replica share ``concurrency`` slots."""
        if self._sem is None:
            self._sem = asyncio.Semaphore(max(1, concurrency))
        sem = self._sem

        async def one(item: RunItem, known: list[Response]) -> ItemResult:
            async with sem:
                return await run_conversation(item, self.backend, settings, None, known)

        return list(await asyncio.gather(*(one(i, k) for i, k in chunk)))

    async def close(self) -> None:
        await self.backend.aclose()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError("--executor ray needs Ray: pip install 'heritage-eval[ray]' "
                            "(or pip install ray)") from None
    return ray


def _reason(exc: BaseException) -> str:
    """The last meaningful line of a Ray error (the worker's own exception)."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__


class RayExecutor:
    """Executor on a Ray cluster; see the module docstring.

    ``backend_factory`` makes the backend inside each actor: it must be picklable (a
    module-level function or ``functools.partial`` of one; Ray uses cloudpickle) and make
    a backend whose ``identity()`` equals the driver's (checked at start). Raises
    :class:`ExecutorError` from :meth:`run` when Ray is missing, the cluster cannot be
    reached or is too small, or a replica cannot make the backend.
    """

    name = "ray"

    def __init__(self, options: RayOptions, backend_factory: Callable[[], ModelBackend]) -> None:
        self.options = options
        self.backend_factory = backend_factory
        #: this executor called ``ray.init`` and must call ``ray.shutdown``
        self._owns_ray = False

    def run(self, items: Sequence[RunItem], backend: ModelBackend,
            settings: GenerationSettings, cache: ResponseCache | None,
            concurrency: int | None = None, desc: str = "requests",
            on_result: Callable[[ItemResult], None] | None = None,
            ) -> dict[str, ItemResult]:
        """See :class:`heritage_eval.core.executors.Executor`."""
        out: dict[str, ItemResult] = {}
        todo: list[Work] = []
        bar = progress_bar(len(items), desc, backend.spec)

        def finish(item: RunItem, res: ItemResult) -> None:
            out[item.id] = res
            if on_result is not None:
                on_result(res)
            bar.update(1)

        try:
            for start in range(0, len(items), PREFIX_CHUNK):  # cache read in batches
                chunk = items[start:start + PREFIX_CHUNK]
                for item, (prefix, error) in zip(chunk, cached_prefixes(
                        chunk, backend, settings, cache), strict=True):
                    if error is not None:
                        finish(item, ItemResult(item.id, [*prefix,
                                                          image_error_response(error)]))
                    elif len(prefix) == len(item.conversation.turns):
                        finish(item, ItemResult(item.id, prefix))
                    else:
                        todo.append((item, prefix))
            if todo:
                self._dispatch(todo, backend, settings, cache, concurrency, finish)
        finally:
            bar.close()
            run_sync(backend.aclose())
            self._release()
        return {it.id: out[it.id] for it in items if it.id in out}

    @property
    def address(self) -> str | None:
        """The cluster to join (:func:`.ray_connect.cluster_address`: the option, else
        ``$RAY_ADDRESS``), or ``None`` for a local cluster."""
        return cluster_address(self.options.address)

    def preflight(self) -> None:
        """Join the cluster now, if one is named (:func:`.ray_connect.join`), so that a
        cluster that is unreachable, refuses the token or runs another Ray version is
        refused before anything is written; the connection is kept for :meth:`run`
        (which ends it). A local cluster starts later, in :meth:`run`. Raises
        :class:`ExecutorError`."""
        address = self.address
        if address is None:
            return
        check_client(address)
        ray = _import_ray()
        if not ray.is_initialized():
            join(ray, address)
            self._owns_ray = True

    def _release(self) -> None:
        """``ray.shutdown`` when this executor called ``ray.init`` (a joined cluster
        keeps running; a local one ends)."""
        if self._owns_ray:
            self._owns_ray = False
            import ray

            ray.shutdown()

    # -- cluster -----------------------------------------------------------------------

    def _connect(self, ray: Any) -> None:
        """Join the named cluster (:func:`.ray_connect.join`: probed first, since
        ``ray.init`` retries an address that refuses or never answers for ever), or start
        a local one (``address="local"``: never a cluster that ``ray start`` left on this
        machine). Nothing when Ray is already initialised (by :meth:`preflight`, or by
        the caller, whose session is then left alone). Ray's own SIGTERM handler (which
        ``ray.init`` installs) is replaced by the one in place before, so SIGTERM stops
        a run as Ctrl-C does."""
        if ray.is_initialized():
            return
        address = self.address
        if address is not None:
            join(ray, address)
            self._owns_ray = True
            return
        with keep_sigterm_handler():
            try:
                ray.init(address="local", include_dashboard=False, log_to_driver=False,
                         logging_level=logging.ERROR,
                         num_cpus=self.options.num_cpus or os.cpu_count() or 1)
            except Exception as exc:
                raise ExecutorError("cannot start Ray on a new local cluster: "
                                    f"{_reason(exc)}") from exc
        self._owns_ray = True

    def _plan(self, ray: Any, backend: ModelBackend) -> tuple[int, float, float]:
        """(replicas, CPUs each, GPUs each); refuses a plan the cluster cannot hold
        (Ray would otherwise wait forever for resources)."""
        res = ray.cluster_resources()
        gpus, cpus = float(res.get("GPU", 0)), float(res.get("CPU", 0))
        wants = bool(getattr(backend, "wants_accelerator", False))
        gpw = self.options.gpus_per_worker
        if gpw is None:
            gpw = 1.0 if wants and gpus >= 1 else 0.0
        workers = self.options.workers or (int(gpus // gpw) if gpw else 2)
        cpw = self.options.cpus_per_worker
        if workers * gpw > gpus:
            raise ExecutorError(f"{workers} Ray workers x {gpw:g} GPU need more than the "
                                f"cluster's {gpus:g} GPUs (set --ray-workers)")
        if workers * cpw > cpus:
            raise ExecutorError(f"{workers} Ray workers x {cpw:g} CPU need more than the "
                                f"cluster's {cpus:g} CPUs (set --ray-workers)")
        return workers, cpw, gpw

    def _start(self, ray: Any, backend: ModelBackend) -> tuple[list[Any], int]:
        """Create the replicas and check them; returns (actors, their concurrency)."""
        workers, cpw, gpw = self._plan(ray, backend)
        actor_cls = ray.remote(_Replica)
        modules = sorted({type(backend).__module__, "heritage_eval.models"})
        actors = [actor_cls.options(num_cpus=cpw, num_gpus=gpw, max_concurrency=1000)
                  .remote(self.backend_factory, modules) for _ in range(workers)]
        try:
            infos = ray.get([a.info.remote() for a in actors], timeout=START_TIMEOUT_S)
        except Exception as exc:
            for a in actors:
                ray.kill(a)
            raise ExecutorError(f"a Ray worker could not make the backend {backend.spec}: "
                                f"{_reason(exc)}") from exc
        mine = backend.identity()
        for info in infos:
            if info["identity"] != mine:
                for a in actors:
                    ray.kill(a)
                raise ExecutorError(f"Ray worker on {info['host']} sees another model than "
                                    f"the driver ({info['identity']} != {mine}): the model "
                                    "files must be identical on every node")
        return actors, int(infos[0]["max_concurrency"])

    def _dispatch(self, todo: list[Work], backend: ModelBackend, settings: GenerationSettings,
                  cache: ResponseCache | None, concurrency: int | None,
                  finish: Callable[[RunItem, ItemResult], None]) -> None:
        ray = _import_ray()
        self._connect(ray)
        actors: list[Any] = []
        cwd = os.getcwd()  # relative file references are the driver's: sent absolute
        graceful = False
        try:
            actors, default_conc = self._start(ray, backend)
            per = max(1, concurrency or default_conc)
            size = self.options.chunk_size or max(1, per // 4)
            depth = -(-per // size) + 1  # chunks in flight per replica: keep it busy
            queue: deque[tuple[list[Work], int]] = deque(
                (todo[i:i + size], 0) for i in range(0, len(todo), size))
            inflight: dict[Any, tuple[int, list[Work], int]] = {}
            alive = set(range(len(actors)))

            def submit(a: int) -> None:
                if queue and a in alive:
                    chunk, tries = queue.popleft()
                    sent = [(portable_item(item, cwd), known) for item, known in chunk]
                    inflight[actors[a].run.remote(sent, settings, per)] = (a, chunk, tries)

            for _ in range(depth):
                for a in range(len(actors)):
                    submit(a)
            while inflight:
                ready, _ = ray.wait(list(inflight), num_returns=1)
                for ref in ready:
                    a, chunk, tries = inflight.pop(ref)
                    try:
                        results = ray.get(ref)
                    except ray.exceptions.RayActorError as exc:
                        alive.discard(a)
                        if tries < 1 and alive:  # the replica died: once more elsewhere
                            queue.appendleft((chunk, tries + 1))
                            for b in sorted(alive):
                                submit(b)
                            continue
                        results = self._failed(chunk, f"Ray worker died: {_reason(exc)}")
                    except Exception as exc:
                        results = self._failed(chunk, f"Ray task failed: {_reason(exc)}")
                    for (item, _known), res in zip(chunk, results, strict=True):
                        store_result(item, res, backend, settings, cache)
                        finish(item, res)
                    submit(a)
            for chunk, _tries in queue:  # only left when every replica died
                for (item, _known), res in zip(chunk, self._failed(chunk, "no Ray worker "
                                                                   "left"), strict=True):
                    finish(item, res)
            graceful = True
        finally:  # also on Ctrl-C / SIGTERM and errors: no actor or local cluster is left
            started, self._owns_ray = self._owns_ray, False
            self._stop(ray, actors, started, graceful)

    @staticmethod
    def _failed(chunk: list[Work], reason: str) -> list[ItemResult]:
        return [ItemResult(item.id, [*known, Response(text=None, error=reason)])
                for item, known in chunk]

    @staticmethod
    def _stop(ray: Any, actors: list[Any], started: bool, graceful: bool = True) -> None:
        """End the replicas (``graceful``: let each close its backend first, at most 10
        s; else — interrupted or failed — kill them at once), then, when ``started``
        (this executor called ``ray.init``), the Ray session: ``ray.shutdown`` ends a
        local cluster and leaves a joined one running. Whatever happens on the way."""
        try:
            if actors and graceful:
                ray.wait([a.close.remote() for a in actors], num_returns=len(actors),
                         timeout=10)
            for a in actors:
                with contextlib.suppress(Exception):
                    ray.kill(a, no_restart=True)
        finally:
            if started:
                ray.shutdown()
