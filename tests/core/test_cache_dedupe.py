"""Identical requests in flight at once are sent once (issue 22 item 6).

Same process: the runner's single flight (``core/inflight.py``). Across processes: claim
rows in the shared cache file (``core/cache_claims.py``), including a claim left by a
process killed with ``kill -9``, and two real ``heritage-eval run`` sharing ``--cache``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from heritage_eval.core import cache_claims
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.inflight import send_once
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import Conversation, GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend
from tests.fake_server import Scripted, chat_reply, fake_openai_server


class SlowBackend(ModelBackend):
    """Answers ``"<history texts joined by |>#<call number>"`` after ``delay`` seconds and
    counts its calls; a prompt ``FAIL`` fails."""

    backend = "test"
    model_id = "slow"

    def __init__(self, delay: float = 0.05, concurrency: int = 8) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.delay = delay
        self.max_concurrency = concurrency

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        self.calls.append(tuple(m.text() for m in messages))
        await asyncio.sleep(self.delay)
        if messages[-1].text() == "FAIL":
            return Response(text=None, error="scripted failure")
        return Response(text="|".join(m.text() for m in messages) + f"#{len(self.calls)}")


def _conv(*turns: str) -> Conversation:
    return Conversation(turns=tuple(Message.user(t) for t in turns))


@settings(max_examples=40, deadline=None)
@given(convs=st.lists(st.lists(st.sampled_from("abc"), min_size=1, max_size=3),
                      min_size=1, max_size=12),
       concurrency=st.integers(1, 8))
def test_each_distinct_request_is_sent_once(tmp_path_factory: pytest.TempPathFactory,
                                            convs: list[list[str]], concurrency: int) -> None:
    # Independent count: a turn's request is its whole history, i.e. the prefix of the
    # conversation's turns up to it (the assistant answers in between are a function of
    # that prefix here, since each prefix is answered once). Distinct prefixes, by hand:
    expected = {tuple(c[:i + 1]) for c in convs for i in range(len(c))}
    backend = SlowBackend(delay=0.01, concurrency=concurrency)
    cache = ResponseCache(tmp_path_factory.mktemp("c") / "c.sqlite")
    items = [RunItem(f"s{i}", _conv(*c)) for i, c in enumerate(convs)]
    res = run_items(items, backend, GenerationSettings(), cache, concurrency)
    cache.close()
    assert len(backend.calls) == len(expected)
    # each request sent: user turns at even places (no system prompt), answers between
    assert {call[::2] for call in backend.calls} == expected
    # identical conversations got identical answers
    by_turns: dict[tuple[str, ...], list[str | None]] = {}
    for c, item in zip(convs, items, strict=True):
        texts = [r.text for r in res[item.id].responses]
        assert by_turns.setdefault(tuple(c), texts) == texts


def test_same_key_in_flight_twice_is_sent_once_and_second_takes_the_answer(
        tmp_path: Path) -> None:
    backend = SlowBackend(delay=0.3)
    cache = ResponseCache(tmp_path / "c.sqlite")
    res = run_items([RunItem("x", _conv("q")), RunItem("y", _conv("q"))], backend,
                    GenerationSettings(), cache, concurrency=2)
    cache.close()
    assert len(backend.calls) == 1
    x, y = res["x"].responses[0], res["y"].responses[0]
    assert x.text == y.text == "q#1"
    assert [x.cached, y.cached].count(True) == 1  # the waiter's answer counts as a hit


def test_a_failed_request_is_sent_again_by_the_waiter(tmp_path: Path) -> None:
    backend = SlowBackend(delay=0.2)
    cache = ResponseCache(tmp_path / "c.sqlite")
    res = run_items([RunItem("x", _conv("FAIL")), RunItem("y", _conv("FAIL"))], backend,
                    GenerationSettings(), cache, concurrency=2)
    cache.close()
    assert len(backend.calls) == 2  # failures are not shared (never cached)
    assert all(res[i].error == "scripted failure" for i in ("x", "y"))


def test_a_cancelled_sender_leaves_the_waiter_to_send(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    calls: list[str] = []

    async def send(tag: str) -> Response:
        calls.append(tag)
        await asyncio.sleep(0.2)
        return Response(text=tag)

    async def main() -> Response:
        first = asyncio.ensure_future(send_once(cache, "k", "m", lambda: send("first")))
        await asyncio.sleep(0.02)
        second = asyncio.ensure_future(send_once(cache, "k", "m", lambda: send("second")))
        await asyncio.sleep(0.02)
        first.cancel()
        return await second

    resp = asyncio.run(main())
    assert calls == ["first", "second"] and resp.text == "second" and not resp.cached
    assert cache.get("k") is not None
    cache.close()


def test_two_handles_wait_for_each_others_claims(tmp_path: Path) -> None:
    # Two handles on one file are two owners, as two processes would be: B waits for A's
    # claim, then takes A's stored answer without sending.
    a, b = ResponseCache(tmp_path / "c.sqlite"), ResponseCache(tmp_path / "c.sqlite")
    assert a.claims.claim("k").state == "mine"
    assert b.claims.claim("k").state == "theirs"
    sent: list[str] = []

    async def b_send() -> Response:
        sent.append("b")
        return Response(text="from b")

    def answer_later() -> None:
        time.sleep(0.3)
        a.put("k", "m", Response(text="from a"))

    threading.Thread(target=answer_later).start()
    start = time.monotonic()
    resp = asyncio.run(send_once(b, "k", "m", b_send))
    assert resp.text == "from a" and resp.cached and sent == []
    assert 0.25 < time.monotonic() - start < 5
    con = sqlite3.connect(tmp_path / "c.sqlite")  # the answer's commit ended the claim
    assert con.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    con.close()
    # A failed request releases its claim: the other owner then claims and sends.
    assert a.claims.claim("j").state == "mine"
    a.claims.release("j")
    deadline = time.monotonic() + 5
    while b.claims.claim("j").state != "mine":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    a.close()
    b.close()


@pytest.mark.parametrize(("host", "pid", "age", "fresh"), [
    ("this", "self", 0.0, True),         # a live process on this host
    ("this", "dead", 0.0, False),        # killed on this host: stale at once
    ("other-host", 999_999, 0.0, True),  # another host: only age tells
    ("other-host", 999_999, 31.0, False),  # not refreshed for > STALE_S (30 s)
    ("this", "self", 31.0, False),
])
def test_stale_claim_rule(host: str, pid: int | str, age: float, fresh: bool) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    pid_value = os.getpid() if pid == "self" else dead.pid if pid == "dead" else int(pid)
    name = cache_claims._HOST if host == "this" else host
    now = 1_000_000.0
    assert cache_claims.is_fresh(name, pid_value, now - age, now) is fresh


def test_claim_of_a_process_killed_by_kill_9_does_not_block(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from heritage_eval.core.cache import ResponseCache\n"
        "c = ResponseCache(sys.argv[1])\n"
        "assert c.claims.claim('k').state == 'mine'\n"
        "print('claimed', flush=True)\n"
        "time.sleep(60)\n"), str(db)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "claimed"
    cache = ResponseCache(db)
    assert cache.claims.claim("k").state == "theirs"  # alive: its claim holds
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert cache.claims.claim("k").state == "mine"  # dead on this host: taken over
    cache.close()


N_SAMPLES = 16


def _release(root: Path) -> None:
    cat = root / "inscription_rubbings"
    (cat / "images").mkdir(parents=True)
    lines = []
    for i in range(N_SAMPLES):
        Image.new("RGB", (40, 120), (i * 15, 0, 0)).save(cat / "images" / f"s{i:02d}.png")
        lines.append(json.dumps({"image": f"s{i:02d}.png", "human_gt": "君諱全"},
                                ensure_ascii=False))
    (cat / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _texts(out: Path) -> dict[str, list[str]]:
    texts = {}
    for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        texts[rec["id"]] = [t["response"]["text"] for t in rec["turns"]]
    return texts


def _opened(pid: int, path: Path, timeout_s: float) -> None:
    """Wait until process ``pid`` has ``path`` open (Linux /proc), else ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    fds = Path(f"/proc/{pid}/fd")
    while time.monotonic() < deadline:
        try:
            if any(os.readlink(fd) == str(path) for fd in fds.iterdir()):
                return
        except OSError:
            pass
        time.sleep(0.05)


def test_two_runs_sharing_a_cache_send_each_request_once(tmp_path: Path) -> None:
    # Run 0 starts and its first request (the client sends one before the others) is held
    # at the server; run 1 starts on the same --cache while it is in flight: it must wait
    # for it, not send it again.
    data, cache = tmp_path / "data", (tmp_path / "shared.sqlite").resolve()
    _release(data)
    env = dict(os.environ, PYTHONUNBUFFERED="1", OPENAI_API_KEY="x")
    go = threading.Event()
    with fake_openai_server() as srv:
        count = iter(range(1, 10_000))

        def answer(body: dict[str, Any]) -> Scripted:  # each answer tells which call it was
            go.wait(timeout=60)
            reply = chat_reply(f"<res>君諱全 {next(count)}</res>")
            return Scripted(delay_s=0.05, body=reply.body)

        srv.responder = answer

        def start(i: int) -> subprocess.Popen[str]:
            return subprocess.Popen(
                [sys.executable, "-m", "heritage_eval.cli.main", "run", "ancient-bench",
                 "--data", str(data), "--model", "openai:fake-vlm", "--base-url",
                 srv.base_url, "--concurrency", "4", "--retries", "0", "--timeout", "120",
                 "--cache", str(cache), "--out", str(tmp_path / f"run{i}")], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

        procs = [start(0)]
        deadline = time.monotonic() + 60
        while not srv.requests:
            assert time.monotonic() < deadline and procs[0].poll() is None
            time.sleep(0.02)
        procs.append(start(1))
        _opened(procs[1].pid, cache, 60)
        time.sleep(1.0)  # run 1 plans, finds the first request claimed and waits
        assert len(srv.requests) == 1  # not sent twice while in flight
        go.set()
        for p in procs:
            _, err = p.communicate(timeout=240)
            assert p.returncode == 0, err[-2000:]
        prompts = [json.dumps(r["messages"], sort_keys=True) for r in srv.requests]
    assert len(prompts) == len(set(prompts)) == N_SAMPLES  # each request sent once
    first, second = _texts(tmp_path / "run0"), _texts(tmp_path / "run1")
    assert len(first) == N_SAMPLES and first == second  # the very same answers


class _CountingCondition(threading.Condition):
    """A Condition that counts how often its waiters woke up."""

    def __init__(self) -> None:
        super().__init__(threading.Lock())
        self.waits = 0

    def wait_for(self, predicate: Any, timeout: float | None = None) -> Any:
        self.waits += 1
        return super().wait_for(predicate, timeout)


def test_idle_keeper_waits_instead_of_spinning(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # kind: the claims keeper with nothing held and its refresh period over waited with a
    # timeout of 0 for ever: a busy loop holding the GIL that starved the whole process
    # (a full test run stalled in an unrelated write). With a 20 ms period it must wake
    # about once a period: ~15 times in 0.3 s, never thousands.
    monkeypatch.setattr(cache_claims, "REFRESH_S", 0.02)
    cache = ResponseCache(tmp_path / "c.sqlite")
    counting = _CountingCondition()
    monkeypatch.setattr(cache.claims, "_wake", counting)
    assert cache.claims.claim("k").state == "mine"
    cache.claims.release("k")  # starts the keeper; nothing is held afterwards
    time.sleep(0.3)
    waits = counting.waits
    cache.close()
    assert 1 <= waits <= 60, waits
