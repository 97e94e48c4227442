"""Run a clean-up coroutine to its end on an :class:`asyncio.Runner` whose last step was
stopped by Ctrl-C.

:func:`~heritage_eval.core.runner.stream_items` drives one event loop a step at a time
(``runner.run(window.next_batch())``). asyncio's SIGINT handler cancels the step's task;
but when that task has just finished and the loop is still running the other tasks of
the same iteration (a conversation in flight), the handler raises ``KeyboardInterrupt``
inside whichever task runs (CPython 3.11–3.13, ``asyncio.runners.Runner._on_sigint``).
The interrupt leaves the loop with the finished step's stop callback still queued, so
the next ``run_until_complete`` stops at once and raises ``RuntimeError('Event loop
stopped before Future completed.')`` — which replaced the ``KeyboardInterrupt`` and
skipped the clean-up (seen in about one run in fifteen under load).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: Loop runs tried before giving up: each stale stop callback costs one.
MAX_RUNS = 8


def run_to_end(runner: asyncio.Runner, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on ``runner``'s loop until it ends and return its result, running the
    loop again while it stops early on a stop callback left by an interrupted step.

    Raises what ``coro`` raises; ``RuntimeError`` if the loop still stops before the
    end after :data:`MAX_RUNS` runs (something keeps stopping it)."""
    loop = runner.get_loop()
    task = loop.create_task(coro)
    for _ in range(MAX_RUNS - 1):
        try:
            return loop.run_until_complete(task)
        except RuntimeError:
            if task.done():  # the coroutine's own RuntimeError
                raise
    return loop.run_until_complete(task)
