"""The ``openai`` backend against a real local HTTP server (tests/fake_server.py)."""

from __future__ import annotations

import asyncio
import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.core.images import SizeCap
from heritage_eval.core.types import GenerationSettings, ImagePart, Message
from heritage_eval.models.base import BackendOptions, create_backend
from heritage_eval.models.openai_compat import OpenAICompatBackend, _retry_after
from tests.fake_server import Scripted, chat_reply, fake_openai_server


def _backend(url: str, **kw: object) -> OpenAICompatBackend:
    extra = {"backoff_base_s": "0.01", "backoff_max_s": "0.02"}
    opts = BackendOptions(base_url=url, api_key_env="HE_TEST_KEY", timeout_s=kw.pop("timeout", 5.0),  # type: ignore[arg-type]
                          max_retries=kw.pop("retries", 3), extra=extra,  # type: ignore[arg-type]
                          image_cap=kw.pop("cap", SizeCap(max_side=64)))  # type: ignore[arg-type]
    b = create_backend("openai:test-vlm", opts)
    assert isinstance(b, OpenAICompatBackend)
    return b


def _gen(b: OpenAICompatBackend, msgs: list[Message]):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        try:
            return await b.generate(msgs, GenerationSettings(temperature=0.1, max_tokens=77), {})
        finally:
            await b.aclose()
    return asyncio.run(go())


@pytest.fixture()
def image(tmp_path: Path) -> Path:
    p = tmp_path / "page.png"
    Image.new("RGB", (400, 100), (200, 10, 10)).save(p)
    return p


def test_sends_image_as_capped_data_url_and_key_from_env(image: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HE_TEST_KEY", "sk-secret")
    with fake_openai_server() as srv:
        srv.script = [chat_reply("<res>君諱全</res>", 12, 3)]
        b = _backend(srv.base_url)
        r = _gen(b, [Message.user(ImagePart(path=str(image)), "transcribe")])
    assert r.ok and r.text == "<res>君諱全</res>"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (12, 3)
    # 400x100 capped to a 64 px long side keeps the 4:1 aspect ratio -> 64x16.
    assert r.meta["sent_image_sizes"] == [[64, 16]]
    body = srv.requests[0]
    assert body["model"] == "test-vlm" and body["temperature"] == 0.1 and body["max_tokens"] == 77
    parts = body["messages"][0]["content"]
    assert parts[0]["type"] == "image_url" and parts[1] == {"type": "text", "text": "transcribe"}
    url = parts[0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert sent.size == (64, 16)
    assert srv.headers[0]["Authorization"] == "Bearer sk-secret"
    # The key never appears in what the backend reports about itself.
    assert "sk-secret" not in repr(b.identity())


def test_retries_429_honouring_retry_after_then_500_then_succeeds() -> None:
    with fake_openai_server() as srv:
        srv.script = [Scripted(status=429, body={"error": "slow down"},
                               headers={"Retry-After": "0.3"}),
                      Scripted(status=500, body={"error": "boom"}),
                      chat_reply("ok")]
        r = _gen(_backend(srv.base_url), [Message.user("hi")])
    assert r.ok and r.text == "ok" and r.attempts == 3
    # The second request came no sooner than the 0.3 s the server asked for.
    assert srv.times[1] - srv.times[0] >= 0.29


def test_gives_up_after_retries_with_reason() -> None:
    with fake_openai_server() as srv:
        srv.script = [Scripted(status=503, body={"e": 1}) for _ in range(5)]
        r = _gen(_backend(srv.base_url, retries=2), [Message.user("hi")])
    assert not r.ok and r.text is None
    assert "HTTP 503" in (r.error or "") and "after 3 attempts" in (r.error or "")
    assert len(srv.requests) == 3


def test_client_error_is_not_retried() -> None:
    with fake_openai_server() as srv:
        srv.script = [Scripted(status=400, body={"error": "bad model"})]
        r = _gen(_backend(srv.base_url), [Message.user("hi")])
    assert not r.ok and "HTTP 400" in (r.error or "") and len(srv.requests) == 1


def test_timeout_is_retried_then_reported() -> None:
    with fake_openai_server() as srv:
        srv.script = [Scripted(delay_s=1.0, body={}), Scripted(delay_s=1.0, body={})]
        r = _gen(_backend(srv.base_url, timeout=0.2, retries=1), [Message.user("hi")])
    assert not r.ok and "timeout" in (r.error or "")


def test_malformed_json_body_is_an_error_not_an_answer() -> None:
    # A 200 whose body is no completion is retried like a 5xx (it used to fail at once,
    # so one glitch per request made every sample an error); when every attempt is
    # malformed the error names the kind.
    with fake_openai_server() as srv:
        srv.script = [Scripted(raw=b"{not json")] * 4
        r1 = _gen(_backend(srv.base_url), [Message.user("hi")])
        srv.script = [Scripted(body={"choices": []})] * 4
        r2 = _gen(_backend(srv.base_url), [Message.user("hi")])
    assert not r1.ok and (r1.error or "").startswith("malformed body: not JSON")
    assert not r2.ok and (r2.error or "").startswith("malformed body: empty 'choices'")
    assert r1.meta["failure"] == r2.meta["failure"] == "malformed" and r1.attempts == 4


def test_null_content_is_the_models_empty_answer() -> None:
    # issue 19 / 22 item 7: content null is the model's failure "empty_answer" (never
    # cached); the benchmarks score it as an empty answer (NED 0, as the official
    # Ancient-Bench evaluator scores an empty prediction) under --model-failures wrong
    with fake_openai_server() as srv:
        srv.script = [chat_reply(None)]
        r = _gen(_backend(srv.base_url), [Message.user("hi")])
    assert not r.ok and r.text is None and r.error == "empty answer"
    assert r.meta["failure"] == "empty_answer"


def test_unreachable_endpoint_is_an_error() -> None:
    r = _gen(_backend("http://127.0.0.1:9/v1", retries=1), [Message.user("hi")])
    assert not r.ok and "connection error" in (r.error or "")


@pytest.mark.parametrize(("header", "expected"), [("2", 2.0), ("0", 0.0), ("1e9", None),
                                                  (None, None), ("soon", None)])
def test_retry_after_parsing(header: str | None, expected: float | None) -> None:
    assert _retry_after(header) == expected


def test_never_reachable_endpoint_fails_fast_after_first_request() -> None:
    b = _backend("http://127.0.0.1:9/v1", retries=1)

    async def go():  # type: ignore[no-untyped-def]
        s = GenerationSettings()
        first = await b.generate([Message.user("a")], s, {})
        second = await b.generate([Message.user("b")], s, {})
        await b.aclose()
        return first, second

    first, second = asyncio.run(go())
    assert "127.0.0.1:9" in (first.error or "")  # the message names the endpoint
    assert (second.error or "").startswith("not sent: endpoint http://127.0.0.1:9/v1 unreachable")
    assert second.attempts == 1


def test_backend_options_are_validated() -> None:
    from heritage_eval.models.base import ModelSpecError

    with pytest.raises(ModelSpecError, match="needs a model name"):
        create_backend("openai:")
    with pytest.raises(ModelSpecError, match="not understood by 'openai'"):
        create_backend("openai:x", BackendOptions(extra={"foo": "1"}))
    with pytest.raises(ModelSpecError, match="max_concurrency must be a number"):
        create_backend("openai:x", BackendOptions(extra={"max_concurrency": "abc"}))
    with pytest.raises(ModelSpecError, match="takes no model name"):
        create_backend("rapidocr:xyz")
    with pytest.raises(ModelSpecError, match="det_limit_type must be"):
        create_backend("rapidocr", BackendOptions(extra={"det_limit_type": "bogus"}))
