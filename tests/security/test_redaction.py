"""Issue 10, item 1: no secret reaches a file of the run folder, stdout or stderr.

Unit tests pin each shape of secret the redactor knows (values hand-written); the canary
tests run every benchmark and the judge against a local server that answers 401 with a
body echoing the ``Authorization`` header, with keys in ``--base-url`` too, and then
search every byte of every file under ``--out`` and all console output for the canaries.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core import redact as redact_mod
from heritage_eval.core.provenance import provenance
from heritage_eval.core.redact import (
    REDACTOR,
    redact,
    redact_argv,
    register_options,
)
from heritage_eval.core.redact_streams import RedactingFilter, RedactingStream
from heritage_eval.core.store import RunFolder, atomic_write_text
from tests.conftest import realdata
from tests.fake_server import FakeServer, Scripted, chat_reply, fake_openai_server

KEY = "sk-canary-0123456789abcdefKEY"        # value of the --api-key-env variable
JUDGE_KEY = "judge-canary-5566778899JUDGE"   # value of --judge-api-key-env
EMB_KEY = "emb-canary-13579246810EMB"        # value of --embedder-api-key-env
URL_PASS = "urlpass-canary-77"               # password inside --base-url
QUERY_KEY = "querykey-canary-88"             # ?key= inside --base-url
CANARIES = (KEY, JUDGE_KEY, EMB_KEY, URL_PASS, QUERY_KEY)
AB_REAL = realdata("ancient_bench")
HCSU_REAL = realdata("hcsu")


@pytest.fixture(autouse=True)
def _fresh_redactor(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    REDACTOR.clear()
    for name, value in (("HE_CANARY_KEY", KEY), ("HE_JUDGE_CANARY", JUDGE_KEY),
                        ("HE_EMB_CANARY", EMB_KEY)):
        monkeypatch.setenv(name, value)
    yield
    REDACTOR.clear()


# ----------------------------------------------------------------------------- units
def test_every_shape_of_secret_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    # guards against: a secret reaching text in a shape the redactor does not know
    REDACTOR.add_env("HE_CANARY_KEY")
    REDACTOR.add_secret("zip-pass-word")
    assert redact(f"bad key {KEY}!") == "bad key ***!"
    assert redact("unzip with zip-pass-word") == "unzip with ***"
    # URL credentials (user and password) and key-like query values, in any text
    assert redact("GET https://bob:s3cr3t@api.example.com/v1?key=abc&model=x") == \
        "GET https://***@api.example.com/v1?key=***&model=x"
    assert redact("http://h/v1?api_key=A1&token=T2;access_token=T3") == \
        "http://h/v1?api_key=***&token=***;access_token=***"
    # header-shaped text, plain and JSON-escaped inside a JSON string
    assert redact("Authorization: Bearer abcdefgh123") == "Authorization: Bearer ***"
    assert redact('{\\"authorization\\": \\"Basic dXNlcjpwYXNz\\"}') == \
        '{\\"authorization\\": \\"Basic ***\\"}'
    assert redact("x-api-key=zzzzzz99") == "x-api-key=***"
    assert redact("key sk-abcdefghijklmnop used") == "key sk-*** used"
    # an environment variable named like a secret is covered without registration
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-unregistered-42")
    assert redact("echo tok-unregistered-42") == "echo ***"
    # short literal secrets would corrupt ordinary text: not replaced in free text
    REDACTOR.add_secret("abc")
    assert redact("abc 0.5") == "abc 0.5"


def test_options_register_env_values_passwords_and_url_credentials(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # guards against: an option naming a secret that the redactor never learns about
    monkeypatch.setenv("MY_ZIP_PW_VAR", "zip-from-env-123")
    opts = argparse.Namespace(api_key_env="HE_CANARY_KEY", judge_api_key_env="HE_JUDGE_CANARY",
                              embedder_api_key_env="HE_EMB_CANARY", zip_password="pw-654321",
                              zip_password_env="MY_ZIP_PW_VAR",
                              base_url=f"http://user:{URL_PASS}@h/v1?key={QUERY_KEY}",
                              judge_base_url=None)
    register_options(opts)
    text = " ".join([KEY, JUDGE_KEY, EMB_KEY, "pw-654321", "zip-from-env-123",
                     URL_PASS, QUERY_KEY])
    # echoed anywhere, even outside a URL: all gone
    assert redact(text) == " ".join(["***"] * 7)


def test_command_line_and_base_urls_in_provenance(monkeypatch: pytest.MonkeyPatch) -> None:
    # guards against: summary.json keeping the key given inside --base-url or on argv
    url = f"https://user:{URL_PASS}@host.example/v1?key={QUERY_KEY}"
    monkeypatch.setattr(sys, "argv", ["heritage-eval", "run", "hcsu-discrimination",
                                      "--zip-password", "hunter2", "--base-url", url,
                                      "--zip-password=hunter3"])
    prov = provenance(base_url=url, base_urls=[url], judge_base_url=url)
    masked = "https://***@host.example/v1?key=***"
    assert prov["base_url"] == masked and prov["base_urls"] == [masked]
    assert prov["judge_base_url"] == masked
    assert prov["command"] == ("heritage-eval run hcsu-discrimination --zip-password *** "
                               f"--base-url {masked} --zip-password=***")
    assert redact_argv(["--zip-password"]) == ["--zip-password"]


def test_every_run_folder_file_is_redacted(tmp_path: Path) -> None:
    # guards against: a writer of the run folder that skips redaction
    REDACTOR.add_env("HE_CANARY_KEY")
    run = RunFolder(tmp_path)
    run.write_samples([{"error": f"HTTP 401: Bearer {KEY}"}])
    run.write_json("summary.json", {"base_url": f"http://u:{URL_PASS}@h/v1"})
    run.write_text("summary.md", f"key {KEY}")
    atomic_write_text(tmp_path / "run.json", json.dumps({"x": f"?token={QUERY_KEY}"}))
    assert json.loads((tmp_path / "samples.jsonl").read_text()) == {
        "error": "HTTP 401: Bearer ***"}
    assert json.loads((tmp_path / "summary.json").read_text()) == {
        "base_url": "http://***@h/v1"}
    assert (tmp_path / "summary.md").read_text() == "key ***"
    assert json.loads((tmp_path / "run.json").read_text()) == {"x": "?token=***"}


def test_log_records_and_streams_are_redacted() -> None:
    # guards against: a warning or traceback printing the key to stderr
    REDACTOR.add_env("HE_CANARY_KEY")
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.addFilter(RedactingFilter())
    log = logging.getLogger("tests.security.leak")
    log.addHandler(handler)
    try:
        log.warning("endpoint said %s", f"Bearer {KEY}")
        try:
            raise RuntimeError(f"boom {KEY}")
        except RuntimeError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    text = buf.getvalue()
    assert "endpoint said Bearer ***" in text and "RuntimeError: boom ***" in text
    assert KEY not in text
    out = io.StringIO()
    stream = RedactingStream(out)
    assert stream.write(f"error: {KEY}\n") == len(f"error: {KEY}\n")
    assert out.getvalue() == "error: ***\n"


# ------------------------------------------------------------------- canary end to end
def _echo_auth(srv: FakeServer) -> Any:
    """A 401 whose body echoes the request's Authorization header (and its URL key)."""
    def reply(body: dict[str, Any]) -> Scripted:
        headers = {k.lower(): v for k, v in srv.headers[-1].items()}
        auth = headers["authorization"]  # every client sends it; some in lower case
        return Scripted(status=401, body={"error": {"message": f"invalid key: {auth}"}})
    return reply


def _url(srv: FakeServer, userinfo: bool = False) -> str:
    host = srv.base_url.split("//", 1)[1].split("/", 1)[0]
    creds = f"user:{URL_PASS}@" if userinfo else ""
    return f"http://{creds}{host}/v1?key={QUERY_KEY}"


def _assert_no_canary(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cap = capsys.readouterr()
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files, "the run folder was not written"
    for p in files:
        data = p.read_bytes()
        for canary in CANARIES:
            assert canary.encode() not in data, f"{canary} leaked into {p}"
    for canary in CANARIES:
        assert canary not in cap.out and canary not in cap.err, f"{canary} on the console"
    assert "***" in (out / "summary.json").read_text("utf-8")  # the URL key, masked


def test_canary_ancient_bench(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: a 401 body echoing the key into samples/summary/stderr (Ancient-Bench)
    with fake_openai_server() as srv:
        srv.responder = _echo_auth(srv)
        rc = main(["run", "ancient-bench", "--data", str(AB_REAL), "--model", "openai:vlm",
                   "--base-url", _url(srv), "--api-key-env", "HE_CANARY_KEY",
                   "--limit", "1", "--retries", "0", "--out", str(tmp_path / "run")])
        assert srv.headers[0]["Authorization"] == f"Bearer {KEY}"  # the key was sent
    assert rc == 1  # every sample is an auth error
    rows = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").open()]
    assert rows and all("HTTP 401" in r["error"] for r in rows)
    _assert_no_canary(tmp_path / "run", capsys)


def test_canary_url_credentials(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: user:KEY@ in --base-url reaching summary.json, errors and stderr,
    # or being sent: the backend drops the user-info from the URLs it uses (the key comes
    # from --api-key-env); a ?key= query stays in the URL (some APIs want it) and is
    # masked in every file and message
    with fake_openai_server() as srv:
        url = _url(srv, userinfo=True)
        rc = main(["run", "ancient-bench", "--data", str(AB_REAL), "--model", "openai:vlm",
                   "--base-url", url, "--api-key-env", "HE_CANARY_KEY", "--limit", "1",
                   "--retries", "0", "--out", str(tmp_path / "run")])
        assert all("Basic" not in h.get("Authorization", "") for h in srv.headers)
    assert rc == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    host = srv.base_url.split("//", 1)[1].split("/", 1)[0]
    assert summary["provenance"]["base_url"] == f"http://{host}/v1?key=***"
    _assert_no_canary(tmp_path / "run", capsys)


def test_canary_hcsu_discrimination(tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: the same leak through HCSU's records, summary and console report
    with fake_openai_server() as srv:
        srv.responder = _echo_auth(srv)
        rc = main(["run", "hcsu-discrimination", "--data", str(HCSU_REAL), "--model",
                   "openai:vlm", "--base-url", _url(srv), "--api-key-env", "HE_CANARY_KEY",
                   "--k", "2", "--limit", "1", "--retries", "0", "--out",
                   str(tmp_path / "run")])
    assert rc == 1
    _assert_no_canary(tmp_path / "run", capsys)


def test_canary_hcsu_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: the judge's failed request echoing its own key (judge.py errors)
    with fake_openai_server() as srv:
        echo = _echo_auth(srv)
        srv.responder = lambda body: echo(body) if body["model"] == "judge" \
            else chat_reply("Thin strokes.")
        rc = main(["run", "hcsu-description", "--data", str(HCSU_REAL), "--model",
                   "openai:vlm", "--base-url", _url(srv), "--api-key-env", "HE_CANARY_KEY",
                   "--judge", "openai:judge", "--judge-base-url", _url(srv),
                   "--judge-api-key-env", "HE_JUDGE_CANARY", "--no-bertscore",
                   "--limit", "1", "--retries", "0", "--out", str(tmp_path / "run")])
        judged = [{k.lower(): v for k, v in h.items()}
                  for h, b in zip(srv.headers, srv.requests, strict=True)
                  if b["model"] == "judge"]
    assert judged and judged[0]["authorization"] == f"Bearer {JUDGE_KEY}"
    assert rc in (0, 1)
    text = (tmp_path / "run" / "samples.jsonl").read_text("utf-8")
    assert "judge request failed" in text and "HTTP 401" in text
    _assert_no_canary(tmp_path / "run", capsys)


def test_canary_muse_model_and_embedder(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: MUSE rows and the embedder's failure text carrying a key
    from tests.muse.test_run import _responder, build_question_file

    qfile = build_question_file(tmp_path)
    with fake_openai_server() as srv:
        echo = _echo_auth(srv)

        def reply(body: dict[str, Any]) -> Scripted:
            if "input" in body:  # /embeddings
                return echo(body)
            last = body["messages"][-1]["content"]
            text = last if isinstance(last, str) else next(
                p["text"] for p in last if p["type"] == "text")
            return echo(body) if text.startswith("COUNT") else _responder(body)
        srv.responder = reply
        rc = main(["run", "muse", "--questions", str(qfile), "--model", "openai:test-vlm",
                   "--base-url", _url(srv), "--api-key-env", "HE_CANARY_KEY",
                   "--embedder", "openai:emb", "--embedder-base-url", _url(srv),
                   "--embedder-api-key-env", "HE_EMB_CANARY", "--retries", "0",
                   "--out", str(tmp_path / "run")])
        sent = {v for h in srv.headers for k, v in h.items() if k.lower() == "authorization"}
    assert rc == 0 and sent == {f"Bearer {KEY}", f"Bearer {EMB_KEY}"}
    text = (tmp_path / "run" / "samples.jsonl").read_text("utf-8")
    assert "HTTP 401" in text
    _assert_no_canary(tmp_path / "run", capsys)


def test_redactor_module_names_its_mask() -> None:
    assert redact_mod.MASK == "***" and redact_mod.MIN_SECRET_CHARS == 6
