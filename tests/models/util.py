"""Helpers for the ``openai`` backend tests: a backend on real loopback servers."""

from __future__ import annotations

import asyncio

from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.images import SizeCap
from heritage_eval.core.runner import ItemResult, RunItem, run_items_async
from heritage_eval.core.types import Conversation, GenerationSettings, Message, Response
from heritage_eval.models.endpoints import EndpointOptions
from heritage_eval.models.openai_compat import OpenAICompatBackend

KEY_ENV = "HE_TEST_KEY"


def make_backend(urls: str | list[str], *, retries: int = 3, timeout: float = 5.0,
                 concurrency: int | None = None, **extra: str) -> OpenAICompatBackend:
    """A backend with fast retries (10-20 ms backoff) unless ``extra`` says otherwise."""
    urls = [urls] if isinstance(urls, str) else urls
    options = {"backoff_base_s": "0.01", "backoff_max_s": "0.02", **extra}
    return OpenAICompatBackend("test-vlm", EndpointOptions(
        base_url=urls[0], base_urls=tuple(urls), concurrency=concurrency,
        api_key_env=KEY_ENV, timeout_s=timeout, max_retries=retries, extra=options,
        image_cap=SizeCap(max_side=64)))


def generate(b: OpenAICompatBackend, *messages: Message) -> Response:
    """One request in a fresh event loop, connections closed after."""
    async def go() -> Response:
        try:
            return await b.generate(list(messages) or [Message.user("hi")],
                                    GenerationSettings(max_tokens=50), {})
        finally:
            await b.aclose()
    return asyncio.run(go())


def run_many(b: OpenAICompatBackend, n: int, concurrency: int,
             cache: ResponseCache | None = None, prefix: str = "q") -> dict[str, ItemResult]:
    """``n`` one-turn conversations through the real runner."""
    items = [RunItem(f"{prefix}{i}", Conversation(turns=(Message.user(f"{prefix} {i}"),)))
             for i in range(n)]
    return asyncio.run(run_items_async(items, b, GenerationSettings(), cache,
                                       concurrency=concurrency))
