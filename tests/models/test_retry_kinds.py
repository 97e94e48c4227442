"""Retry timing of the ``openai`` backend for every form of stated wait, per-endpoint
waits shared by all workers, and concurrency after a 429 — on real loopback servers
(tests/fake_server.py) with a fake clock, so waits are asserted exactly and nothing
sleeps for real. Expected waits are written by hand from the header the server sent."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.models.endpoints import AdaptiveLimit
from heritage_eval.models.openai_compat import OpenAICompatBackend
from heritage_eval.models.openai_http import Client, HttpResult, make_client
from heritage_eval.models.ratelimit import Clock
from tests.fake_server import Scripted, chat_reply, fake_openai_server
from tests.models.util import generate, make_backend, run_many

WALL0 = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC).timestamp()


class FakeClock:
    """Virtual time: ``sleep(s)`` yields once, then moves the clock to at least the time
    the sleep was due (so concurrent sleepers overlap instead of adding up)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return WALL0 + self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        due = self.now + seconds
        await asyncio.sleep(0)
        self.now = max(self.now, due)

    def clock(self) -> Clock:
        return Clock(monotonic=self.monotonic, wall=self.wall, sleep=self.sleep)


class UpperBound(random.Random):
    """Jitter that always takes the top of its range: backoff waits become exact."""

    def uniform(self, a: float, b: float) -> float:
        return b


class Recorder:
    """Wraps the real client; checks, in event-loop order, that no POST goes to an
    endpoint before the end of a wait its server stated. The test server names that end
    itself in ``X-Test-Until`` (absolute wall seconds): the check does not use the
    backend's parser."""

    def __init__(self, inner: Client, fake: FakeClock) -> None:
        self.inner, self.fake = inner, fake
        self.until: dict[str, float] = {}
        self.sends: list[tuple[str, float]] = []
        self.violations: list[str] = []

    async def request(self, method: str, url: str, body: bytes | None,
                      headers: dict[str, str], timeout_s: float) -> HttpResult:
        root = url.rsplit("/chat/completions", 1)[0]
        if method == "POST":
            now = self.fake.wall()
            if now < self.until.get(root, -math.inf):
                self.violations.append(f"{root} at {now - WALL0} < {self.until[root] - WALL0}")
            self.sends.append((root, now - WALL0))
        r = await self.inner.request(method, url, body, headers, timeout_s)
        if "x-test-until" in r.headers:
            self.until[root] = max(self.until.get(root, -math.inf),
                                   float(r.headers["x-test-until"]))
        return r

    async def aclose(self) -> None:
        await self.inner.aclose()

    def abort(self) -> None:
        self.inner.abort()


def faked(b: OpenAICompatBackend, fake: FakeClock | None = None
          ) -> tuple[FakeClock, Callable[[], Recorder]]:
    """Give ``b`` a fake clock, top-of-range jitter and a recording client."""
    fake = fake or FakeClock()
    b.clock = fake.clock()
    b.rng = UpperBound()
    made: list[Recorder] = []

    def factory(n: int) -> Client:
        made.append(Recorder(make_client(n), fake))
        return made[-1]

    b.client_factory = factory
    return fake, lambda: made[-1]


def rfc850(dt: datetime) -> str:
    day = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
           "Sunday")[dt.weekday()]
    return f"{day}, {dt:%d-%b-%y %H:%M:%S} GMT"


def at(seconds: float, form: str) -> str:
    """The HTTP-date ``seconds`` after fake time 0, in ``form``."""
    dt = datetime.fromtimestamp(WALL0 + seconds, UTC)
    return {"imf": format_datetime(dt, usegmt=True), "rfc850": rfc850(dt),
            "asctime": dt.strftime("%a %b %d %H:%M:%S %Y").replace(" 0", "  ", 1)}[form]


def limited(headers: dict[str, str], status: int = 429) -> Scripted:
    return Scripted(status=status, body={"error": "slow down"}, headers=headers)


# header sent with the first reply (429), and the wait the backend must then take (by
# hand; "backoff": no usable stated wait, so the first backoff step, base 1 s, max 8 s)
FORMS: list[tuple[dict[str, str], float | str]] = [
    ({"Retry-After": "0"}, 0.0), ({"Retry-After": "5"}, 5.0), ({"Retry-After": " 5 "}, 5.0),
    ({"Retry-After": "5.5"}, 5.5), ({"Retry-After": "120"}, 120.0),
    ({"Retry-After": at(7, "imf")}, 7.0), ({"Retry-After": at(7, "rfc850")}, 7.0),
    ({"Retry-After": at(7, "asctime")}, 7.0), ({"Retry-After": at(-3600, "imf")}, 0.0),
    ({"Retry-After": "3, 9"}, 9.0), ({"Retry-After": "4", "retry-after": "6"}, 6.0),
    ({"retry-after-ms": "1500", "Retry-After": "2"}, 1.5),
    ({}, "backoff"), ({"Retry-After": ""}, "backoff"), ({"Retry-After": "soon"}, "backoff"),
    ({"Retry-After": "-5"}, "backoff"), ({"x-ratelimit-reset-requests": "6m0s"}, "backoff"),
]


@pytest.mark.parametrize(("headers", "wait"), FORMS)
def test_each_form_gives_its_exact_wait(headers: dict[str, str], wait: float | str) -> None:
    with fake_openai_server() as srv:
        fake_now: list[float] = []
        replies = [limited(headers), chat_reply("ok")]

        def reply(body: dict[str, Any]) -> Scripted:
            fake_now.append(fake.now)
            return replies.pop(0)

        srv.responder = reply
        b = make_backend(srv.base_url, backoff_base_s="1", backoff_max_s="8")
        fake, _ = faked(b)
        r = generate(b)
    expected = 1.0 if wait == "backoff" else wait
    assert r.ok and r.attempts == 2
    assert fake.sleeps == ([expected] if expected else [])
    assert fake_now == [0.0, expected]
    assert b.gate.limit == 4  # 8 halved by the 429, none grown back by one answer


@pytest.mark.parametrize("headers", [
    {"Retry-After": "99999999"}, {"Retry-After": "121"},
    {"Retry-After": at(3 * 365 * 86400, "imf")}, {"Retry-After": "9" * 400},
    {"retry-after-ms": "120001"}])
def test_a_wait_over_the_cap_fails_at_once_and_blocks_the_endpoint(
        headers: dict[str, str]) -> None:
    # Beyond max_retry_after_s (120 s) the request is not held for hours: it ends as
    # rate_limited, and nothing more is sent to that endpoint.
    with fake_openai_server() as srv:
        srv.responder = lambda body: limited(headers)
        b = make_backend(srv.base_url)
        fake, _ = faked(b)
        first = generate(b)
        second = generate(b)
        assert len(srv.requests) == 1
    assert fake.sleeps == [] and first.attempts == 1
    assert first.meta["failure"] == second.meta["failure"] == "rate_limited"
    assert first.error is not None and first.error.startswith("HTTP 429: ")
    assert "longer than max_retry_after_s=120" in first.error
    assert second.error is not None and second.error.startswith(f"not sent: {b.base_url} asked")


def test_the_cap_is_an_option_and_zero_refuses_any_wait() -> None:
    with fake_openai_server() as srv:
        srv.script = [limited({"Retry-After": "30"}), chat_reply("ok")]
        b = make_backend(srv.base_url, max_retry_after_s="30")
        fake, _ = faked(b)
        assert generate(b).ok and fake.sleeps == [30.0]  # equal to the cap: waited
        srv.script = [limited({"Retry-After": "1"}), chat_reply("ok")]
        b0 = make_backend(srv.base_url, max_retry_after_s="0")
        faked(b0)
        r = generate(b0)
    assert r.meta["failure"] == "rate_limited" and len(srv.requests) == 3
    with pytest.raises(ValueError, match="max_retry_after_s must be >= 0"):
        make_backend("http://127.0.0.1:1/v1", max_retry_after_s="-1")


def test_503_with_retry_after_is_honoured_too() -> None:
    with fake_openai_server() as srv:
        srv.script = [limited({"Retry-After": "4"}, status=503), chat_reply("ok")]
        b = make_backend(srv.base_url)
        fake, _ = faked(b)
        r = generate(b)
    assert r.ok and fake.sleeps == [4.0]


def test_a_told_endpoint_is_skipped_by_every_worker_and_used_again_after() -> None:
    # E1 says "wait 30 s": its retry and every later request go to E2 at once (no
    # sleep, fake time stays 0); once 30 s have passed E1 is used again.
    with fake_openai_server() as e1, fake_openai_server() as e2:
        e1.script = [limited({"Retry-After": "30", "X-Test-Until": str(WALL0 + 30)})]
        b = make_backend([e1.base_url, e2.base_url], concurrency=4)
        fake, rec = faked(b)
        res = run_many(b, 12, 8)
        assert all(r.error is None for r in res.values())
        # requests already on their way to E1 when the 429 came back are answered there
        assert len(e1.requests) + len(e2.requests) == 13 and fake.sleeps == []
        assert rec().violations == [] and rec().until
        assert all(t == 0.0 for _, t in rec().sends)
        fake.now = 30.0
        more = run_many(b, 6, 2, prefix="later")
    assert all(r.error is None for r in more.values()) and len(e1.requests) > 1


def test_concurrent_workers_all_wait_for_one_endpoints_stated_time() -> None:
    # One endpoint, 16 workers: the 5th request gets "wait 5 s", the 12th a date 9 s on.
    # No POST may leave before those times; every sample is answered in the end.
    with fake_openai_server() as srv:
        count = 0

        def reply(body: dict[str, Any]) -> Scripted:
            nonlocal count
            count += 1
            if count == 5:
                return limited({"Retry-After": "5", "X-Test-Until": str(fake.wall() + 5)})
            if count == 12:
                until = math.floor(fake.now) + 9
                return limited({"Retry-After": at(until, "imf"),
                                "X-Test-Until": str(WALL0 + until)})
            return chat_reply("ok")

        srv.responder = reply
        b = make_backend(srv.base_url, concurrency=16, retries=3)
        fake, rec = faked(b)
        res = run_many(b, 48, 16)
    assert all(r.error is None for r in res.values())
    assert rec().violations == [] and len(rec().until) == 1
    assert max(t for _, t in rec().sends) >= 9.0


STEPS = st.one_of(
    st.just(("ok", "")), st.just(("500", "")), st.just(("429", "")),
    st.tuples(st.just("delta"), st.integers(0, 200).map(str)),
    st.tuples(st.just("date"), st.sampled_from(["imf", "rfc850", "asctime"])),
    st.tuples(st.just("503"), st.integers(0, 20).map(str)))


@settings(max_examples=25, deadline=None)
@given(st.lists(STEPS, max_size=10), st.lists(STEPS, max_size=10), st.integers(1, 6))
def test_generated_scripts_never_send_early(s1: list[tuple[str, str]],
                                            s2: list[tuple[str, str]], conc: int) -> None:
    # Any mix of answers, 5xx, 429 with and without waits on two endpoints: no POST
    # before a stated time, waits over the cap never slept, the limit stays in bounds.
    with fake_openai_server() as e1, fake_openai_server() as e2:
        fake = FakeClock()

        def script(steps: list[tuple[str, str]]) -> Callable[[dict[str, Any]], Scripted]:
            left = list(steps)

            def reply(body: dict[str, Any]) -> Scripted:
                kind, arg = left.pop(0) if left else ("ok", "")
                if kind == "ok":
                    return chat_reply("ok")
                if kind in ("500", "429"):
                    return limited({}, status=int(kind))
                if kind == "date":
                    until = math.floor(fake.now) + 6
                    return limited({"Retry-After": at(until, arg),
                                    "X-Test-Until": str(WALL0 + until)})
                return limited({"Retry-After": arg, "X-Test-Until": str(fake.wall() + int(arg))},
                               status=503 if kind == "503" else 429)
            return reply

        e1.responder, e2.responder = script(s1), script(s2)
        b = make_backend([e1.base_url, e2.base_url], concurrency=conc, retries=4,
                         circuit_breaker="0")
        _, rec = faked(b, fake)  # the scripts read the same clock
        res = run_many(b, 12, 2 * conc)
    assert rec().violations == []
    assert all(s <= 120 for s in fake.sleeps)
    assert 1 <= b.gate.limit <= 2 * conc
    for r in res.values():
        resp = r.responses[0]
        assert resp.ok or resp.meta["failure"] in ("rate_limited", "server_error")


def test_aimd_halves_once_per_round_trip_and_grows_one_per_round() -> None:
    # By hand: 8 -> 4 on a 429; a second 429 in the same 0.1 s changes nothing; growth
    # +1 after `limit` answers: 4 answers -> 5, 5 more -> 6; never above the maximum.
    now = [0.0]
    gate = AdaptiveLimit(initial=8, maximum=8)
    gate.monotonic = lambda: now[0]
    gate.overloaded()
    gate.overloaded()
    assert (gate.limit, gate.cuts) == (4, 1)
    now[0] = 0.1
    gate.overloaded()
    assert (gate.limit, gate.cuts) == (2, 2)
    history = []
    for _ in range(2 + 3 + 4 + 5 + 6 + 7 + 10):
        gate.completed(0.0)
        history.append(gate.limit)
    assert history[:2] == [2, 3] and history[2 + 3 - 1] == 4 and history[2 + 3 + 4 - 1] == 5
    assert history[2 + 3 + 4 + 5 + 6 + 7 - 1] == 8 and max(history) == 8
