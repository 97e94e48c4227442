"""Request bodies for ``/chat/completions``: messages, images encoded once, pass-through
options (reasoning effort, thinking switches, any extra JSON field).

Images are sent as base64 PNG data URLs after the size cap. An LRU of encoded data URLs
keyed by (path, page, modification time, byte size, cap) means an image is encoded once
per run, not once per request, turn or retry (a MUSE dialogue re-sends its image on every
turn). The LRU holds at most :data:`IMAGE_CACHE_BYTES` of data URLs.
"""

from __future__ import annotations

import collections
import json
import os
import threading
from typing import Any

from heritage_eval.core.images import SizeCap, data_url, encode_image, load_image
from heritage_eval.core.types import GenerationSettings, ImagePart, Message, TextPart

#: Largest total size of cached data URLs, characters (= bytes).
IMAGE_CACHE_BYTES = 256 * 1024 * 1024

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
}

_EFFORTS = ("minimal", "low", "medium", "high")


def body_options(extra: dict[str, str]) -> tuple[dict[str, Any], str]:
    """The pass-through body fields and the token-limit field name from
    ``--model-option`` values. Raises ``ValueError`` naming the key on a bad value."""
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
    limit_field = extra.get("max_tokens_field", "max_tokens")
    if limit_field not in ("max_tokens", "max_completion_tokens"):
        raise ValueError(f"max_tokens_field must be max_tokens or max_completion_tokens, "
                         f"got {limit_field!r}")
    return fields, limit_field


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
            if key not in self._items:
                self._items[key] = value
                self._bytes += len(value[0])
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, (old, _) = self._items.popitem(last=False)
                self._bytes -= len(old)
        return value

    def all_cached(self, messages: list[Message], cap: SizeCap) -> bool:
        """True when every image of ``messages`` is already encoded (no decoding needed)."""
        for m in messages:
            for p in m.content:
                if isinstance(p, ImagePart) and self.peek(self.key(p, cap)) is None:
                    return False
        return True


def build_body(model: str, messages: list[Message], settings: GenerationSettings,
               cap: SizeCap, images: ImageCache, fields: dict[str, Any],
               limit_field: str = "max_tokens") -> tuple[dict[str, Any], list[list[int]]]:
    """The JSON body and the image sizes sent (``[[w, h], …]`` pixels). Images appear in
    user messages only; ``fields`` (pass-through options) are merged in last."""
    sizes: list[list[int]] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role != "user" or not any(isinstance(p, ImagePart) for p in m.content):
            out.append({"role": m.role, "content": m.text()})
            continue
        parts: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, TextPart):
                parts.append({"type": "text", "text": p.text})
            else:
                url, size = images.get(p, cap)
                sizes.append(size)
                parts.append({"type": "image_url", "image_url": {"url": url}})
        out.append({"role": m.role, "content": parts})
    body: dict[str, Any] = {"model": model, "messages": out,
                            "temperature": settings.temperature,
                            limit_field: settings.max_tokens}
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.seed is not None:
        body["seed"] = settings.seed
    body.update(fields)
    return body, sizes
