"""Ctrl-C while :func:`stream_items` is running: whatever the moment, the caller gets
``KeyboardInterrupt`` (never asyncio's ``RuntimeError('Event loop stopped before Future
completed.')``), what was in flight is cancelled and the backend closed
(``core/loop_finish.py``)."""

from __future__ import annotations

import asyncio
import gc
import signal
from typing import Any

import pytest

from heritage_eval.core.loop_finish import run_to_end
from heritage_eval.core.runner import RunItem, stream_items
from heritage_eval.core.types import Conversation, GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


async def _step_then_interrupt() -> str:
    """A step that finishes while a callback queued before its end raises Ctrl-C: the
    shape asyncio's SIGINT handler gives when the step is already done."""
    asyncio.get_running_loop().call_soon(_raise_interrupt)
    return "done"


async def _three_iterations() -> int:
    for _ in range(3):
        await asyncio.sleep(0)
    return 42


def test_plain_asyncio_fails_after_such_a_step_and_run_to_end_does_not() -> None:
    # the premise, from CPython's asyncio (base_events.run_until_complete): the finished
    # step's stop callback stays queued and stops the next run
    plain = asyncio.Runner()
    with pytest.raises(KeyboardInterrupt):
        plain.run(_step_then_interrupt())
    with pytest.raises(RuntimeError, match="Event loop stopped before Future completed"):
        plain.run(_three_iterations())
    plain.close()
    runner = asyncio.Runner()
    with pytest.raises(KeyboardInterrupt):
        runner.run(_step_then_interrupt())
    assert run_to_end(runner, _three_iterations()) == 42
    runner.close()


def test_run_to_end_passes_on_the_coroutines_own_errors() -> None:
    async def fails() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("its own")

    with asyncio.Runner() as runner, pytest.raises(RuntimeError, match="its own"):
        run_to_end(runner, fails())


class InterruptAt(ModelBackend):
    """Sends a real SIGINT to this process at its ``stop``-th request (as Ctrl-C does);
    answers after ``delay`` seconds; counts calls and ``aclose``."""

    backend = "test"
    model_id = "interrupt-at"

    def __init__(self, stop: int, delay: float, concurrency: int) -> None:
        self.stop, self.delay, self.max_concurrency = stop, delay, concurrency
        self.calls = 0
        self.closed = 0
        self.cancelled = 0

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        self.calls += 1
        if self.calls == self.stop:
            signal.raise_signal(signal.SIGINT)
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return Response(text="ok")

    async def aclose(self) -> None:
        self.closed += 1


# every request position of the first window and beyond, one and several conversations
# in flight, answers at once or after a loop turn: the grid covers the moments at which
# the step's task is running, just done, or not yet started
@pytest.mark.parametrize("concurrency", [1, 2, 5])
@pytest.mark.parametrize("delay", [0.0, 0.001])
@pytest.mark.parametrize("stop", [1, 2, 3, 4, 7, 12, 20, 33])
def test_ctrl_c_at_any_request_stops_the_stream_cleanly(stop: int, delay: float,
                                                        concurrency: int) -> None:
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    backend = InterruptAt(stop, delay, concurrency)
    items = (RunItem(id=f"s{i}", conversation=Conversation(
        turns=(Message.user(f"q{i}"),))) for i in range(40))
    got = []
    with pytest.raises(KeyboardInterrupt):
        for res in stream_items(items, backend, GenerationSettings(), None,
                                concurrency=concurrency):
            got.append(res.id)
    gc.collect()
    assert backend.closed == 1
    assert backend.calls >= stop and len(got) < 40
    # results handed out before the stop are the first ones, in input order
    assert got == [f"s{i}" for i in range(len(got))]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
