"""Request bodies for ``/chat/completions``: messages, images encoded once, pass-through
options (reasoning effort, thinking switches, any extra JSON field).

Images are sent as base64 PNG data URLs after the size cap. An LRU of encoded data URLs
keyed by (path, page, modification time, byte size, cap) means an image is encoded once
per run, not once per request, turn or retry (a MUSE dialogue re-sends its image on every
turn). The LRU holds at most :data:`IMAGE_CACHE_BYTES` of data URLs.

**Request byte budget.** Servers refuse bodies over a limit (often with 413, some with a
bare 404). Before a request is sent its size is estimated — the base64 data URLs
(encoded bytes x 4/3) plus the text — and when it exceeds the budget
(``--model-option max_request_mb=N``, decimal MB, default :data:`DEFAULT_MAX_REQUEST_MB`)
the largest image is re-encoded one step at a time along :data:`BUDGET_STEPS` (JPEG
quality 90, 75, 60, then smaller sides at quality 75) until the request fits or no step
is left (it is then sent as small as it got, and the server decides). Each image changed
is listed in :attr:`SentImages.transforms` (format, quality, scale, size, bytes before and
after), and the sizes returned are those sent; the backend copies them into
``Response.meta`` (``image_transforms``, ``sent_image_sizes``).
"""

from __future__ import annotations

import collections
import io
import json
import os
import threading
from typing import Any

from PIL import Image

from heritage_eval.core.images import SizeCap, data_url, encode_image, load_image
from heritage_eval.core.types import GenerationSettings, ImagePart, Message, TextPart

#: Largest total size of cached data URLs, characters (= bytes).
IMAGE_CACHE_BYTES = 256 * 1024 * 1024
#: Default request byte budget, decimal megabytes (1 MB = 1,000,000 bytes).
DEFAULT_MAX_REQUEST_MB = 20.0
#: Private key of the body fields carrying the budget from :func:`body_options` to
#: :func:`build_body` (never sent).
BUDGET_FIELD = "_max_request_bytes"
#: Re-encoding steps tried on an image, in order: (JPEG quality, scale of each side).
BUDGET_STEPS: tuple[tuple[int, float], ...] = (
    (90, 1.0), (75, 1.0), (60, 1.0), (75, 0.75), (75, 0.5), (75, 0.35), (75, 0.25),
    (75, 0.18), (75, 0.125))
#: Bytes of JSON around the messages (keys, settings) added to the estimate.
BODY_OVERHEAD_BYTES = 1024
#: Smallest request (bytes) whose 404 is reported as a probable size limit.
PROBABLE_LIMIT_MIN_BYTES = 1_000_000

#: ``--model-option`` keys that go into the request body, with their meaning.
BODY_OPTION_KEYS = {
    "reasoning_effort": "reasoning effort sent as 'reasoning_effort' (OpenAI o-series, "
                        "gpt-oss on vLLM/SGLang): low, medium or high",
    "enable_thinking": "true/false: sent as chat_template_kwargs.enable_thinking (Qwen3 and "
                       "other hybrid thinking models on vLLM/SGLang)",
    "chat_template_kwargs": "JSON object merged into 'chat_template_kwargs' (vLLM/SGLang "
                            "chat-template switches, e.g. {\"thinking_budget\": 512})",
    "extra_body": "JSON object merged into the request body (any server-specific field)",
    "extra_body.<key>": "one body field: extra_body.top_k=20 sends \"top_k\": 20 (the value "
                        "is JSON, else a string)",
    "max_tokens_field": "name of the token-limit field: max_tokens (default) or "
                        "max_completion_tokens (OpenAI reasoning models)",
    "max_request_mb": "request byte budget, decimal MB (default 20): larger requests have "
                      "their images re-encoded as JPEG / downscaled until they fit, "
                      "recorded in meta image_transforms",
}

_EFFORTS = ("minimal", "low", "medium", "high")


def body_options(extra: dict[str, str]) -> tuple[dict[str, Any], str]:
    """The pass-through body fields and the token-limit field name from
    ``--model-option`` values. ``max_request_mb`` is carried as the private
    :data:`BUDGET_FIELD` (bytes), which :func:`build_body` removes before sending.
    Raises ``ValueError`` naming the key on a bad value."""
    fields: dict[str, Any] = {}
    template: dict[str, Any] = {}
    for key, value in extra.items():
        if key == "reasoning_effort":
            if value not in _EFFORTS:
                raise ValueError(f"reasoning_effort must be one of {', '.join(_EFFORTS)}, "
                                 f"got {value!r}")
            fields["reasoning_effort"] = value
        elif key == "enable_thinking":
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"enable_thinking must be true or false, got {value!r}")
            template["enable_thinking"] = value.lower() in ("true", "1")
        elif key == "chat_template_kwargs":
            template.update(_json_object(key, value))
        elif key == "extra_body":
            fields.update(_json_object(key, value))
        elif key.startswith("extra_body."):
            name = key.split(".", 1)[1]
            if not name:
                raise ValueError("extra_body.<key> needs a key name")
            fields[name] = _json_value(value)
    if template:
        merged = dict(fields.get("chat_template_kwargs") or {})
        merged.update(template)
        fields["chat_template_kwargs"] = merged
    if "max_request_mb" in extra:
        fields[BUDGET_FIELD] = request_budget_bytes(extra["max_request_mb"])
    limit_field = extra.get("max_tokens_field", "max_tokens")
    if limit_field not in ("max_tokens", "max_completion_tokens"):
        raise ValueError(f"max_tokens_field must be max_tokens or max_completion_tokens, "
                         f"got {limit_field!r}")
    return fields, limit_field


def request_budget_bytes(value: str) -> int:
    """``max_request_mb`` text (decimal MB, > 0) as bytes: ``"20"`` -> 20,000,000.
    Raises ``ValueError`` naming the key for anything else."""
    try:
        mb = float(value)
    except ValueError:
        mb = float("nan")
    if not mb > 0 or mb == float("inf"):
        raise ValueError(f"max_request_mb must be a number of megabytes > 0, got {value!r}")
    return int(mb * 1_000_000)


def probable_size_limit(status: int, request_bytes: int, largest_ok_bytes: int | None
                        ) -> str | None:
    """The hint added to an HTTP ``status`` error when it probably means "request too
    large": a 404 for a request of at least :data:`PROBABLE_LIMIT_MIN_BYTES` when a
    smaller request (``largest_ok_bytes``, the largest answered so far) succeeded on the
    same endpoint. ``None`` otherwise (any other status, a small request, or no success
    yet to compare with)."""
    if (status != 404 or request_bytes < PROBABLE_LIMIT_MIN_BYTES
            or largest_ok_bytes is None or largest_ok_bytes >= request_bytes):
        return None
    return (f"probably a request-size limit: this request was {request_bytes:,} bytes, the "
            f"largest answered one {largest_ok_bytes:,} bytes; lower --model-option "
            "max_request_mb")


class SentImages(list[list[int]]):
    """The ``[[width, height], …]`` pixel sizes of the images sent (a plain list to JSON),
    with :attr:`transforms`: one dict per image re-encoded for the byte budget
    (``image``: index, ``path``, ``format``, ``quality``, ``scale``, ``size``
    ``[w, h]``, ``bytes_before`` / ``bytes_after`` encoded), :attr:`estimated_bytes` of the
    request and :attr:`budget_bytes` (``over_budget`` is true when no step made it fit)."""

    def __init__(self, sizes: list[list[int]] | None = None) -> None:
        super().__init__(sizes or [])
        self.transforms: list[dict[str, Any]] = []
        self.estimated_bytes = 0
        self.budget_bytes = 0
        self.over_budget = False


def _json_value(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _json_object(key: str, value: str) -> dict[str, Any]:
    try:
        obj = json.loads(value)
    except ValueError:
        raise ValueError(f"{key} must be a JSON object, got {value!r}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{key} must be a JSON object, got {value!r}")
    return obj


class ImageCache:
    """Thread-safe LRU of encoded images: key -> (data URL, [width, height] sent)."""

    def __init__(self, max_bytes: int = IMAGE_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: collections.OrderedDict[tuple[Any, ...], tuple[str, list[int]]] = (
            collections.OrderedDict())
        self._bytes = 0
        self._lock = threading.Lock()
        self.encoded = 0  # images encoded so far (misses)

    @staticmethod
    def key(part: ImagePart, cap: SizeCap) -> tuple[Any, ...] | None:
        """The LRU key, or ``None`` when the file cannot be stat'ed (load reports it)."""
        try:
            st = os.stat(part.path)
        except OSError:
            return None
        return (part.path, part.page, st.st_mtime_ns, st.st_size, cap.max_side, cap.max_pixels)

    def peek(self, key: tuple[Any, ...] | None) -> tuple[str, list[int]] | None:
        if key is None:
            return None
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def get(self, part: ImagePart, cap: SizeCap) -> tuple[str, list[int]]:
        """Data URL and sent size of ``part``; decodes and encodes it on a miss. Raises
        :class:`~heritage_eval.core.images.ImageLoadError` for an unreadable file."""
        key = self.key(part, cap)
        hit = self.peek(key)
        if hit is not None:
            return hit
        img = load_image(part.path, part.page, cap)
        value = (data_url(encode_image(img)), [img.width, img.height])
        if key is None:  # vanished after loading: do not cache
            return value
        with self._lock:
            self.encoded += 1
        self._store(key, value)
        return value

    def variant(self, part: ImagePart, cap: SizeCap, quality: int, scale: float,
                decoded: dict[tuple[str, int], Image.Image]) -> tuple[str, list[int]]:
        """The JPEG data URL and size of ``part`` at ``quality`` with each side times
        ``scale`` (a :data:`BUDGET_STEPS` step), from the LRU or encoded now (the capped
        image is decoded once per request into ``decoded``). Raises ``ImageLoadError``."""
        base = self.key(part, cap)
        key = None if base is None else (*base, "jpeg", quality, scale)
        hit = self.peek(key)
        if hit is not None:
            return hit
        img = decoded.get((part.path, part.page))
        if img is None:
            img = decoded[(part.path, part.page)] = load_image(part.path, part.page, cap)
        if scale < 1.0:
            img = img.resize((max(1, int(img.width * scale)), max(1, int(img.height * scale))),
                             Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=quality)
        value = (data_url(buf.getvalue(), "JPEG"), [img.width, img.height])
        if key is not None:
            self._store(key, value)
        return value

    def _store(self, key: tuple[Any, ...], value: tuple[str, list[int]]) -> None:
        with self._lock:
            if key not in self._items:
                self._items[key] = value
                self._bytes += len(value[0])
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, (old, _) = self._items.popitem(last=False)
                self._bytes -= len(old)

    def all_cached(self, messages: list[Message], cap: SizeCap) -> bool:
        """True when every image of ``messages`` is already encoded (no decoding needed)."""
        for m in messages:
            for p in m.content:
                if isinstance(p, ImagePart) and self.peek(self.key(p, cap)) is None:
                    return False
        return True


def build_body(model: str, messages: list[Message], settings: GenerationSettings,
               cap: SizeCap, images: ImageCache, fields: dict[str, Any],
               limit_field: str = "max_tokens") -> tuple[dict[str, Any], SentImages]:
    """The JSON body and the images sent (:class:`SentImages`: ``[[w, h], …]`` pixels
    plus the budget transforms). Images appear in user messages only; ``fields``
    (pass-through options) are merged in last, except :data:`BUDGET_FIELD`, the request
    byte budget (default :data:`DEFAULT_MAX_REQUEST_MB`), which is applied (module
    docstring) and not sent. Raises ``ImageLoadError`` for an unreadable image."""
    fields = dict(fields)
    budget = int(fields.pop(BUDGET_FIELD, DEFAULT_MAX_REQUEST_MB * 1_000_000))
    sizes = SentImages()
    out: list[dict[str, Any]] = []
    slots: list[tuple[ImagePart, dict[str, Any]]] = []  # each image part and its JSON
    text_bytes = BODY_OVERHEAD_BYTES
    for m in messages:
        if m.role != "user" or not any(isinstance(p, ImagePart) for p in m.content):
            out.append({"role": m.role, "content": m.text()})
            text_bytes += len(m.text().encode("utf-8")) + 32
            continue
        parts: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, TextPart):
                parts.append({"type": "text", "text": p.text})
                text_bytes += len(p.text.encode("utf-8")) + 32
            else:
                url, size = images.get(p, cap)
                sizes.append(size)
                image_url = {"url": url}
                slots.append((p, image_url))
                parts.append({"type": "image_url", "image_url": image_url})
        out.append({"role": m.role, "content": parts})
    _fit_budget(slots, sizes, text_bytes, budget, cap, images)
    body: dict[str, Any] = {"model": model, "messages": out,
                            "temperature": settings.temperature,
                            limit_field: settings.max_tokens}
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.seed is not None:
        body["seed"] = settings.seed
    body.update(fields)
    return body, sizes


def _fit_budget(slots: list[tuple[ImagePart, dict[str, Any]]], sizes: SentImages,
                text_bytes: int, budget: int, cap: SizeCap, images: ImageCache) -> None:
    """Re-encode images in place (``slots``' ``image_url`` dicts and ``sizes``) until the
    estimated request fits ``budget`` bytes: each round advances the image whose data URL
    is largest by one :data:`BUDGET_STEPS` step. Records what changed in ``sizes``."""
    lengths = [len(ref["url"]) for _, ref in slots]
    sizes.budget_bytes = budget
    sizes.estimated_bytes = text_bytes + sum(lengths)
    if sizes.estimated_bytes <= budget:
        return
    original = list(lengths)
    step = [-1] * len(slots)  # -1: the image as first encoded (PNG)
    decoded: dict[tuple[str, int], Image.Image] = {}
    while sizes.estimated_bytes > budget:
        movable = [i for i in range(len(slots)) if step[i] + 1 < len(BUDGET_STEPS)]
        if not movable:
            sizes.over_budget = True
            break
        i = max(movable, key=lambda k: lengths[k])
        step[i] += 1
        quality, scale = BUDGET_STEPS[step[i]]
        url, size = images.variant(slots[i][0], cap, quality, scale, decoded)
        slots[i][1]["url"] = url
        sizes[i] = size
        sizes.estimated_bytes += len(url) - lengths[i]
        lengths[i] = len(url)
    for i, s in enumerate(step):
        if s >= 0:
            quality, scale = BUDGET_STEPS[s]
            sizes.transforms.append({
                "image": i, "path": slots[i][0].path, "format": "JPEG", "quality": quality,
                "scale": scale, "size": sizes[i], "bytes_before": _url_bytes(original[i]),
                "bytes_after": _url_bytes(lengths[i]), "reason": "request byte budget"})


def _url_bytes(url_length: int) -> int:
    """Encoded image bytes of a base64 data URL of ``url_length`` characters (x 3/4 of
    the base64 part; the ``data:image/…;base64,`` prefix, 22-23 characters, left out)."""
    return max(0, url_length - 23) * 3 // 4
