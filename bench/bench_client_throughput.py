"""Client throughput of the ``openai`` backend against loopback servers (issue 11 goal 3,
issue 9 "several endpoints").

A minimal asyncio OpenAI-compatible server runs in its own process and answers every chat
request after a fixed latency L = 200 ms (``GET /v1/models`` at once). The client side is
the real path of a run: :func:`heritage_eval.core.runner.run_items_async` with the SQLite
response cache, through the ``openai`` backend and its aiohttp transport
(:mod:`heritage_eval.models.openai_http`; the aiohttp version is printed). For C = 8, 64
and 256 conversations in flight it prints requests/s, the ratio to the ideal C/L, the
client's CPU per request and the server process's CPU. Then four server processes serve
as four endpoints of one backend and the rate is compared with 4x one endpoint's rate at
the same per-endpoint concurrency. Each goal is printed with whether it is met. Runtime
about a minute.

Usage: ``python bench/bench_client_throughput.py [--seconds S]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LATENCY_S = 0.2
_TICK = os.sysconf("SC_CLK_TCK")

_ANSWER = json.dumps({"id": "b", "object": "chat.completion",
                      "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": "答案"}}],
                      "usage": {"prompt_tokens": 20, "completion_tokens": 2}}).encode()
_MODELS = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]}).encode()


# ----------------------------------------------------------------------------- server
class _ServerProtocol(asyncio.Protocol):
    """HTTP/1.1 keep-alive, pipelining-safe: replies leave in request order."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        loop = asyncio.get_running_loop()
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].decode("latin-1").split("\r\n")
            length = 0
            for line in head[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buf) < end + 4 + length:
                return
            self.buf = self.buf[end + 4 + length:]
            is_get = head[0].startswith("GET")
            body = _MODELS if is_get else _ANSWER
            reply = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            if is_get:
                self._send(reply)
            else:
                loop.call_later(self.latency, self._send, reply)

    def _send(self, reply: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(reply)


def serve(latency: float) -> None:
    """Run the server forever; print its port on the first line of stdout."""
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _ServerProtocol(latency), "127.0.0.1", 0,
                                          backlog=4096)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()
    asyncio.run(main())


class Server:
    """One server process: ``url``, and its CPU seconds so far (:meth:`cpu_s`)."""

    def __init__(self, latency: float = LATENCY_S) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", str(latency)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        port = int(self.proc.stdout.readline())
        self.url = f"http://127.0.0.1:{port}/v1"

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


# ----------------------------------------------------------------------------- client
def _options(urls: list[str], concurrency: int) -> Any:
    from heritage_eval.models.base import BackendOptions

    try:
        from heritage_eval.models.endpoints import EndpointOptions
    except ImportError:  # the client before several endpoints existed
        return BackendOptions(base_url=urls[0], max_retries=2)
    return EndpointOptions(base_url=urls[0], base_urls=tuple(urls), concurrency=concurrency,
                           max_retries=2)


def measure(urls: list[str], servers: list[Server], concurrency: int,
            seconds: float) -> dict[str, float]:
    """Send C/L x ``seconds`` conversations with ``concurrency`` per endpoint."""
    from heritage_eval.core.cache import ResponseCache
    from heritage_eval.core.runner import RunItem, run_items_async
    from heritage_eval.core.types import Conversation, GenerationSettings, Message
    from heritage_eval.models.base import create_backend

    total_c = concurrency * len(urls)
    n = max(2 * total_c, int(total_c / LATENCY_S * seconds))
    items = [RunItem(f"s{i}", Conversation(turns=(Message.user(f"transcribe item {i}"),)))
             for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "cache.sqlite")
        backend = create_backend("openai:bench", _options(urls, concurrency))
        cpu0, srv0, t0 = time.process_time(), sum(s.cpu_s() for s in servers), time.perf_counter()
        res = asyncio.run(run_items_async(items, backend, GenerationSettings(), cache,
                                          concurrency=total_c, desc="bench"))
        cache.close()
        wall = time.perf_counter() - t0
        cpu, srv = time.process_time() - cpu0, sum(s.cpu_s() for s in servers) - srv0
        ok = sum(1 for r in res.values() if r.error is None)
        cached = len(ResponseCache(Path(tmp) / "cache.sqlite"))
    return {"n": n, "ok": ok, "cached": cached, "rate": n / wall, "ideal": total_c / LATENCY_S,
            "cpu_ms": 1000 * cpu / n, "server_cpu_ms": 1000 * srv / n, "wall": wall}


def _line(label: str, m: dict[str, float]) -> str:
    return (f"{label:<22} {m['rate']:7.1f} req/s  ideal {m['ideal']:6.0f}  "
            f"ratio {m['rate'] / m['ideal']:5.1%}  client CPU {m['cpu_ms']:.2f} ms/req  "
            f"server CPU {m['server_cpu_ms']:.2f} ms/req  ({m['ok']:.0f}/{m['n']:.0f} ok, "
            f"{m['cached']:.0f} cached, {m['wall']:.1f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--serve", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--seconds", type=float, default=4.0,
                    help="approximate duration of each measurement, s (default 4)")
    ap.add_argument("--per-endpoint", type=int, default=32,
                    help="concurrency per endpoint in the four-endpoint check (default 32)")
    args = ap.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    goals: list[tuple[str, bool]] = []
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} on {os.cpu_count()} cores (the server shares "
          f"them; other processes lower every ratio); L = {LATENCY_S * 1000:.0f} ms")
    import aiohttp

    print(f"client transport: aiohttp {aiohttp.__version__}")
    one = Server()
    try:
        measure([one.url], [one], 8, 0.5)  # warm-up: imports, first connections
        results = {}
        for c in (8, 64, 256):
            results[c] = m = measure([one.url], [one], c, args.seconds)
            print(_line(f"1 endpoint, C={c}", m), flush=True)
        goals.append((f"C=64: >= 90 % of C/L (got {results[64]['rate'] / 320:.1%})",
                      results[64]["rate"] >= 0.9 * 320))
        goals.append((f"C=256: >= 80 % of C/L (got {results[256]['rate'] / 1280:.1%})",
                      results[256]["rate"] >= 0.8 * 1280))
        pe = args.per_endpoint
        single = measure([one.url], [one], pe, args.seconds)
        print(_line(f"1 endpoint, C={pe}", single), flush=True)
    finally:
        one.close()
    four = [Server() for _ in range(4)]
    try:
        multi = measure([s.url for s in four], four, pe, args.seconds)
        print(_line(f"4 endpoints, C={pe} each", multi), flush=True)
    finally:
        for s in four:
            s.close()
    ratio = multi["rate"] / (4 * single["rate"])
    print(f"four endpoints vs 4x one endpoint (C={pe} each): {ratio:.1%}")
    goals.append((f"4 endpoints: >= 90 % of 4x one endpoint's rate (got {ratio:.1%})",
                  ratio >= 0.9))
    for text, met in goals:
        print(f"goal {text}: {'MET' if met else 'NOT MET'}")


if __name__ == "__main__":
    main()
