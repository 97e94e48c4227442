"""Nothing hangs on the network or on signals (issue 22).

- SIGTERM and Ctrl-C end ``heritage-eval run`` within seconds while every request is
  stalled, with status 128 + signal, and a re-run resumes (sends only what is missing);
- a process whose exit is stuck after the signal is ended by the watchdog;
- an unreachable ``--ray-address`` (nothing listening, a listener that never answers,
  a server that is not Ray) is refused within seconds, before anything is written;
- an interrupted Ray dispatch kills its actors and shuts down the cluster it started
  without waiting for them.
The rule: ``cli/interrupts.py`` and ``core/executors/ray_connect.py`` (README "Stopping
a run").
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.core.executors import ExecutorError
from heritage_eval.core.executors.ray_connect import probe, split_address
from heritage_eval.core.executors.ray_executor import RayExecutor
from tests.fake_server import Scripted, chat_reply, fake_openai_server

N_SAMPLES = 6
ANSWERED_FIRST = 3
ENV = dict(os.environ, PYTHONUNBUFFERED="1")


def _release(root: Path) -> None:
    cat = root / "inscription_rubbings"
    (cat / "images").mkdir(parents=True)
    lines = []
    for i in range(N_SAMPLES):
        Image.new("RGB", (40, 120), (i * 30, 0, 0)).save(cat / "images" / f"s{i}.png")
        lines.append(json.dumps({"image": f"s{i}.png", "human_gt": "君諱全"}, ensure_ascii=False))
    (cat / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cmd(data: Path, out: Path, url: str) -> list[str]:
    return [sys.executable, "-m", "heritage_eval.cli.main", "run", "ancient-bench",
            "--data", str(data), "--model", "openai:fake-vlm", "--base-url", url,
            "--concurrency", "1", "--retries", "0", "--out", str(out)]


def _cached(out: Path) -> int:
    con = sqlite3.connect(out / "cache.sqlite")
    try:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_a_stalled_run_within_seconds_and_the_rerun_resumes(
        tmp_path: Path, sig: signal.Signals) -> None:
    data, out = tmp_path / "data", tmp_path / "run"
    _release(data)
    answer = chat_reply("<res>君諱全</res>").body
    with fake_openai_server() as srv:
        def reply(body: dict[str, Any]) -> Scripted:  # the 4th request never ends
            return Scripted(body=answer, delay_s=0 if len(srv.requests) <= ANSWERED_FIRST
                            else 600)
        srv.responder = reply
        proc = subprocess.Popen(_cmd(data, out, srv.base_url), env=ENV,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(srv.requests) <= ANSWERED_FIRST and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the stalled request is in flight
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        start = time.monotonic()
        proc.send_signal(sig)
        try:
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
        took = time.monotonic() - start
        err = proc.stderr.read() if proc.stderr else ""
        assert took < 5.0, f"took {took:.1f} s to end after {sig.name}"
        assert proc.returncode == 128 + sig, (proc.returncode, err)
        assert "re-run the same command to resume" in err and "Traceback" not in err
        assert _cached(out) == ANSWERED_FIRST
        sent = len(srv.requests)
        srv.responder = lambda body: Scripted(body=answer)  # the same endpoint, now well
        rerun = subprocess.run(_cmd(data, out, srv.base_url), env=ENV, capture_output=True,
                               text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        assert len(srv.requests) - sent == N_SAMPLES - ANSWERED_FIRST  # only the missing
    assert _cached(out) == N_SAMPLES


STUCK = """
import sys, time, concurrent.futures
from heritage_eval.cli.interrupts import stop_on_signals
with stop_on_signals(grace_s=1.0):
    pool = concurrent.futures.ThreadPoolExecutor(1)
    fut = pool.submit(time.sleep, 120)
    print("ready", flush=True)
    try:
        fut.result()
    except KeyboardInterrupt:
        pass
sys.exit(1)  # exit then waits for the pool's thread: the watchdog must end it
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_watchdog_ends_a_process_whose_exit_is_stuck(sig: signal.Signals) -> None:
    proc = subprocess.Popen([sys.executable, "-c", STUCK], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    start = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(15)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = time.monotonic() - start
    assert took < 4.0, took  # grace 1 s (without the watchdog: 120 s)
    assert proc.returncode == 128 + sig
    assert "stopped" in (proc.stderr.read() if proc.stderr else "")


def test_without_a_signal_the_block_leaves_no_trace() -> None:
    from heritage_eval.cli.interrupts import stop_on_signals

    before = signal.getsignal(signal.SIGTERM)
    with stop_on_signals():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal.set_wakeup_fd(-1) == -1  # no wake-up descriptor left behind


# -- Ray addresses ---------------------------------------------------------------------


@pytest.fixture
def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A listening socket that accepts connections and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield int(s.getsockname()[1])
    s.close()


@pytest.mark.parametrize("form", ["{h}:{p}", "ray://{h}:{p}"])
def test_probe_refuses_nothing_listening_at_once(closed_port: int, form: str) -> None:
    start = time.monotonic()
    with pytest.raises(ExecutorError, match="Connection refused"):
        probe(form.format(h="127.0.0.1", p=closed_port), 5.0)
    assert time.monotonic() - start < 1.0


@pytest.mark.parametrize("form", ["{h}:{p}", "ray://{h}:{p}"])
def test_probe_gives_up_on_a_listener_that_never_answers(silent_port: int,
                                                         form: str) -> None:
    start = time.monotonic()
    with pytest.raises(ExecutorError, match="no answer within 1 s"):
        probe(form.format(h="127.0.0.1", p=silent_port), 1.0)
    assert time.monotonic() - start < 2.5


def test_probe_refuses_a_server_that_is_not_ray() -> None:
    with fake_openai_server() as srv:  # HTTP/1.1 answers the HTTP/2 preface with 400
        port = int(srv.base_url.split(":")[2].split("/")[0])
        with pytest.raises(ExecutorError, match="not as a Ray cluster"):
            probe(f"127.0.0.1:{port}", 3.0)


def test_probe_accepts_a_grpc_like_server() -> None:
    # a server answering the HTTP/2 preface with a SETTINGS frame, as Ray's GCS does
    # (checked by hand against ray 2.60: b'\x00\x00\x18\x04...')
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    import threading

    def serve() -> None:
        conn, _ = srv.accept()
        conn.recv(100)
        conn.sendall(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    probe(f"127.0.0.1:{port}", 3.0)  # no error
    t.join(2)
    srv.close()


@pytest.mark.parametrize(("address", "expected"), [
    ("10.0.0.1:6379", ("10.0.0.1", 6379)), ("head", ("head", 6379)),
    ("ray://head", ("head", 10001)), ("ray://head:10002", ("head", 10002)),
    ("[::1]:7000", ("::1", 7000)), ("[::1]", ("::1", 6379)),
    ("ray://[fe80::1]:10001", ("fe80::1", 10001)), (" head:1 ", ("head", 1)),
])
def test_split_address_reads_every_form(address: str, expected: tuple[str, int]) -> None:
    assert split_address(address) == expected


@pytest.mark.parametrize("address", ["", "head:abc", "head:0", "head:65536", ":6379",
                                     "ray://", "a:b:c:1x", "[::1]:x"])
def test_split_address_refuses_what_is_not_an_address(address: str) -> None:
    with pytest.raises(ExecutorError):
        split_address(address)


needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="Ray is not installed (optional extra [ray])")


@needs_ray
@pytest.mark.parametrize("which", ["closed", "silent"])
def test_cli_refuses_an_unreachable_ray_address_within_seconds(
        tmp_path: Path, closed_port: int, silent_port: int, which: str) -> None:
    port = closed_port if which == "closed" else silent_port
    out = tmp_path / "run"
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "heritage_eval.cli.main", "run", "ancient-bench",
                        "--data", "data/demo/ancient_bench", "--model", "rapidocr",
                        "--out", str(out), "--executor", "ray",
                        "--ray-address", f"127.0.0.1:{port}"],
                       capture_output=True, text=True, timeout=60, env=ENV)
    took = time.monotonic() - start
    assert r.returncode == 2 and f"127.0.0.1:{port}" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert took < 12.0  # 5 s probe + start-up (it was > 12 minutes)
    assert not out.exists()  # refused before anything was written


class _FakeRay:
    """Records what :meth:`RayExecutor._stop` asks of Ray."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def wait(self, *args: object, **kwargs: object) -> None:
        self.calls.append("wait")

    def kill(self, actor: object, no_restart: bool = True) -> None:
        self.calls.append(f"kill {actor}")
        raise RuntimeError("actor already gone")  # must not stop the shutdown

    def shutdown(self) -> None:
        self.calls.append("shutdown")


class _Actor:
    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return self.name

    @property
    def close(self) -> Any:
        class _Remote:
            @staticmethod
            def remote() -> None:
                return None
        return _Remote


def test_an_interrupted_dispatch_kills_actors_at_once_and_ends_its_cluster() -> None:
    ray = _FakeRay()
    RayExecutor._stop(ray, [_Actor("a"), _Actor("b")], started=True, graceful=False)
    assert ray.calls == ["kill a", "kill b", "shutdown"]  # no 10 s wait for close()
    ray = _FakeRay()
    RayExecutor._stop(ray, [_Actor("a")], started=False, graceful=True)
    assert ray.calls == ["wait", "kill a"]  # a cluster it joined is left running
