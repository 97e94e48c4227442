"""Fixtures of the core tests: the toy benchmark registered, a fake OpenAI server that
answers it (tests/core/toy_benchmark.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from heritage_eval.benchmarks import registry
from heritage_eval.core import plugins
from tests.fake_server import FakeServer, Scripted, chat_reply, fake_openai_server

# the answers of the fake server's two models (the toy benchmark, tests/core/toy_benchmark.py)
# model "a" is wrong on Spain and answers nothing on China; model "b" is always right
ANSWERS = {"a": {"France": "Paris", "Italy": "Rome.", "Spain": "Barcelona", "Japan": "Tokyo",
                 "China": ""},
           "b": {"France": "Paris", "Italy": "Rome", "Spain": "Madrid", "Japan": "Tokyo",
                 "China": "Beijing"}}


def responder(body: dict[str, Any]) -> Scripted:
    prompt = body["messages"][-1]["content"]
    text = prompt if isinstance(prompt, str) else prompt[-1]["text"]
    country = text.split("capital of ")[1].split("?")[0]
    return chat_reply(ANSWERS[body["model"]][country])




@pytest.fixture
def toy_registered() -> Iterator[None]:
    registry.load_all()
    registry.register_benchmark("toy-capitals", "toy benchmark",
                                "tests.core.toy_benchmark:Capitals")
    yield
    plugins.unregister_benchmark("toy-capitals")


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with fake_openai_server() as srv:
        srv.responder = responder
        yield srv


