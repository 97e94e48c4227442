"""The default executor: every conversation on an asyncio event loop of this process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from heritage_eval.core.backends import ModelBackend
    from heritage_eval.core.cache import ResponseCache
    from heritage_eval.core.runner import ItemResult, RunItem
    from heritage_eval.core.types import GenerationSettings


class LocalExecutor:
    """:func:`heritage_eval.core.runner.run_items_async` run to completion (in a worker
    thread when the caller already has a running event loop)."""

    name = "local"

    def run(self, items: Sequence[RunItem], backend: ModelBackend,
            settings: GenerationSettings, cache: ResponseCache | None,
            concurrency: int | None = None, desc: str = "requests",
            on_result: Callable[[ItemResult], None] | None = None,
            ) -> dict[str, ItemResult]:
        """See :class:`heritage_eval.core.executors.Executor`."""
        from heritage_eval.core.runner import run_items_async, run_sync

        return run_sync(run_items_async(items, backend, settings, cache, concurrency, desc,
                                        on_result=on_result))
