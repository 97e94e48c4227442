"""Endpoints that fail fast and honestly (issue 9 item 4) and reasoning models (item 5),
against real HTTP servers on 127.0.0.1 (tests/fake_server.py)."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from heritage_eval.core.cache import ResponseCache
from heritage_eval.models.base import BackendOptions, ModelSpecError, create_backend
from heritage_eval.models.endpoints import EndpointError
from heritage_eval.models.openai_compat import OpenAICompatBackend
from tests.fake_server import Scripted, chat_reply, fake_openai_server
from tests.models.util import KEY_ENV, generate, make_backend, run_many

CANARY = "sk-canary-7f3a9c2e55d1"


def _preflight(b: OpenAICompatBackend) -> None:
    async def go() -> None:
        try:
            await b.preflight()
        finally:
            await b.aclose()
    asyncio.run(go())


def test_missing_base_url_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Guards against the old silent default: no --base-url meant api.openai.com, no key,
    # and every sample retried against the wrong host.
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelSpecError, match="no endpoint given: pass --base-url"):
        create_backend("openai:qwen", BackendOptions())
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    b = create_backend("openai:qwen", BackendOptions())
    assert isinstance(b, OpenAICompatBackend) and b.base_url == "http://127.0.0.1:8000/v1"


def test_preflight_404_suggests_v1_within_two_seconds() -> None:
    # Guards against a URL without /v1 giving one 404 per sample and no hint.
    with fake_openai_server() as srv:
        srv.models = Scripted(status=404, body={"detail": "Not Found"})
        srv.responder = lambda body: Scripted(status=404, body={"detail": "Not Found"})
        root = srv.base_url.removesuffix("/v1")
        b = make_backend(root)
        start = time.monotonic()
        with pytest.raises(EndpointError, match=r"lacks '/v1': try --base-url .*/v1") as exc:
            _preflight(b)
        assert time.monotonic() - start < 2.0
        assert exc.value.kind == "not_found" and b.fatal_error is not None
        # generate() then refuses at once, without sending
        r = generate(b)
        assert r.error is not None and r.error.startswith("not sent: endpoint")
        assert r.meta["failure"] == "not_found"
        assert len(srv.requests) == 1  # the one-token chat probe only


def test_server_without_models_route_but_working_chat_is_usable() -> None:
    # Guards against refusing a proxy that serves chat completions but not /models.
    with fake_openai_server() as srv:
        srv.models = Scripted(status=404, body={"detail": "Not Found"})
        b = make_backend(srv.base_url)
        r = generate(b)
    assert r.ok and r.text == "default" and b.fatal_error is None


def test_non_local_host_without_key_is_refused_before_any_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Guards against sending thousands of unauthenticated requests to a hosted API.
    monkeypatch.delenv(KEY_ENV, raising=False)
    b = make_backend("http://api.example.invalid/v1")
    start = time.monotonic()
    with pytest.raises(EndpointError, match=r"no API key for http://api.example.invalid/v1: "
                                            r"set \$HE_TEST_KEY"):
        _preflight(b)
    assert time.monotonic() - start < 0.5  # refused before any DNS or connection


def test_unreachable_endpoint_fails_preflight_fast() -> None:
    # Guards against a dead endpoint costing retries x samples before anyone notices.
    with socket.socket() as sock:  # bound, never listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        b = make_backend(url)
        start = time.monotonic()
        r = generate(b)  # preflight runs lazily on the first request
        assert time.monotonic() - start < 2.0
    assert r.error is not None and r.error.startswith(f"not sent: endpoint {url} unreachable")
    assert r.meta["failure"] == "unreachable" and b.fatal_error is not None


def test_malformed_200_is_retried_then_succeeds_and_final_error_names_the_kind() -> None:
    # Guards against one glitchy 200 per request turning every sample into an error.
    with fake_openai_server() as srv:
        srv.script = [Scripted(raw=b"<html><body>Bad gateway</body></html>"),
                      Scripted(body={"choices": []}), chat_reply("ok")]
        r = generate(make_backend(srv.base_url))
        assert r.ok and r.text == "ok" and r.attempts == 3
        srv.script = [Scripted(raw=b"{not json")] * 3
        bad = generate(make_backend(srv.base_url, retries=2))
    assert bad.error is not None and bad.error.startswith("malformed body: not JSON")
    assert "after 3 attempts" in bad.error and bad.meta["failure"] == "malformed"


def test_content_filter_is_its_own_outcome_retried_once_never_cached(tmp_path: Path) -> None:
    # Guards against a filtered prompt being scored as an empty answer (and cached).
    filtered = Scripted(body={"choices": [], "prompt_filter_results": [
        {"prompt_index": 0, "content_filter_results": {"violence": {"filtered": True}}}]})
    with fake_openai_server() as srv:
        srv.responder = lambda body: filtered
        cache = ResponseCache(tmp_path / "c.sqlite")
        res = run_many(make_backend(srv.base_url), 1, 1, cache)
        (r,) = res["q0"].responses
        assert r.text is None and r.meta["failure"] == "content_filter"
        assert r.error is not None and "violence" in r.error  # raw body kept, truncated
        assert len(srv.requests) == 2  # one retry, not max_retries
        assert len(cache) == 0
        srv.responder = lambda body: chat_reply("partial", finish_reason="content_filter")
        r2 = generate(make_backend(srv.base_url))
    assert r2.text is None and r2.meta["failure"] == "content_filter"


def test_length_truncated_answer_is_kept_with_its_finish_reason() -> None:
    # Guards against losing a truncated answer: it is an answer, marked "length".
    with fake_openai_server() as srv:
        srv.script = [chat_reply("君諱全字", finish_reason="length")]
        r = generate(make_backend(srv.base_url))
    assert r.ok and r.text == "君諱全字" and r.meta["finish_reason"] == "length"


@pytest.mark.parametrize(("reply", "text", "reasoning"), [
    (chat_reply("B", reasoning_content="A or B? B."), "B", "A or B? B."),
    (chat_reply("A", reasoning="short thought"), "A", "short thought"),
    (chat_reply("<think>\nlook at strokes\n</think>\n\nCandidate C"), "Candidate C",
     "look at strokes"),
    (chat_reply("template opened it</think>D"), "D", "template opened it"),
])
def test_reasoning_is_kept_apart_from_the_answer(reply: Scripted, text: str,
                                                 reasoning: str) -> None:
    # Guards against reasoning text being parsed and scored as the answer.
    with fake_openai_server() as srv:
        srv.script = [reply]
        r = generate(make_backend(srv.base_url))
    assert r.ok and r.text == text and r.meta["reasoning"] == reasoning


def test_reasoning_only_reply_is_an_outcome_not_cached_and_asked_again(tmp_path: Path) -> None:
    # Guards against content=null + reasoning being cached as an empty answer forever.
    only = chat_reply(None, finish_reason="length", reasoning_content="Let me think ...")
    with fake_openai_server() as srv:
        srv.responder = lambda body: only
        path = tmp_path / "c.sqlite"
        for run in (1, 2):
            res = run_many(make_backend(srv.base_url), 1, 1, ResponseCache(path))
            (r,) = res["q0"].responses
            # cut at max tokens before any answer: the model's failure, named as such
            assert r.text is None and r.meta["failure"] == "truncated_no_answer"
            assert r.error == ("no final answer: stopped at the max-tokens limit "
                               "(reasoning only)")
            assert r.meta["reasoning"] == "Let me think ..."
            assert len(srv.requests) == run  # not retried, and asked again next run
        think = chat_reply("<think>unfinished")  # an unclosed block is reasoning only too
        srv.responder = lambda body: think
        assert generate(make_backend(srv.base_url)).meta["failure"] == "reasoning_only"


@pytest.mark.parametrize(("content", "finish", "kind"), [
    (None, "stop", "empty_answer"), ("", "stop", "empty_answer"),
    ("  \n ", "stop", "empty_answer"), (None, "length", "truncated_no_answer"),
    ("", "length", "truncated_no_answer"), (None, None, "empty_answer")])
def test_empty_content_is_the_models_failure_never_cached(
        tmp_path: Path, content: str | None, finish: str | None, kind: str) -> None:
    # kind: content null / empty / blank with any finish reason was scored and cached as
    # an empty answer; it is the model's failure with its own reason, asked again next run
    reply = chat_reply(content, finish_reason=finish)
    with fake_openai_server() as srv:
        srv.responder = lambda body: reply
        path = tmp_path / "c.sqlite"
        for run in (1, 2):
            (r,) = run_many(make_backend(srv.base_url), 1, 1, ResponseCache(path))["q0"].responses
            assert r.text is None and r.meta["failure"] == kind
            assert r.error is not None and r.error.startswith(
                "empty answer" if kind == "empty_answer" else "no final answer: stopped")
            assert len(srv.requests) == run  # never cached


def test_413_names_the_byte_count_and_is_not_retried() -> None:
    # Guards against retrying an input the server will never accept.
    with fake_openai_server() as srv:
        srv.responder = lambda body: Scripted(status=413, body={"error": "too large"})
        r = generate(make_backend(srv.base_url))
        assert len(srv.requests) == 1
    assert r.meta["failure"] == "input_too_large"
    assert r.error is not None and r.error.startswith("HTTP 413: request of ")
    assert " bytes too large" in r.error


def test_auth_failure_is_not_retried_and_the_key_never_appears(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # Guards against a server echoing the key (or the Authorization header) into
    # errors, records and logs.
    monkeypatch.setenv(KEY_ENV, CANARY)
    echo = {"error": {"message": f"Incorrect API key provided: {CANARY}.",
                      "request_headers": {"Authorization": f"Bearer {CANARY}"}}}
    with fake_openai_server() as srv:
        srv.responder = lambda body: Scripted(status=401, body=echo)
        r = generate(make_backend(srv.base_url))
        assert len(srv.requests) == 1 and r.meta["failure"] == "auth"
        assert r.error is not None and "refused the request" in r.error
        srv.models = Scripted(status=401, body=echo)
        b = make_backend(srv.base_url)
        with pytest.raises(EndpointError) as exc:
            _preflight(b)
    assert exc.value.kind == "auth"
    for text in (r.error, str(exc.value), b.fatal_error, r.model_dump_json(), caplog.text):
        assert text is not None and CANARY not in text and "canary-7f3a" not in text
