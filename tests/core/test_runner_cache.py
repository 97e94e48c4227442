"""Runner + SQLite cache: multi-turn history, failures, resume without re-sending."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.core.cache import ResponseCache, request_key
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    ImagePart,
    Message,
    Response,
)
from heritage_eval.models.base import ModelBackend


class EchoBackend(ModelBackend):
    """Answers 'answer-<turn>-<n user msgs>-<n assistant msgs>'; fails on text 'FAIL'."""

    backend = "test"
    model_id = "echo"
    max_concurrency = 4

    def __init__(self) -> None:
        self.calls: list[list[Message]] = []

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        self.calls.append(messages)
        if messages[-1].text() == "FAIL":
            return Response(text=None, error="scripted failure")
        if messages[-1].text() == "RAISE":
            raise RuntimeError("bug in backend")
        users = sum(m.role == "user" for m in messages)
        assistants = sum(m.role == "assistant" for m in messages)
        return Response(text=f"answer-{payload['turn']}-{users}-{assistants}")


def _conv(*turns: str, system: str | None = None) -> Conversation:
    return Conversation(system=system, turns=tuple(Message.user(t) for t in turns))


def test_multi_turn_history_carries_models_own_answers(tmp_path: Path) -> None:
    b = EchoBackend()
    res = run_items([RunItem("d1", _conv("q1", "q2", "q3", system="be brief"))], b,
                    GenerationSettings(), ResponseCache(tmp_path / "c.sqlite"))
    texts = [r.text for r in res["d1"].responses]
    assert texts == ["answer-0-1-0", "answer-1-2-1", "answer-2-3-2"]
    third = b.calls[2]
    assert [m.role for m in third] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert third[2].text() == "answer-0-1-0" and third[4].text() == "answer-1-2-1"


def test_failed_turn_ends_conversation_and_is_not_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    b = EchoBackend()
    res = run_items([RunItem("a", _conv("q1", "FAIL", "q3")), RunItem("b", _conv("RAISE"))],
                    b, GenerationSettings(), cache)
    assert [r.ok for r in res["a"].responses] == [True, False]
    assert res["a"].error == "scripted failure"
    assert "RuntimeError: bug in backend" in (res["b"].error or "")
    assert len(cache) == 1  # only the successful first turn


def test_rerun_is_served_from_cache_and_only_missing_requests_are_sent(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    items = [RunItem(f"s{i}", _conv(f"question {i}")) for i in range(5)]
    b1 = EchoBackend()
    run_items(items[:3], b1, GenerationSettings(), ResponseCache(path))
    assert len(b1.calls) == 3
    b2 = EchoBackend()
    res = run_items(items, b2, GenerationSettings(), ResponseCache(path))
    assert len(b2.calls) == 2  # s3 and s4 only
    assert [res[f"s{i}"].responses[0].cached for i in range(5)] == [True] * 3 + [False] * 2
    # Different generation settings are a different request.
    b3 = EchoBackend()
    run_items(items[:1], b3, GenerationSettings(temperature=0.7), ResponseCache(path))
    assert len(b3.calls) == 1


def test_cache_key_hashes_image_bytes_not_path(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.png", tmp_path / "b.png", tmp_path / "c.png"
    Image.new("RGB", (8, 8), "white").save(a)
    Image.new("RGB", (8, 8), "white").save(b)
    Image.new("RGB", (8, 8), "black").save(c)
    ident = {"backend": "x"}

    def key(p: Path) -> str:
        return request_key(ident, GenerationSettings(), [Message.user(ImagePart(path=str(p)))])

    assert key(a) == key(b) != key(c)


def test_missing_image_becomes_error_not_exception(tmp_path: Path) -> None:
    conv = Conversation(turns=(Message.user(ImagePart(path=str(tmp_path / "nope.jpg"))),))
    res = run_items([RunItem("x", conv)], EchoBackend(), GenerationSettings(),
                    ResponseCache(tmp_path / "c.sqlite"))
    assert "image file not found" in (res["x"].error or "")


def test_cache_uses_wal_journal(tmp_path: Path) -> None:
    ResponseCache(tmp_path / "c.sqlite").close()
    mode = sqlite3.connect(tmp_path / "c.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_prompt_text_is_left_out_of_the_key_for_backends_that_ignore_it(tmp_path: Path) -> None:
    img = tmp_path / "a.png"
    Image.new("RGB", (8, 8), "white").save(img)

    def key(prompt: str, include_text: bool) -> str:
        msgs = [Message.user(ImagePart(path=str(img)), prompt)]
        return request_key({"b": "ocr"}, GenerationSettings(), msgs, include_text=include_text)

    assert key("prompt v1", False) == key("prompt v2", False)
    assert key("prompt v1", True) != key("prompt v2", True)


def test_payload_is_part_of_the_key_only_for_backends_that_read_it(tmp_path: Path) -> None:
    class PayloadBackend(EchoBackend):
        reads_payload = True

    a = RunItem("x", Conversation(turns=(Message.user("q"),), payload={"options": ["A"]}))
    b = RunItem("x", Conversation(turns=(Message.user("q"),), payload={"options": ["A", "B"]}))
    for backend_cls, expected_calls in ((EchoBackend, 1), (PayloadBackend, 2)):
        backend = backend_cls()
        cache_path = tmp_path / f"{backend_cls.__name__}.sqlite"
        run_items([a], backend, GenerationSettings(), ResponseCache(cache_path))
        run_items([b], backend, GenerationSettings(), ResponseCache(cache_path))
        # Same prompt, different payload: re-asked only when the backend reads the payload.
        assert len(backend.calls) == expected_calls


def test_cache_survives_another_connection_holding_the_write_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 10 item 12: another connection holding the write lock for 30+ s must not crash
    # the run ("database is locked"), and nothing put meanwhile may be lost. The busy
    # timeout is shortened so the 1.5 s hold stands for a much longer one.
    import heritage_eval.core.cache as cache_mod

    monkeypatch.setattr(cache_mod, "BUSY_TIMEOUT_S", 0.1)
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.5, lambda: blocker.execute("COMMIT"))
    release.start()
    start = time.monotonic()
    for i in range(20):
        cache.put(f"k{i}", "m", Response(text=f"answer {i}"))
    assert time.monotonic() - start < 0.2  # put() never waits for the lock
    hit = cache.get("k3")  # visible before it is committed
    assert hit is not None and hit.text == "answer 3" and hit.cached
    assert not cache.flush(timeout_s=0.5)  # still locked: not on disk yet
    assert cache.flush(timeout_s=10)  # the lock is released: everything committed
    assert time.monotonic() - start >= 1.4
    cache.close()
    release.join()
    blocker.close()
    again = ResponseCache(path)
    assert len(again) == 20 and (again.get("k19") or Response(text=None)).text == "answer 19"
    again.close()


def test_close_commits_everything_put(tmp_path: Path) -> None:
    # The writer thread batches commits; close() must not drop what is still queued.
    cache = ResponseCache(tmp_path / "c.sqlite")
    for i in range(500):
        cache.put(f"k{i}", "m", Response(text=str(i)))
    cache.close()
    con = sqlite3.connect(tmp_path / "c.sqlite")
    assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 500
    con.close()
