"""``hf:PATH`` — an image-text-to-text transformers model loaded in-process, batched.

``PATH`` is a local checkpoint folder (``config.json``, weights, processor files with a
chat template); nothing is ever downloaded. The model loads on the first request (so the
driver of a Ray run, which only computes cache keys, never loads it), with
``AutoProcessor`` + ``AutoModelForImageTextToText`` and ``local_files_only=True``.

Batching: :meth:`HFBackend.generate` loads the request's images (``core.images.load_image``
with the size cap) and puts the request on a queue. A background task on the event loop
collects up to ``batch_size`` requests (waiting at most ``wait_ms`` for more when the
model is idle, and for as long as the previous batch is still generating otherwise),
preprocesses them in one thread and runs one padded ``model.generate`` in another, so the
loop stays free and preprocessing of the next batch overlaps generation of this one. A
batch that runs out of accelerator memory is split in halves and retried. A response's
``latency_s`` runs from queueing to answer (it includes the wait for a batch), its
``meta`` holds ``batch_size`` (requests in its ``generate`` call), ``finish_reason``
(``stop`` or ``length``), ``sent_image_sizes`` and ``device``; ``usage`` counts prompt and
new tokens without padding.

``--model-option`` keys: ``device`` (cpu|cuda|cuda:N|auto), ``dtype``
(float32|bfloat16|float16|auto), ``batch_size`` (default 8), ``max_pixels`` (per image),
``attn_implementation``, ``wait_ms`` (default 20), ``max_concurrency`` (default
2 x batch_size, so a second batch is queued while one generates), ``trust_remote_code``.

The cache key (:meth:`HFBackend.identity`) holds SHA-256 of ``config.json``, a
fingerprint of the weights (see ``hf_model.weights_fingerprint``), the
dtype, ``max_pixels`` and the image cap; not the device, batch size or attention kernel,
nor the folder's name or place, so a resumed run on another machine, cluster size or copy
of the checkpoint reuses every answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.core.extras import require_extra
from heritage_eval.core.sizecap import SizeCap
from heritage_eval.core.types import GenerationSettings, Message, Response, Usage
from heritage_eval.models import hf_model
from heritage_eval.models.base import (
    BackendOptions,
    ModelBackend,
    ModelSpecError,
    register_backend,
)

if TYPE_CHECKING:
    from PIL import Image

OPTION_KEYS = {
    "device": "cpu | cuda | cuda:N | auto (default auto: cuda when available)",
    "dtype": "float32 | bfloat16 | float16 | auto (default auto: bfloat16 on GPU, "
             "float32 on CPU)",
    "batch_size": "requests per model.generate call (default 8)",
    "max_pixels": "most pixels per image given to the processor (default: --max-pixels)",
    "attn_implementation": "eager | sdpa | flash_attention_2 … (default: transformers')",
    "wait_ms": "how long an idle model waits to fill a batch, ms (default 20)",
    "max_concurrency": "requests in flight (default 2 x batch_size; --concurrency overrides)",
    "trust_remote_code": "true to run code shipped in the checkpoint folder (default false)",
}


def _int_option(extra: dict[str, str], key: str, default: int | None) -> int | None:
    if key not in extra:
        return default
    try:
        value = int(extra[key])
    except ValueError:
        raise ModelSpecError(f"--model-option {key}={extra[key]!r}: not an integer") from None
    if value < 1:
        raise ModelSpecError(f"--model-option {key}={value}: must be >= 1")
    return value


@dataclass
class _Request:
    messages: list[Message]
    images: list[Image.Image]
    settings: GenerationSettings
    future: asyncio.Future[Response]
    submitted: float = field(default_factory=time.perf_counter)


class HFBackend(ModelBackend):
    """In-process transformers backend with request batching (see the module docstring).

    Raises :class:`ModelSpecError` from the constructor when the folder, its config or
    its weights are missing or an option is malformed. A model that fails to load turns
    every request into an error ``Response`` naming the folder (loading is not retried).
    """

    backend = "hf"

    def __init__(self, path: str, options: BackendOptions) -> None:
        if not path:
            raise ModelSpecError("hf backend needs a local model folder: --model hf:PATH")
        self.model_id = path
        self.path = Path(path).expanduser().resolve()
        self._weights = hf_model.check_folder(self.path)
        extra = options.extra
        device = extra.get("device", "auto")
        if device not in ("cpu", "cuda", "auto") and not device.startswith("cuda:"):
            raise ModelSpecError(f"--model-option device={device!r}: use cpu, cuda, cuda:N "
                                 "or auto")
        dtype = extra.get("dtype", "auto")
        if dtype not in hf_model.DTYPES:
            raise ModelSpecError(f"--model-option dtype={dtype!r}: use one of "
                                 f"{', '.join(hf_model.DTYPES)}")
        self.batch_size = _int_option(extra, "batch_size", 8) or 8
        self.max_concurrency = _int_option(extra, "max_concurrency", 2 * self.batch_size) or 1
        wait_ms = extra.get("wait_ms", "20")
        try:
            self.wait_s = max(0.0, float(wait_ms)) / 1000
        except ValueError:
            raise ModelSpecError(f"--model-option wait_ms={wait_ms!r}: not a number") from None
        trust = extra.get("trust_remote_code", "false").lower()
        if trust not in ("true", "false", "1", "0", "yes", "no"):
            raise ModelSpecError(f"--model-option trust_remote_code={trust!r}: true or false")
        self.load_options = hf_model.LoadOptions(
            device=device, dtype=dtype, max_pixels=_int_option(extra, "max_pixels", None),
            attn_implementation=extra.get("attn_implementation") or None,
            trust_remote_code=trust in ("true", "1", "yes"))
        cap = options.image_cap
        mp = self.load_options.max_pixels
        if mp is not None and (cap.max_pixels is None or mp < cap.max_pixels):
            cap = SizeCap(max_side=cap.max_side, max_pixels=mp)
        self.cap = cap
        #: True unless the model runs on CPU: a Ray executor then gives each replica a GPU.
        self.wants_accelerator = device != "cpu"
        self._identity: dict[str, Any] | None = None
        self._loaded: hf_model.LoadedModel | None = None
        self._load_error: str | None = None
        self._load_lock = threading.Lock()
        self._prep_pool = concurrent.futures.ThreadPoolExecutor(1, "hf-prep")
        self._gen_pool = concurrent.futures.ThreadPoolExecutor(1, "hf-generate")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Request] | None = None
        self._task: asyncio.Task[None] | None = None
        #: sizes of the model.generate calls made so far (tests and benchmarks read it)
        self.batch_sizes: list[int] = []

    def identity(self) -> dict[str, Any]:
        """Cache-key identity; the weights fingerprint is computed once (~2 MiB read per
        weights file)."""
        if self._identity is None:
            self._identity = {
                "backend": self.backend,
                "config_sha256": hf_model.config_fingerprint(self.path),
                "weights_sha256": hf_model.weights_fingerprint(self._weights),
                "dtype": self.load_options.dtype, "max_pixels": self.load_options.max_pixels,
                "image_cap": [self.cap.max_side, self.cap.max_pixels]}
        return dict(self._identity)

    # -- model ---------------------------------------------------------------------------

    def load(self) -> hf_model.LoadedModel:
        """Load the model now (thread-safe, once). Raises ``RuntimeError`` with the reason
        when loading failed (now or before)."""
        with self._load_lock:
            if self._loaded is None and self._load_error is None:
                try:
                    self._loaded = hf_model.load_model(self.path, self.load_options)
                except Exception as exc:
                    self._load_error = hf_model.describe_load_error(self.path, exc)
            if self._loaded is None:
                raise RuntimeError(self._load_error)
            return self._loaded

    def _load_images(self, messages: list[Message]) -> list[Image.Image]:
        from heritage_eval.core.images import load_image

        return [load_image(p.path, p.page, self.cap) for m in messages for p in m.images()]

    # -- requests ------------------------------------------------------------------------

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        """Queue one request and wait for its batch. Raises ``ImageLoadError`` for an
        unreadable image (the runner records it as that sample's error)."""
        images = await asyncio.to_thread(self._load_images, messages)
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._task is None or self._task.done():
            self._loop, self._queue = loop, asyncio.Queue()
            self._task = loop.create_task(self._batch_loop(self._queue))
        assert self._queue is not None
        req = _Request(list(messages), images, settings, loop.create_future())
        self._queue.put_nowait(req)
        return await req.future

    async def aclose(self) -> None:
        """Stop the batching task of the current loop; the model stays loaded (a later run
        in another event loop starts a new task)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _collect(self, queue: asyncio.Queue[_Request],
                       busy: asyncio.Future[None] | None) -> list[_Request]:
        """Wait for a first request, then gather more up to ``batch_size``: for
        ``wait_s`` when the model is idle, until ``busy`` (the batch generating) ends
        otherwise."""
        batch = [await queue.get()]
        deadline = time.monotonic() + self.wait_s
        while len(batch) < self.batch_size:
            with contextlib.suppress(asyncio.QueueEmpty):
                batch.append(queue.get_nowait())
                continue
            running = busy is not None and not busy.done()
            timeout = None if running else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                break
            getter = asyncio.ensure_future(queue.get())
            waits: set[asyncio.Future[Any]] = {getter}
            if running and busy is not None:
                waits.add(busy)
            done, _ = await asyncio.wait(waits, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                batch.append(getter.result())
                continue
            getter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await getter
            if getter.done() and not getter.cancelled():
                batch.append(getter.result())
            if running:
                break  # the model is free again: run what we have
        return batch

    async def _batch_loop(self, queue: asyncio.Queue[_Request]) -> None:
        inflight: asyncio.Future[None] | None = None
        try:
            while True:
                batch = await self._collect(queue, inflight)
                try:
                    groups: dict[GenerationSettings, list[_Request]] = {}
                    for req in batch:
                        groups.setdefault(req.settings, []).append(req)
                    for group in groups.values():
                        prepared = await self._prepare(group)
                        if inflight is not None:
                            await inflight
                        inflight = asyncio.ensure_future(self._run(group, prepared))
                except Exception as exc:  # a bug here must not leave requests waiting
                    self._fail(batch, exc)
        except asyncio.CancelledError:
            for req in self._drain(queue):
                if not req.future.done():
                    req.future.set_result(Response(text=None, error="hf: run ended before "
                                                                   "this request was sent"))
            raise

    @staticmethod
    def _drain(queue: asyncio.Queue[_Request]) -> list[_Request]:
        out = []
        while not queue.empty():
            out.append(queue.get_nowait())
        return out

    async def _prepare(self, group: list[_Request]) -> Any:
        """Processor outputs for ``group`` or the exception raised while making them."""
        def work() -> Any:
            lm = self.load()
            return hf_model.prepare_batch(lm, [r.messages for r in group],
                                          [r.images for r in group])
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._prep_pool, work)
        except Exception as exc:
            return exc

    async def _run(self, group: list[_Request], prepared: Any) -> None:
        """Generate for ``group`` and resolve each request's future (never raises)."""
        loop = asyncio.get_running_loop()
        if isinstance(prepared, Exception):
            self._fail(group, prepared)
            return
        try:
            lm = self.load()
            rows = await loop.run_in_executor(self._gen_pool, hf_model.generate_batch, lm,
                                              prepared, group[0].settings)
        except Exception as exc:
            if hf_model.is_out_of_memory(exc) and len(group) > 1:
                half = len(group) // 2
                for part in (group[:half], group[half:]):
                    await self._run(part, await self._prepare(part))
                return
            self._fail(group, exc)
            return
        self.batch_sizes.append(len(group))
        now = time.perf_counter()
        for req, row in zip(group, rows, strict=True):
            if req.future.done():
                continue
            req.future.set_result(Response(
                text=row.text, latency_s=round(now - req.submitted, 4),
                usage=Usage(prompt_tokens=row.prompt_tokens,
                            completion_tokens=row.completion_tokens),
                meta={"batch_size": len(group), "finish_reason": row.finish_reason,
                      "sent_image_sizes": [[i.width, i.height] for i in req.images],
                      "device": lm.device}))

    def _fail(self, group: list[_Request], exc: BaseException) -> None:
        reason = self._load_error or f"hf generate failed: {type(exc).__name__}: {exc}"
        for req in group:
            if not req.future.done():
                req.future.set_result(Response(text=None, error=reason))


def _make(rest: str, options: BackendOptions) -> ModelBackend:
    """The ``hf:`` factory; raises :class:`~heritage_eval.core.extras.MissingExtraError`
    (exit status 2, before any run folder) without torch and transformers (the ``hf``
    extra), which the model would otherwise miss on every request."""
    require_extra("hf", ("torch", "transformers"), "--model hf:PATH (a local transformers "
                  "model)")
    return HFBackend(rest, options)


register_backend("hf", _make,
                 "in-process transformers image-text-to-text model from a local folder, "
                 "batched: --model hf:PATH (never downloads)", OPTION_KEYS)
