"""Send conversations to a backend with bounded concurrency, caching every answer.

Multi-turn conversations are sent turn by turn: after each turn the model's own answer
is appended to the history as an assistant message (MUSE's 4-turn dialogue). A turn that
fails ends its conversation; the remaining turns are not sent. Nothing here raises for a
single sample's failure: it becomes a :class:`Response` with ``error`` set.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tqdm import tqdm

from heritage_eval.core.cache import ResponseCache, request_key
from heritage_eval.core.images import ImageLoadError
from heritage_eval.core.types import Conversation, GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend

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


async def _run_one(item: RunItem, backend: ModelBackend, settings: GenerationSettings,
                   cache: ResponseCache | None) -> ItemResult:
    conv = item.conversation
    history: list[Message] = [Message.system(conv.system)] if conv.system else []
    result = ItemResult(id=item.id)
    for turn_index, turn in enumerate(conv.turns):
        history.append(turn)
        key = None
        payload = dict(conv.payload, turn=turn_index)
        try:
            if cache is not None:
                key = request_key(backend.identity(), settings, history,
                                  include_text=backend.reads_prompt,
                                  payload=payload if backend.reads_payload else None)
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
    tty = sys.stderr.isatty()
    bar = tqdm(total=len(items), desc=f"{desc} [{backend.spec}]", unit="sample",
               file=sys.stderr, dynamic_ncols=tty, mininterval=0.1 if tty else 30.0,
               disable=len(items) == 0)

    async def guarded(item: RunItem) -> None:
        async with sem:
            res = await _run_one(item, backend, settings, cache)
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
              desc: str = "requests") -> dict[str, ItemResult]:
    """Synchronous wrapper around :func:`run_items_async`.

    Works inside a running event loop too (Jupyter): the run then gets its own loop in
    a worker thread, and this call blocks until it ends."""
    return run_sync(run_items_async(items, backend, settings, cache, concurrency, desc))


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, with or without a running
    event loop in this thread (``asyncio.run`` refuses the latter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
