"""Send conversations to a backend with bounded concurrency, caching every answer.

Multi-turn conversations are sent turn by turn: after each turn the model's own answer
is appended to the history as an assistant message (MUSE's 4-turn dialogue). A turn that
fails ends its conversation; the remaining turns are not sent. Nothing here raises for a
single sample's failure: it becomes a :class:`Response` with ``error`` set.

Where the conversations run is an :class:`~heritage_eval.core.executors.Executor`: by
default this process's event loop (:func:`run_items_async`); ``run_items(...,
executor=RayExecutor(...))`` spreads them over a Ray cluster. Either way only this process
reads and writes the cache: :func:`cached_prefix` before sending, :func:`store_result`
after, so a run resumes whatever ran it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from tqdm import tqdm

from heritage_eval.core.cache import ResponseCache, request_key
from heritage_eval.core.images import ImageLoadError
from heritage_eval.core.types import Conversation, GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend

if TYPE_CHECKING:
    from heritage_eval.core.executors import Executor

T = TypeVar("T")


@dataclass(frozen=True)
class RunItem:
    """One conversation to send; ``id`` is the sample id."""

    id: str
    conversation: Conversation


@dataclass
class ItemResult:
    """Responses of one item, one per turn sent (fewer than turns if a turn failed)."""

    id: str
    responses: list[Response] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        """The first error reason among the turns, or ``None``."""
        for r in self.responses:
            if r.error:
                return r.error
        return None


def _key(backend: ModelBackend, settings: GenerationSettings, history: list[Message],
         payload: dict[str, Any]) -> str:
    return request_key(backend.identity(), settings, history, include_text=backend.reads_prompt,
                       payload=payload if backend.reads_payload else None)


def _start(conv: Conversation) -> list[Message]:
    return [Message.system(conv.system)] if conv.system else []


def cached_prefix(item: RunItem, backend: ModelBackend, settings: GenerationSettings,
                  cache: ResponseCache | None) -> tuple[list[Response], str | None]:
    """The cached responses of ``item``'s first turns, up to the first turn not cached.

    Returns ``(responses, error)``; ``error`` is set (and the list ends there) when a key
    cannot be computed (an unreadable image): the item then needs no sending. With every
    turn cached the list has one response per turn.
    """
    if cache is None:
        return [], None
    conv = item.conversation
    history = _start(conv)
    out: list[Response] = []
    for turn_index in range(len(conv.turns)):
        history.append(conv.turn(turn_index, [r.text or "" for r in out]))
        try:
            hit = cache.get(_key(backend, settings, history, dict(conv.payload, turn=turn_index)))
        except ImageLoadError as exc:
            return out, str(exc)
        if hit is None:
            break
        out.append(hit)
        history.append(Message.assistant(hit.text or ""))
    return out, None


def store_result(item: RunItem, result: ItemResult, backend: ModelBackend,
                 settings: GenerationSettings, cache: ResponseCache | None) -> None:
    """Write ``result``'s successful, not yet cached responses to ``cache`` (the driver
    does this for results computed elsewhere, e.g. by Ray workers)."""
    if cache is None:
        return
    conv = item.conversation
    history = _start(conv)
    for turn_index, resp in enumerate(result.responses[:len(conv.turns)]):
        earlier = [r.text or "" for r in result.responses[:turn_index]]
        history.append(conv.turn(turn_index, earlier))
        if not resp.ok:
            break
        if not resp.cached:
            try:
                key = _key(backend, settings, history, dict(conv.payload, turn=turn_index))
            except ImageLoadError:
                break
            cache.put(key, backend.spec, resp)
        history.append(Message.assistant(resp.text or ""))


async def run_conversation(item: RunItem, backend: ModelBackend, settings: GenerationSettings,
                           cache: ResponseCache | None,
                           known: Sequence[Response] = ()) -> ItemResult:
    """Send ``item``'s turns in order and return their responses (never raises).

    ``known`` are responses already obtained for the first turns (the driver's cache hits,
    when the conversation runs on a Ray worker without the cache): they are used as is.
    With ``cache`` each turn is looked up first and each new success stored.
    """
    conv = item.conversation
    history = _start(conv)
    result = ItemResult(id=item.id)
    for turn_index in range(len(conv.turns)):
        history.append(conv.turn(turn_index, [r.text or "" for r in result.responses]))
        if turn_index < len(known):
            result.responses.append(known[turn_index])
            history.append(Message.assistant(known[turn_index].text or ""))
            continue
        key = None
        payload = dict(conv.payload, turn=turn_index)
        try:
            if cache is not None:
                key = _key(backend, settings, history, payload)
                hit = cache.get(key)
                if hit is not None:
                    result.responses.append(hit)
                    history.append(Message.assistant(hit.text or ""))
                    continue
            resp = await backend.generate(list(history), settings, payload)
        except ImageLoadError as exc:
            resp = Response(text=None, error=str(exc))
        except Exception as exc:  # a backend bug must not end the whole run
            resp = Response(text=None, error=f"backend failure: {type(exc).__name__}: {exc}")
        if resp.ok and cache is not None and key is not None:
            cache.put(key, backend.spec, resp)
        result.responses.append(resp)
        if not resp.ok:
            break
        history.append(Message.assistant(resp.text or ""))
    return result


def progress_bar(total: int, desc: str, spec: str) -> tqdm[Any]:
    """The run's tqdm bar on stderr (with ETA); outside a terminal refreshed every 30 s
    so that logs stay readable."""
    tty = sys.stderr.isatty()
    return tqdm(total=total, desc=f"{desc} [{spec}]", unit="sample", file=sys.stderr,
                dynamic_ncols=tty, mininterval=0.1 if tty else 30.0, disable=total == 0)


async def run_items_async(items: Sequence[RunItem], backend: ModelBackend,
                          settings: GenerationSettings, cache: ResponseCache | None,
                          concurrency: int | None = None, desc: str = "requests",
                          on_result: Callable[[ItemResult], None] | None = None,
                          ) -> dict[str, ItemResult]:
    """Run every item; returns ``{item id: ItemResult}`` in input order.

    ``concurrency`` (parallel conversations, >= 1) defaults to ``backend.max_concurrency``.
    A tqdm progress bar (with ETA) is written to stderr; outside a terminal it is
    refreshed every 30 s so that logs stay readable.
    """
    limit = max(1, concurrency or backend.max_concurrency)
    sem = asyncio.Semaphore(limit)
    out: dict[str, ItemResult] = {}
    bar = progress_bar(len(items), desc, backend.spec)

    async def guarded(item: RunItem) -> None:
        async with sem:
            res = await run_conversation(item, backend, settings, cache)
        out[item.id] = res
        if on_result is not None:
            on_result(res)
        bar.update(1)

    try:
        await asyncio.gather(*(guarded(it) for it in items))
    finally:
        bar.close()
        await backend.aclose()
    return {it.id: out[it.id] for it in items if it.id in out}


def run_items(items: Sequence[RunItem], backend: ModelBackend, settings: GenerationSettings,
              cache: ResponseCache | None, concurrency: int | None = None,
              desc: str = "requests", executor: Executor | None = None,
              on_result: Callable[[ItemResult], None] | None = None,
              ) -> dict[str, ItemResult]:
    """Run every item and return ``{item id: ItemResult}`` in input order.

    ``executor`` (default: :class:`~heritage_eval.core.executors.LocalExecutor`, i.e.
    :func:`run_items_async` on an event loop of this process) decides where the
    conversations run; ``concurrency`` is per backend replica. Works inside a running
    event loop too (Jupyter): the local run then gets its own loop in a worker thread, and
    this call blocks until it ends."""
    if executor is not None:
        return executor.run(items, backend, settings, cache, concurrency, desc=desc,
                            on_result=on_result)
    return run_sync(run_items_async(items, backend, settings, cache, concurrency, desc,
                                    on_result=on_result))


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, with or without a running
    event loop in this thread (``asyncio.run`` refuses the latter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
