"""The streaming runner (issue 11): batched cache reads, results in input order from a
bounded window over a lazy plan, early close, and the one-pass sample-order results."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.core import cache as cache_mod
from heritage_eval.core import runner
from heritage_eval.core.cache import KeyPieces, ResponseCache, request_key
from heritage_eval.core.runner import (
    ItemResult,
    RunItem,
    cached_prefixes,
    run_items,
    stream_items,
)
from heritage_eval.core.streamed_results import OnePassResults, SamplePlan, in_sample_order
from heritage_eval.core.types import Conversation, GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend


class SlowEcho(ModelBackend):
    """Answers ``"<text>!"`` after ``delays[text]`` seconds (default 0); counts calls,
    requests in flight and ``aclose`` calls."""

    backend = "test"
    model_id = "slow-echo"
    max_concurrency = 3

    def __init__(self, delays: dict[str, float] | None = None) -> None:
        self.delays = delays or {}
        self.calls = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.closed = 0

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        text = messages[-1].text()
        self.calls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delays.get(text, 0.0))
        finally:
            self.in_flight -= 1
        return Response(text=f"{text}!")

    async def aclose(self) -> None:
        self.closed += 1


def _conv(*turns: str) -> Conversation:
    return Conversation(turns=tuple(Message.user(t) for t in turns))


def test_get_many_equals_get_and_sees_pending_writes(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "READ_BATCH", 3)  # 7 keys: three queries
    cache = ResponseCache(tmp_path / "c.sqlite")
    keys = [f"k{i}" for i in range(7)]
    for i, k in enumerate(keys[:6]):
        cache.put(k, "m", Response(text=f"t{i}", latency_s=0.5))
    cache.flush()
    cache.put("k5", "m", Response(text="newer"))  # queued, not committed: still seen
    got = cache.get_many([*keys, "k0"])  # a repeated key is read once
    assert sorted(got) == keys[:6]  # k6 was never stored
    for k in keys[:6]:
        one = cache.get(k)
        assert one is not None and got[k] == one and got[k].cached
    assert got["k5"].text == "newer" and got["k2"].text == "t2" and got["k2"].latency_s == 0.5
    cache.close()


def test_key_pieces_equal_request_key() -> None:
    ident = {"backend": "x", "model": "y"}
    settings = GenerationSettings(temperature=0.3, max_tokens=7)
    msgs = [Message.system("sys"), Message.user("q \u5929")]
    pieces = KeyPieces(ident, settings)
    assert pieces.key(msgs) == request_key(ident, settings, msgs)
    assert pieces.key(msgs, False, {"a": 1}) == request_key(ident, settings, msgs, False,
                                                             {"a": 1})


def test_cached_prefixes_read_turn_by_turn(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    b = SlowEcho()
    # first run: a has its 3 turns cached; b only its first (its 2nd failed)
    run_items([RunItem("a", _conv("a1", "a2", "a3"))], b, GenerationSettings(), cache)
    run_items([RunItem("b", _conv("b1"))], b, GenerationSettings(), cache)
    items = [RunItem("a", _conv("a1", "a2", "a3")), RunItem("b", _conv("b1", "b2")),
             RunItem("c", _conv("c1"))]
    prefixes = cached_prefixes(items, b, GenerationSettings(), cache)
    # by hand: SlowEcho answers text + "!"
    assert [[r.text for r in p] for p, _ in prefixes] == [["a1!", "a2!", "a3!"], ["b1!"], []]
    assert [e for _, e in prefixes] == [None, None, None]
    assert all(r.cached for p, _ in prefixes for r in p)
    # the one-item form agrees
    assert runner.cached_prefix(items[1], b, GenerationSettings(), cache)[0] == prefixes[1][0]
    cache.close()


def test_cached_prefix_error_for_unreadable_image(tmp_path: Path) -> None:
    from heritage_eval.core.types import ImagePart

    cache = ResponseCache(tmp_path / "c.sqlite")
    conv = Conversation(turns=(Message.user(ImagePart(path=str(tmp_path / "gone.png"))),))
    [(prefix, error)] = cached_prefixes([RunItem("x", conv)], SlowEcho(),
                                        GenerationSettings(), cache)
    assert prefix == [] and error is not None and "image file not found" in error
    cache.close()


def test_stream_keeps_input_order_and_a_bounded_window(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    monkeypatch.setattr(runner, "WINDOW_MIN", 5)
    monkeypatch.setattr(runner, "WINDOW_FACTOR", 1)
    # early items are the slowest: they finish last, yet come out first
    b = SlowEcho({f"q{i}": 0.02 * (4 - i) for i in range(4)})
    planned = 0

    def lazy() -> Iterator[RunItem]:
        nonlocal planned
        for i in range(23):
            planned += 1
            yield RunItem(f"s{i}", _conv(f"q{i}"))

    ahead = []
    out = []
    for res in stream_items(lazy(), b, GenerationSettings(), None, concurrency=2):
        out.append(res)
        ahead.append(planned - len(out))
    assert [r.id for r in out] == [f"s{i}" for i in range(23)]
    assert [r.responses[0].text for r in out] == [f"q{i}!" for i in range(23)]
    # window = max(5, 1 x 2) = 5: at most 5 planned and not yet handed out, so at most
    # 4 ahead of the one just handed out (planned - handed out after the yield)
    assert max(ahead) <= 4
    assert b.most_in_flight == 2
    assert b.closed == 1


def test_stream_closed_early_cancels_and_closes_backend() -> None:
    b = SlowEcho({"q1": 5.0})  # would take 5 s; closing must not wait for it
    items = [RunItem(f"s{i}", _conv(f"q{i}")) for i in range(3)]
    with contextlib.closing(stream_items(items, b, GenerationSettings(), None,
                                         concurrency=3)) as stream:
        first = next(stream)
    assert first.id == "s0" and b.closed == 1
    assert b.in_flight == 0  # q1 and q2 were cancelled


def test_stream_serves_cached_items_without_sending(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    items = [RunItem(f"s{i}", _conv(f"q{i}", f"r{i}")) for i in range(6)]
    run_items(items[:4], SlowEcho(), GenerationSettings(), cache)
    b = SlowEcho()
    out = list(stream_items(items, b, GenerationSettings(), cache))
    assert b.calls == 4  # 2 turns each of s4 and s5
    assert [[r.cached for r in res.responses] for res in out] == [[True, True]] * 4 + [
        [False, False]] * 2
    assert [res.responses[1].text for res in out] == [f"r{i}!" for i in range(6)]
    cache.close()


class _S:
    def __init__(self, sid: str) -> None:
        self.id = sid


def test_results_in_sample_order_with_unsent_samples() -> None:
    samples = [_S(s) for s in ["x0", "a", "x1", "x2", "b", "c", "x3"]]
    plan = SamplePlan(samples, lambda s: None if s.id.startswith("x") else _conv(s.id))
    results = (ItemResult(it.id, [Response(text=it.id.upper())]) for it in plan.items())
    pairs = list(in_sample_order(plan, results))
    assert [(sid, r.responses[0].text if r else None) for sid, r in pairs] == [
        ("x0", None), ("a", "A"), ("x1", None), ("x2", None), ("b", "B"), ("c", "C"),
        ("x3", None)]


def test_in_sample_order_refuses_a_result_for_another_item() -> None:
    plan = SamplePlan([_S("a"), _S("b")], lambda s: _conv(s.id))
    wrong = (ItemResult("b", []) for _ in plan.items())
    with pytest.raises(RuntimeError, match="'b' for sample 'a'"):
        list(in_sample_order(plan, wrong))


def test_one_pass_results_consume_on_read() -> None:
    r = {k: ItemResult(k, [Response(text=k)]) for k in "abc"}
    pairs = iter([("a", r["a"]), ("x", None), ("b", r["b"]), ("c", r["c"])])
    view = OnePassResults(pairs)
    assert view.get("a") is r["a"]
    assert view.get("a") is None  # consumed
    assert "x" not in view  # not sent
    assert "c" in view and view["c"] is r["c"]  # b buffered on the way to c
    assert list(view) == ["b"] and len(view) == 1
    with pytest.raises(KeyError):
        view["x"]


def test_stream_inside_a_running_loop_runs_the_plan_first() -> None:
    # Jupyter: a running loop in this thread; stream_items falls back to run_items
    # (its own loop in a worker thread) and still hands the results out in order
    b = SlowEcho({"q0": 0.05})
    items = [RunItem(f"s{i}", _conv(f"q{i}")) for i in range(4)]

    async def inside() -> list[str]:
        return [r.responses[0].text or "" for r in
                stream_items(items, b, GenerationSettings(), None, concurrency=4)]

    assert asyncio.run(inside()) == ["q0!", "q1!", "q2!", "q3!"]


DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"


def test_engine_plans_one_window_ahead_of_the_records_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
    from heritage_eval.cli.main import main
    from heritage_eval.core import engine

    class Transcriber(SlowEcho):
        async def generate(self, messages: list[Message], settings: GenerationSettings,
                           payload: dict[str, Any]) -> Response:
            return Response(text="<res>王</res>")

    monkeypatch.setattr(runner, "WINDOW_MIN", 3)
    monkeypatch.setattr(runner, "WINDOW_FACTOR", 1)
    monkeypatch.setattr(engine, "backend_from_config", lambda model: Transcriber())
    planned = 0
    plan = AncientBench.plan

    def counting_plan(self: AncientBench, sample: Any, ctx: Any, data: Any) -> Any:
        nonlocal planned
        planned += 1
        return plan(self, sample, ctx, data)

    leads: list[int] = []
    stream = engine.stream_samples

    def watched(path: Path, records: Iterator[Any], acc: Any, sink: Any) -> int:
        def each() -> Iterator[Any]:
            for n, r in enumerate(records, start=1):
                leads.append(planned - n)
                yield r
        return stream(path, each(), acc, sink)

    monkeypatch.setattr(AncientBench, "plan", counting_plan)
    monkeypatch.setattr(engine, "stream_samples", watched)
    assert main(["run", "ancient-bench", "--data", str(DEMO), "--concurrency", "1",
                 "--out", str(tmp_path / "out")]) == 0
    n = len((tmp_path / "out" / "samples.jsonl").read_text(encoding="utf-8").splitlines())
    assert n == len(leads) == planned == 27  # the demo release: 27 samples
    # window max(3, 1 x 1) = 3: never more than 3 planned ahead of the record written
    # (the whole release would be 26 ahead at the first record without streaming)
    assert max(leads) <= 3


def test_openai_backend_imports_no_http_client_until_a_request() -> None:
    # a cached re-run sends nothing: aiohttp (~0.2 s to import) must not be imported
    import subprocess
    import sys

    code = ("import sys; from heritage_eval.models.base import BackendOptions, "
            "create_backend; b = create_backend('openai:bench', BackendOptions("
            "base_url='http://127.0.0.1:9/v1')); print('aiohttp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "OPENAI_API_KEY": "x"})
    assert out.stdout.strip() == "False"
