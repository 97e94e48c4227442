"""``--executor ray`` on a real two-node Ray cluster, as docs/how-to/ray-cluster.md says.

Two ``ray start --block`` processes on this machine, each in its own session, working
folder and one CPU: a head node and a worker node, in token-authentication mode, with a
dedicated ``--temp-dir`` (short: socket paths must stay under 108 bytes). The CLI driver
runs in a third working folder (the repository) with a *relative* ``--data``: the nodes
must receive absolute image paths. The worker node is SIGKILLed mid-run; the run must
still finish with every sample answered. Connect-time failures (wrong token, nothing
listening, another Ray version, Ray Client missing) must exit 2 before any run folder
exists. A ``ray://`` address runs when grpcio (``ray[client]``) is installed and is
refused naming the package when not. A run with a cluster of its own ends it on SIGTERM.
Every Ray process of the cluster (its temp dir in the command line, or below the
``ray start`` processes) is gone afterwards. ``ray stop`` is not used: it ends every Ray
process of the machine, other sessions' too. About 100 s on a loaded 2-core machine.
Skipped when Ray is not installed (optional extra ``[ray]``), except under ``CI``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("ray") is None:
    if os.environ.get("CI"):
        pytest.fail("CI=true but Ray is not installed: install the [ray] extra "
                    "(pip install ray==2.60.0)", pytrace=False)
    pytest.skip("Ray is not installed (optional extra [ray])", allow_module_level=True)

from tests.fake_server import Scripted, chat_reply, fake_openai_server

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DATA = "data/demo/ancient_bench"  # relative to REPO, the driver's working folder
RAY = str(Path(sys.executable).with_name("ray"))
DRIVER = [sys.executable, "-c", "import sys; from heritage_eval.cli.main import main; "
          "sys.exit(main(sys.argv[1:]))"]
#: Ray's node health checks made fast, so a dead node is noticed in ~2 s, not ~30 s
FAST_HEALTH = {"RAY_health_check_initial_delay_ms": "0", "RAY_health_check_period_ms": "500",
               "RAY_health_check_timeout_ms": "500", "RAY_health_check_failure_threshold": "3"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ps() -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of every process but zombies."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,stat=,args="], capture_output=True,
                         text=True).stdout
    rows = [line.split(None, 3) for line in out.splitlines()]
    return [(int(r[0]), int(r[1]), r[3] if len(r) > 3 else "") for r in rows
            if len(r) > 2 and not r[2].startswith("Z")]


def _descendants(roots: set[int]) -> set[int]:
    """``roots`` and every process below them."""
    rows, found = _ps(), set(roots)
    while True:
        more = {pid for pid, ppid, _ in rows if ppid in found} - found
        if not more:
            return found
        found |= more


def _ours(temp_dir: str, tree: set[int]) -> set[int]:
    """Processes of this test's cluster still alive: those naming its temp dir (every
    Ray process but the retitled workers, ``ray::...``) and those of ``tree``."""
    return {pid for pid, _, args in _ps()
            if (temp_dir in args and "ps -eo" not in args) or pid in tree}


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


@dataclass
class Cluster:
    """A running two-node cluster: ``address`` (HOST:PORT of the head), ``env`` (what a
    driver needs: the token), the worker node's ``ray start`` process, ``temp_dir``."""

    address: str
    client: str
    env: dict[str, str]
    worker: subprocess.Popen[bytes]
    temp_dir: str


def _wait_head(port: int, head: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    """Until the head's port accepts connections (``ray.init`` on a port where nothing
    listens would wait for ever); fails at once with the log's end if the head exits."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert head.poll() is None, log.read_text(errors="replace")[-3000:]
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
        time.sleep(0.2)


def _wait_nodes(address: str, env: dict[str, str], n: int, timeout_s: float) -> None:
    code = ("import ray, sys, time, logging\n"
            "ray.init(address=sys.argv[1], logging_level=logging.ERROR, log_to_driver=False)\n"
            "end = time.monotonic() + float(sys.argv[3])\n"
            "while sum(x['Alive'] for x in ray.nodes()) < int(sys.argv[2]):\n"
            "    assert time.monotonic() < end, ray.nodes()\n"
            "    time.sleep(0.2)\n")
    done = subprocess.run([sys.executable, "-c", code, address, str(n), str(timeout_s)],
                          env=env, capture_output=True, text=True, timeout=timeout_s + 30)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Head and worker node, each ``ray start --block`` in its own process group and
    working folder; both killed (SIGKILL to the group) and checked gone afterwards."""
    base = tmp_path_factory.mktemp("cluster")
    temp_dir = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths
    port, client_port = _free_port(), _free_port()
    # the head serves ray:// only when grpcio (ray[client]) is installed; else it refuses
    # the flag ("Ray Client requires pip package `ray[client]`")
    client = ([f"--ray-client-server-port={client_port}"]
              if importlib.util.find_spec("grpc") is not None else [])
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16),
           "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    procs: list[subprocess.Popen[bytes]] = []
    started = time.monotonic()
    try:
        for name, args in (("head", ["--head", f"--port={port}", "--include-dashboard=false",
                                     *client]),
                           ("node", [f"--address=127.0.0.1:{port}"])):
            cwd = base / name
            cwd.mkdir()
            with open(base / f"{name}.log", "wb") as log:
                procs.append(subprocess.Popen(
                    [RAY, "start", *args, "--num-cpus=1", f"--temp-dir={temp_dir}",
                     "--disable-usage-stats", "--block"], cwd=cwd, env={**env, **FAST_HEALTH},
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            if name == "head":
                _wait_head(port, procs[0], base / "head.log", 90)
                _wait_nodes(f"127.0.0.1:{port}", env, 1, 90)
        _wait_nodes(f"127.0.0.1:{port}", env, 2, 90)
        print(f"\ncluster up in {time.monotonic() - started:.1f} s")
        yield Cluster(f"127.0.0.1:{port}", f"ray://127.0.0.1:{client_port}", env, procs[1],
                      temp_dir)
    finally:
        tree = _descendants({p.pid for p in procs}) - {os.getpid()}
        for proc in reversed(procs):
            _kill_group(proc)
        deadline = time.monotonic() + 30
        while _ours(temp_dir, tree) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _ours(temp_dir, tree)
        for pid in left:  # only processes of this test's cluster
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp_dir, ignore_errors=True)
        assert not left, f"Ray processes of the test cluster left: {sorted(left)}"


def _sample_of(body: dict[str, Any]) -> str:
    """The request's identity: a digest of its messages (each sample asks its own)."""
    return hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest()


def _answer(body: dict[str, Any]) -> Scripted:
    return Scripted(delay_s=0.4, body=chat_reply("<res>天</res>").body)


def _cached(out: Path) -> int:
    import sqlite3

    if not (out / "cache.sqlite").is_file():
        return 0
    con = sqlite3.connect(out / "cache.sqlite", timeout=5)
    try:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def test_worker_node_killed_mid_run_every_sample_answered(cluster: Cluster,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "run"
    started = time.monotonic()
    with fake_openai_server() as srv:
        srv.responder = _answer
        # the flag wins over $RAY_ADDRESS (here an address where nothing listens)
        env = {**cluster.env, "RAY_ADDRESS": f"127.0.0.1:{_free_port()}"}
        cmd = [*DRIVER, "run", "ancient-bench", "--data", DATA, "--limit", "3",
               "--model", "openai:fake", "--base-url", srv.base_url, "--retries", "0",
               "--concurrency", "2", "--executor", "ray", "--ray-address", cluster.address,
               "--ray-workers", "2", "--out", str(out)]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while _cached(out) < 6 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
        _kill_group(cluster.worker)  # the worker node dies: raylet, its actor, everything
        killed_at = len(srv.requests)
        _, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err.decode()[-3000:]
        sent = Counter(_sample_of(b) for b in srv.requests)
    records = [json.loads(ln) for ln in (out / "samples.jsonl").read_text().splitlines()]
    ids = [r["id"] for r in records]
    # 9 demo categories x --limit 3 (data/demo/ancient_bench/MANIFEST.json)
    assert len(ids) == len(set(ids)) == 27
    assert all(t["response"]["error"] is None and t["response"]["text"]
               for r in records for t in r["turns"]), "an image was not found on a node?"
    assert len(sent) == 27 == _cached(out)  # every sample reached the server, one answer each
    # a request is repeated only when the dead node held it: the chunks the driver keeps
    # in flight per replica, ceil(concurrency / chunk) + 1 = 3 chunks of 1 conversation
    # (--concurrency 2, chunk max(1, 2 // 4) = 1: RayExecutor._dispatch)
    assert sum(n - 1 for n in sent.values()) <= 3, (sent.most_common(4), killed_at)
    print(f"\nrun with a node killed: {time.monotonic() - started:.1f} s, "
          f"{sum(sent.values())} requests for 27 samples")


def _refused(cmd_env: dict[str, str], out: Path, address: str | None,
             prefix: list[str] | None = None) -> str:
    """Run a tiny ray run that must be refused: exit 2, no run folder; its stderr."""
    flag = ["--ray-address", address] if address else []
    cmd = [*(prefix or DRIVER), "run", "ancient-bench", "--data", DATA, "--limit", "1",
           "--model", "openai:fake", "--base-url", "http://127.0.0.1:9/v1",
           "--executor", "ray", *flag, "--out", str(out)]
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=REPO, env=cmd_env, capture_output=True, text=True,
                          timeout=120)
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr[-2000:]
    assert not out.exists()
    assert took < 90, took  # Ray alone: for ever (GCS address), minutes (Ray Client)
    return done.stderr


def test_wrong_token_refused_before_any_folder(cluster: Cluster, tmp_path: Path) -> None:
    # the address from $RAY_ADDRESS (no flag): the same rules as --ray-address
    env = {**cluster.env, "RAY_AUTH_TOKEN": secrets.token_hex(16),
           "RAY_ADDRESS": cluster.address}
    err = _refused(env, tmp_path / "o", None)
    assert "authentication refused" in err and cluster.address in err, err
    assert "RAY_AUTH_MODE=token" in err


def test_nothing_listening_refused_before_any_folder(cluster: Cluster, tmp_path: Path) -> None:
    address = f"127.0.0.1:{_free_port()}"
    err = _refused(cluster.env, tmp_path / "o", address)
    assert f"cannot reach the Ray cluster at {address}" in err, err


def test_version_mismatch_refused_before_any_folder(cluster: Cluster, tmp_path: Path) -> None:
    # this driver pretends to run Ray 0.0.1 (Ray compares compute_version_info() with
    # what the head stored: ray/_private/utils.py check_version_info)
    patched = [sys.executable, "-c", "import sys, ray._private.utils as u; "
               "u.compute_version_info = lambda: ('0.0.1', '3.11.0'); "
               "from heritage_eval.cli.main import main; sys.exit(main(sys.argv[1:]))"]
    err = _refused(cluster.env, tmp_path / "o", cluster.address, patched)
    assert "Version mismatch" in err and "0.0.1" in err, err


@pytest.mark.skipif(importlib.util.find_spec("grpc") is None,
                    reason="grpcio (ray[client]) is not installed: ray:// is refused")
def test_ray_client_address_runs(cluster: Cluster, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("<res>天</res>")
        for _ in range(3):
            done = subprocess.run(
                [*DRIVER, "run", "ancient-bench", "--data", DATA, "--limit", "1", "--model",
                 "openai:fake", "--base-url", srv.base_url, "--executor", "ray",
                 # one replica: the worker node may already be gone (killed by the test
                 # above, which shares the cluster), leaving the head's one CPU
                 "--ray-address", cluster.client, "--ray-workers", "1", "--out", str(out)],
                cwd=REPO, env=cluster.env, capture_output=True, text=True, timeout=120)
            # the head's Ray Client proxy starts one server process per client within its
            # own deadline, which a loaded 2-core machine can miss (seen once in a full
            # suite run beside a benchmark): that start-up failure, and only it, is retried
            if "Starting Ray client server failed" not in done.stderr:
                break
        assert done.returncode == 0, done.stderr[-2000:]
        assert len(srv.requests) == 9  # one sample of each of the 9 demo categories
    # (a wrong token over ray:// is refused too, naming the token, but only after the Ray
    # Client's own retries, ~35 s: left out to keep this file near 2 minutes)


@pytest.mark.skipif(importlib.util.find_spec("grpc") is not None,
                    reason="grpcio is installed: ray:// is accepted")
def test_ray_client_address_without_grpcio_names_the_extra(tmp_path: Path) -> None:
    err = _refused({**os.environ}, tmp_path / "o", "ray://127.0.0.1:10001")
    assert "ray[client]==2.60.0" in err, err


def test_sigterm_ends_the_local_cluster_of_the_run(tmp_path: Path) -> None:
    """No ``--ray-address`` and no ``$RAY_ADDRESS``: the run starts its own cluster
    (``ray.init(address="local")``) and ends it on SIGTERM, as on Ctrl-C (exit 143)."""
    out = tmp_path / "run"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    with fake_openai_server() as srv:
        srv.responder = _answer
        proc = subprocess.Popen(
            [*DRIVER, "run", "ancient-bench", "--data", DATA, "--limit", "3", "--model",
             "openai:fake", "--base-url", srv.base_url, "--concurrency", "2", "--executor",
             "ray", "--ray-workers", "2", "--out", str(out)],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while _cached(out) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        tree = _descendants({proc.pid}) - {proc.pid}
        assert proc.poll() is None and len(tree) >= 3, tree  # gcs, raylet, replicas...
        proc.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGTERM, err.decode()[-2000:]
        while {pid for pid, _, _ in _ps()} & tree and time.monotonic() - stopped < 30:
            time.sleep(0.2)
        left = {pid for pid, _, _ in _ps()} & tree
        print(f"\nlocal cluster gone {time.monotonic() - stopped:.1f} s after SIGTERM")
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"Ray processes of the run left 30 s after SIGTERM: {sorted(left)}"
