"""Several endpoints, balancing, adaptive concurrency and the circuit breaker (issue 9
items 2 and 4), against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.cliargs.run_options import add_run_options, run_config_from_args
from heritage_eval.core.config import BenchmarkOptions, RunConfig
from heritage_eval.core.run_parts import backend_from_config
from heritage_eval.core.types import GenerationSettings, ImagePart, Message
from heritage_eval.models.endpoints import AdaptiveLimit, read_urls_file
from heritage_eval.models.openai_compat import OpenAICompatBackend
from tests.fake_server import FakeServer, Scripted, chat_reply, fake_openai_server
from tests.models.util import KEY_ENV, make_backend, run_many


def test_circuit_breaker_ends_the_run_within_seconds_when_the_server_dies() -> None:
    # Guards against a dead server costing hours: 125 samples once took 270 s of retries
    # and the run exited 0. After 10 answers the server is killed; the breaker opens and
    # every remaining request returns at once, without network.
    with fake_openai_server() as srv:
        answered = 0

        def reply(body: dict[str, Any]) -> Scripted:
            nonlocal answered
            answered += 1
            if answered == 10:
                threading.Thread(target=srv.stop).start()
            return Scripted(body=chat_reply("ok").body, delay_s=0.01)

        srv.responder = reply
        b = make_backend(srv.base_url, retries=5, circuit_breaker="8", circuit_window_s="0.3",
                         backoff_base_s="0.05", backoff_max_s="0.2")
        start = time.monotonic()
        res = run_many(b, 200, 4)
        wall = time.monotonic() - start
    kinds = Counter(r.responses[0].meta.get("failure", "ok") for r in res.values())
    assert wall < 10, wall  # seconds, not 200 x 6 attempts of backoff
    assert b.fatal_error is not None and "requests in a row failed" in b.fatal_error
    # the 10th answer and those in flight when it died may be lost: 6 to 10 answered
    assert 6 <= kinds["ok"] <= 10 and kinds["circuit_open"] >= 150, kinds
    opened = next(r.responses[0] for r in res.values()
                  if r.responses[0].meta.get("failure") == "circuit_open")
    assert (opened.error or "").startswith("circuit open: ")


def test_circuit_breaker_zero_is_off() -> None:
    # Guards the opt-out: circuit_breaker=0 never stops the run.
    with fake_openai_server() as srv:
        srv.responder = lambda body: Scripted(status=500, body={"error": "down"})
        b = make_backend(srv.base_url, retries=1, circuit_breaker="0", circuit_window_s="0")
        res = run_many(b, 12, 2)
    assert b.fatal_error is None
    assert all(r.responses[0].meta["failure"] == "server_error" for r in res.values())


def test_failing_endpoint_is_taken_out_and_the_other_answers_everything() -> None:
    # Guards against one dead replica turning a share of the samples into errors.
    with fake_openai_server() as good, fake_openai_server() as bad:
        bad.responder = lambda body: Scripted(status=502, body={"error": "bad gateway"})
        good.responder = lambda body: chat_reply("fine")
        b = make_backend([bad.base_url, good.base_url], retries=2, cooldown_s="30")
        res = run_many(b, 40, 2)
    assert all(r.error is None for r in res.values())
    assert len(good.requests) == 40
    # taken out after 3 failures in a row (the default), then left out for the cool-down
    assert len(bad.requests) == 3


def test_balancing_splits_requests_between_healthy_endpoints() -> None:
    # Guards against every request going to the first URL (replicas left idle).
    with fake_openai_server() as a, fake_openai_server() as c:
        for srv in (a, c):
            srv.responder = lambda body: Scripted(body=chat_reply("x").body, delay_s=0.03)
        b = make_backend([a.base_url, c.base_url], concurrency=4)
        assert b.max_concurrency == 8  # the runner keeps concurrency x endpoints in flight
        res = run_many(b, 80, b.max_concurrency)
    assert all(r.error is None for r in res.values())
    assert 30 <= len(a.requests) <= 50 and len(a.requests) + len(c.requests) == 80


def _track_in_flight(srv: FakeServer, first_429: int) -> dict[str, int]:
    state = {"now": 0, "peak_early": 0, "peak_late": 0, "n": 0}
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> Scripted:
        with lock:
            state["n"] += 1
            n = state["n"]
            state["now"] += 1
            key = "peak_early" if n <= first_429 else "peak_late"
            state[key] = max(state[key], state["now"])
        time.sleep(0.03)
        with lock:
            state["now"] -= 1
        if first_429 < n <= first_429 + 24:
            return Scripted(status=429, body={"error": "slow down"}, headers={"Retry-After": "0"})
        return chat_reply("ok")

    srv.responder = reply
    return state


def test_adaptive_concurrency_halves_on_429() -> None:
    # Guards against hammering a rate-limited server at full concurrency.
    with fake_openai_server() as srv:
        _track_in_flight(srv, first_429=16)
        b = make_backend(srv.base_url, retries=8, concurrency=16)
        seen: list[int] = []

        async def watch() -> None:
            while True:
                seen.append(b.gate.limit)
                await asyncio.sleep(0.005)

        async def go() -> None:
            from heritage_eval.core.runner import RunItem, run_items_async
            from heritage_eval.core.types import Conversation
            task = asyncio.create_task(watch())
            items = [RunItem(f"q{i}", Conversation(turns=(Message.user(f"q {i}"),)))
                     for i in range(64)]
            res = await run_items_async(items, b, GenerationSettings(), None, concurrency=16)
            task.cancel()
            assert all(r.error is None for r in res.values())

        asyncio.run(go())
    assert b.gate.cuts >= 1 and min(seen) <= 8  # at least one halving from 16
    assert max(seen) <= 16  # never above concurrency x endpoints (one endpoint)


def test_adaptive_limit_bounds_and_latency_cut() -> None:
    # Guards the AIMD arithmetic (by hand): +1 after `limit` healthy completions up to the
    # maximum, halved when latency doubles, never below 1. Time is a fake clock.
    now = [0.0]
    gate = AdaptiveLimit(initial=4, maximum=6)
    gate.monotonic = lambda: now[0]
    for _ in range(4 + 5):
        gate.completed(0.2)
    assert gate.limit == 6
    # latency 1.0 s after a 0.2 s floor: the smoothed latency 0.2 + 0.8 * (1 - 0.9**k)
    # passes 2 * 0.2 + 0.05 at the 4th such completion: one cut to 3, the floor is
    # re-learnt at 1.0 s, and 3 + 4 + 5 more completions grow it back to 6
    for _ in range(4):
        gate.completed(1.0)
    assert (gate.cuts, gate.limit) == (1, 3)
    for _ in range(3 + 4 + 5 - 1):
        gate.completed(1.0)
    assert gate.limit == 5
    gate.completed(1.0)
    assert gate.limit == 6 and gate.cuts == 1
    gate.overloaded()  # the same instant as the latency cut: within one round trip
    assert (gate.limit, gate.cuts) == (6, 1)
    now[0] = 1.0
    gate.overloaded()
    gate.overloaded()  # the same instant again: no second cut
    assert (gate.limit, gate.cuts) == (3, 2)
    for _ in range(10):
        now[0] += 1.0  # a round trip (the smoothed latency, 1 s) apart: each one cuts
        gate.overloaded()
    assert gate.limit == 1 and gate.cuts == 12


def test_image_is_encoded_once_per_conversation_not_per_turn_or_retry(tmp_path: Path) -> None:
    # Guards against re-decoding and PNG-encoding the same image on every turn and retry
    # (a MUSE dialogue sends its image with each of 4 turns).
    img = tmp_path / "a.png"
    Image.new("RGB", (300, 100), "white").save(img)
    with fake_openai_server() as srv:
        srv.script = [Scripted(status=500, body={}), chat_reply("one"), chat_reply("two")]
        b = make_backend(srv.base_url)
        first = Message.user(ImagePart(path=str(img)), "turn 1")

        async def go() -> None:
            s = GenerationSettings()
            r1 = await b.generate([first], s, {})
            r2 = await b.generate([first, Message.assistant("one"), Message.user("turn 2")],
                                  s, {})
            assert r1.ok and r2.ok and r1.meta["sent_image_sizes"] == [[64, 21]]
            await b.aclose()

        asyncio.run(go())
    assert b.images.encoded == 1 and len(srv.requests) == 3


def test_thinking_options_are_passed_through_and_change_the_cache_identity() -> None:
    # Guards against --model-option thinking controls being dropped (or cached as if
    # they changed nothing).
    with fake_openai_server() as srv:
        extra = {"reasoning_effort": "low", "enable_thinking": "false",
                 "extra_body": '{"top_k": 20}', "extra_body.min_p": "0.05",
                 "max_tokens_field": "max_completion_tokens"}
        b = make_backend(srv.base_url, **extra)  # type: ignore[arg-type]
        run_many(b, 1, 1)
    body = srv.requests[0]
    assert body["reasoning_effort"] == "low" and body["top_k"] == 20 and body["min_p"] == 0.05
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["max_completion_tokens"] == 1024 and "max_tokens" not in body
    assert b.identity() != make_backend(srv.base_url).identity()
    assert "request_options" not in make_backend(srv.base_url).identity()  # old keys hold


def test_cli_base_url_repeatable_and_file(tmp_path: Path) -> None:
    # Guards the CLI: one --base-url works as before; several and a file are merged.
    p = argparse.ArgumentParser()
    add_run_options(p, BenchmarkOptions)
    urls = tmp_path / "urls.txt"
    urls.write_text("# replicas\nhttp://127.0.0.1:8001/v1\n\nhttp://127.0.0.1:8002/v1  # b\n")

    def config(argv: list[str]) -> RunConfig:
        return run_config_from_args(p.parse_args(argv), "x", BenchmarkOptions)

    one = config(["--model", "openai:m", "--base-url", "http://127.0.0.1:8000/v1",
                  "--out", "x"])
    assert one.model.base_url == ("http://127.0.0.1:8000/v1",)
    b1 = backend_from_config(one.model)
    assert isinstance(b1, OpenAICompatBackend) and b1.base_urls == list(one.model.base_url)
    many = config(["--model", "openai:m", "--base-url", "http://127.0.0.1:8000/v1",
                   "--base-url", "http://127.0.0.1:8003/v1", "--base-urls-file",
                   str(urls), "--concurrency", "5", "--out", "x"])
    b = backend_from_config(many.model)
    assert isinstance(b, OpenAICompatBackend)
    assert b.base_urls == ["http://127.0.0.1:8000/v1", "http://127.0.0.1:8003/v1",
                           "http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"]
    # the gate starts at what the run asked for: 5 per endpoint x 4 endpoints
    assert b.max_concurrency == 20 and b.gate.limit == 20
    assert read_urls_file(urls) == b.base_urls[2:]
    urls.write_text("# nothing\n")
    with pytest.raises(ValueError, match="lists no endpoint URL"):
        read_urls_file(urls)


def test_http_proxy_from_the_environment_is_used_with_the_same_outcomes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Guards the proxy path (*_PROXY honoured as aiohttp's trust_env does): requests for
    # a host only the proxy knows reach it, with the same answers and failure kinds.
    # The fake server plays the forward proxy: it sees absolute-form request targets.
    with fake_openai_server() as srv:
        proxy = srv.base_url.rsplit("/v1", 1)[0]
        for name in ("HTTP_PROXY", "http_proxy"):
            monkeypatch.setenv(name, proxy)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv(KEY_ENV, "sk-proxytest-0123456789")
        upstream = "http://upstream.invalid/v1"
        srv.script = [Scripted(status=500, body={}), chat_reply("via proxy")]
        res = run_many(make_backend(upstream), 1, 1)
        srv.responder = lambda body: Scripted(status=413, body={"error": "too large"})
        big = run_many(make_backend(upstream), 1, 1, prefix="b")
    r = res["q0"].responses[0]
    assert r.ok and r.text == "via proxy" and r.attempts == 2
    assert big["b0"].responses[0].meta["failure"] == "input_too_large"
    assert srv.gets and all(g.startswith(f"{upstream}/models") for g in srv.gets), srv.gets
