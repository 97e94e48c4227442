"""Send conversations to a backend with bounded concurrency, caching every answer.

Multi-turn conversations are sent turn by turn: after each turn the model's own answer
is appended to the history as an assistant message (MUSE's 4-turn dialogue). A turn that
fails ends its conversation; the remaining turns are not sent. Nothing here raises for a
single sample's failure: it becomes a :class:`Response` with ``error`` set; an
``ImageLoadError`` (key or backend) that sample's data error (:mod:`.data_errors`).

Where the conversations run is an :class:`~heritage_eval.core.executors.Executor`: by
default this process's event loop (:func:`run_items_async`); ``run_items(...,
executor=RayExecutor(...))`` spreads them over a Ray cluster. Either way only this process
reads and writes the cache: :func:`cached_prefix` before sending, :func:`store_result`
after, so a run resumes whatever ran it.

Locally, items pass through a bounded window (``_Window``): cached answers are read a
batch at a time (one SQLite query per few hundred keys, :func:`cached_prefixes`) and the
rest sent with bounded concurrency; :func:`stream_items` hands the results out in input
order while the plan is still being made, so a run keeps neither every conversation nor
every result (memory flat in dataset size).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import itertools
import sys
from collections import deque
from collections.abc import Callable, Coroutine, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from tqdm import tqdm

from heritage_eval.core.backends import ModelBackend
from heritage_eval.core.cache import KeyPieces, ResponseCache
from heritage_eval.core.data_errors import image_error_response
from heritage_eval.core.images import ImageLoadError
from heritage_eval.core.inflight import send_once
from heritage_eval.core.loop_finish import run_to_end
from heritage_eval.core.types import Conversation, GenerationSettings, Message, Response

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
         payload: dict[str, Any], pieces: KeyPieces | None = None) -> str:
    """The cache key of one turn; ``pieces``: the run's pre-encoded identity and
    settings (:class:`~heritage_eval.core.cache.KeyPieces`), made here when not given."""
    if pieces is None:
        pieces = KeyPieces(backend.identity(), settings)
    return pieces.key(history, include_text=backend.reads_prompt,
                      payload=payload if backend.reads_payload else None)


def _start(conv: Conversation) -> list[Message]:
    return [Message.system(conv.system)] if conv.system else []


def cached_prefix(item: RunItem, backend: ModelBackend, settings: GenerationSettings,
                  cache: ResponseCache | None) -> tuple[list[Response], str | None]:
    """The cached responses of ``item``'s first turns, up to the first turn not cached
    (:func:`cached_prefixes` of one item)."""
    return cached_prefixes([item], backend, settings, cache)[0]


def cached_prefixes(items: Sequence[RunItem], backend: ModelBackend,
                    settings: GenerationSettings, cache: ResponseCache | None,
                    pieces: KeyPieces | None = None
                    ) -> list[tuple[list[Response], str | None]]:
    """For each item, the cached responses of its first turns, up to the first turn not
    cached, read in one batched query per turn (:meth:`ResponseCache.get_many`).

    Returns one ``(responses, error)`` per item, in order; ``error`` is set (and the list
    ends there) when a key cannot be computed (an unreadable image's message, for
    :func:`~.data_errors.image_error_response`): the item then needs no sending. With
    every turn cached the list has one response per turn. A key that fails otherwise ends
    the prefix without an error (:func:`run_conversation` then meets the failure and
    reports it as it always does).
    """
    out: list[tuple[list[Response], str | None]] = [([], None) for _ in items]
    if cache is None or not items:
        return out
    pieces = pieces or KeyPieces(backend.identity(), settings)
    text, with_payload = backend.reads_prompt, backend.reads_payload
    histories = [_start(it.conversation) for it in items]
    live = list(range(len(items)))  # items whose every earlier turn was a cache hit
    turn_index = 0
    while live:
        keys: dict[int, str] = {}
        for i in live:
            conv = items[i].conversation
            if turn_index >= len(conv.turns):
                continue
            history = histories[i]
            history.append(conv.turn(turn_index, [r.text or "" for r in out[i][0]])
                           if turn_index else conv.turn(0, ()))
            try:  # (the same key as _key, without a payload copy per item when unused)
                keys[i] = pieces.key(history, text, dict(conv.payload, turn=turn_index)
                                     if with_payload else None)
            except ImageLoadError as exc:
                out[i] = (out[i][0], str(exc))
            except Exception:  # run_conversation meets it again and reports it
                pass
        hits = cache.get_many(list(keys.values())) if keys else {}
        live = []
        for i, key in keys.items():
            hit = hits.get(key)
            if hit is not None:
                out[i][0].append(hit)
                if turn_index + 1 < len(items[i].conversation.turns):  # a next turn
                    histories[i].append(Message.assistant(hit.text or ""))
                    live.append(i)
        turn_index += 1
    return out


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
                           known: Sequence[Response] = (),
                           pieces: KeyPieces | None = None) -> ItemResult:
    """Send ``item``'s turns in order and return their responses (never raises).

    ``known`` are responses already obtained for the first turns (the driver's cache hits,
    when the conversation runs on a Ray worker without the cache): they are used as is.
    With ``cache`` each turn is looked up first, sent once however many identical
    requests are in flight (:func:`~heritage_eval.core.inflight.send_once`) and each new
    success stored; ``pieces``: the run's pre-encoded key parts (made when needed).
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
        payload = dict(conv.payload, turn=turn_index)
        send = functools.partial(backend.generate, list(history), settings, payload)
        try:
            if cache is None:
                resp = await send()
            else:  # from the cache, an identical request in flight, or sent and stored
                pieces = pieces or KeyPieces(backend.identity(), settings)
                key = _key(backend, settings, history, payload, pieces)
                resp = await send_once(cache, key, backend.spec, send)
        except ImageLoadError as exc:  # the sample's data error (core.data_errors)
            resp = image_error_response(exc)
        except Exception as exc:  # a backend bug must not end the whole run
            resp = Response(text=None, error=f"backend failure: {type(exc).__name__}: {exc}")
        result.responses.append(resp)
        if not resp.ok:
            break
        history.append(Message.assistant(resp.text or ""))
    return result


def progress_bar(total: int | None, desc: str, spec: str) -> tqdm[Any]:
    """The run's tqdm bar on stderr (with ETA; ``total=None``: count and rate only);
    outside a terminal refreshed every 30 s so that logs stay readable."""
    tty = sys.stderr.isatty()
    return tqdm(total=total, desc=f"{desc} [{spec}]", unit="sample", file=sys.stderr,
                dynamic_ncols=tty, mininterval=0.1 if tty else 30.0, disable=total == 0)


#: The window of a streamed run: conversations planned and not yet handed out, at most
#: ``max(WINDOW_MIN, WINDOW_FACTOR x concurrency)`` — the reorder buffer that lets results
#: leave in input order while a slow head (retries) does not stall the others at once.
WINDOW_FACTOR = 8
WINDOW_MIN = 1024


class _Window:
    """A bounded window over a lazily planned sequence of items (see
    :func:`stream_items`): cached answers are read a batch at a time
    (:func:`cached_prefixes`), the rest sent with ``limit`` conversations in flight."""

    def __init__(self, items: Iterable[RunItem], backend: ModelBackend,
                 settings: GenerationSettings, cache: ResponseCache | None,
                 concurrency: int | None) -> None:
        limit = max(1, concurrency or backend.max_concurrency)
        self._items: Iterator[RunItem] | None = iter(items)
        self._backend, self._settings, self._cache = backend, settings, cache
        self._size = max(WINDOW_MIN, WINDOW_FACTOR * limit)
        self._sem = asyncio.Semaphore(limit)
        self._pending: deque[ItemResult | asyncio.Task[ItemResult]] = deque()
        self._pieces = KeyPieces(backend.identity(), settings) if cache is not None else None

    def _refill(self) -> None:
        if self._items is None or len(self._pending) >= self._size:
            return
        room = self._size - len(self._pending)
        chunk = list(itertools.islice(self._items, room))
        if len(chunk) < room:
            self._items = None  # planned to the end
        prefixes = cached_prefixes(chunk, self._backend, self._settings, self._cache,
                                   self._pieces)
        for item, (prefix, error) in zip(chunk, prefixes, strict=True):
            if error is not None:
                self._pending.append(ItemResult(item.id, [*prefix, image_error_response(error)]))
            elif len(prefix) == len(item.conversation.turns):
                self._pending.append(ItemResult(item.id, prefix))
            else:
                self._pending.append(asyncio.ensure_future(self._send(item, prefix)))

    async def _send(self, item: RunItem, known: list[Response]) -> ItemResult:
        async with self._sem:
            return await run_conversation(item, self._backend, self._settings, self._cache,
                                          known, self._pieces)

    async def next_batch(self) -> list[ItemResult]:
        """The next results in input order: the head of the window and every finished
        result right after it (at least one; ``[]`` once every item was handed out)."""
        self._refill()
        if not self._pending:
            return []
        head = self._pending[0]
        if isinstance(head, asyncio.Future):
            await asyncio.wait([head])
        out = []
        while self._pending:
            head = self._pending[0]
            if isinstance(head, asyncio.Future):
                if not head.done():
                    break
                out.append(head.result())
            else:
                out.append(head)
            self._pending.popleft()
        return out

    async def aclose(self) -> None:
        """Cancel what is still in flight (a stream closed before its end)."""
        tasks = [t for t in self._pending if isinstance(t, asyncio.Future)]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._pending.clear()


async def run_items_async(items: Sequence[RunItem], backend: ModelBackend,
                          settings: GenerationSettings, cache: ResponseCache | None,
                          concurrency: int | None = None, desc: str = "requests",
                          on_result: Callable[[ItemResult], None] | None = None,
                          ) -> dict[str, ItemResult]:
    """Run every item; returns ``{item id: ItemResult}`` in input order.

    ``concurrency`` (parallel conversations, >= 1) defaults to ``backend.max_concurrency``.
    Cached answers are read a batch at a time; ``on_result`` is called with each result
    as it is handed out (input order). A tqdm progress bar (with ETA) is written to
    stderr; outside a terminal it is refreshed every 30 s so that logs stay readable.
    """
    out: dict[str, ItemResult] = {}
    bar = progress_bar(len(items), desc, backend.spec)
    window = _Window(items, backend, settings, cache, concurrency)
    try:
        while batch := await window.next_batch():
            for res in batch:
                out[res.id] = res
                if on_result is not None:
                    on_result(res)
            bar.update(len(batch))
    finally:
        bar.close()
        await window.aclose()
        await backend.aclose()
    return out


def stream_items(items: Iterable[RunItem], backend: ModelBackend,
                 settings: GenerationSettings, cache: ResponseCache | None,
                 concurrency: int | None = None, desc: str = "requests",
                 executor: Executor | None = None, bar: tqdm[Any] | None = None,
                 ) -> Generator[ItemResult, None, None]:
    """Each item's :class:`ItemResult`, in input order, while ``items`` is planned lazily:
    memory stays flat in the number of items (the streamed form of :func:`run_items`).

    At most ``max(WINDOW_MIN, WINDOW_FACTOR x concurrency)`` items are planned and not
    yet handed out; cached answers are read a batch at a time, the rest sent with
    ``concurrency`` conversations in flight (default ``backend.max_concurrency``) on an
    event loop of this thread that runs while the caller waits for the next result.
    ``bar``: a progress bar to advance by one per result (default: a new one, with no
    total). Close the generator (``contextlib.closing``) when leaving it early: what is
    in flight is cancelled and the backend closed. A non-local ``executor`` and a call
    inside a running event loop (Jupyter) run the whole plan first (:func:`run_items`),
    then hand the results out in order.
    """
    try:
        asyncio.get_running_loop()
        in_loop = True
    except RuntimeError:
        in_loop = False
    if in_loop or (executor is not None and executor.name != "local"):
        listed = list(items)
        results = run_items(listed, backend, settings, cache, concurrency, desc, executor)
        for it in listed:
            if it.id in results:
                if bar is not None:
                    bar.update(1)
                yield results[it.id]
        return
    own_bar = bar is None
    progress = progress_bar(None, desc, backend.spec) if bar is None else bar
    runner = asyncio.Runner()  # one loop for the whole stream: the backend's sessions live on
    window = _Window(items, backend, settings, cache, concurrency)  # (binds to it on use)
    try:
        while batch := runner.run(window.next_batch()):
            for res in batch:
                progress.update(1)
                yield res
    finally:
        try:  # (a step stopped by Ctrl-C may leave the loop a stale stop: loop_finish)
            run_to_end(runner, window.aclose())
            run_to_end(runner, backend.aclose())
        finally:
            runner.close()
            if own_bar:
                progress.close()


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
