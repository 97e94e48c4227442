"""A real local HTTP server speaking the OpenAI chat-completions protocol, for tests.

Each chat request (``POST``) pops the next scripted behaviour; every request body is
recorded so tests can check what the client really sent. ``GET …/models`` answers the
``models`` reply (default: 200 with an empty model list) and is recorded in ``gets``
only. Listens on 127.0.0.1 with an ephemeral port, HTTP/1.1 keep-alive, one thread per
connection, a listen backlog of 1,024 (hundreds of concurrent connections).
:meth:`FakeServer.stop` kills it mid-test: new connections are refused and open ones
are dropped without an answer.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """One scripted reply: HTTP ``status``, JSON ``body`` (or raw ``raw`` bytes), extra
    ``headers``, and ``delay_s`` before answering (to provoke client timeouts)."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def chat_reply(text: str | None, prompt_tokens: int = 10, completion_tokens: int = 5,
               finish_reason: str | None = "stop", **message: Any) -> Scripted:
    """A 200 reply whose first choice's message content is ``text`` (extra ``message``
    fields such as ``reasoning_content`` are added to the message)."""
    return Scripted(body={"id": "x", "object": "chat.completion",
                          "choices": [{"index": 0, "finish_reason": finish_reason,
                                       "message": {"role": "assistant", "content": text,
                                                   **message}}],
                          "usage": {"prompt_tokens": prompt_tokens,
                                    "completion_tokens": completion_tokens}})


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True


class FakeServer:
    """Handle to a running fake server: ``base_url``, ``requests`` (parsed JSON bodies),
    ``headers`` (request headers), ``times`` (monotonic arrival), ``script`` (list of
    Scripted) or ``responder`` (callable), ``models`` (reply to ``GET /models``),
    ``gets`` (paths of GET requests)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.script: list[Scripted] = []
        self.responder: Callable[[dict[str, Any]], Scripted] | None = None
        self.models: Scripted = Scripted(body={"object": "list", "data": []})
        self.gets: list[str] = []
        self.lock = threading.Lock()
        self.base_url = ""
        self.dead = False
        self._server: _Server | None = None

    def stop(self) -> None:
        """Kill the server: refuse new connections, drop open ones unanswered."""
        self.dead = True
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


@contextmanager
def fake_openai_server() -> Iterator[FakeServer]:
    """Start a fake chat-completions server; yields its :class:`FakeServer` handle."""
    state = FakeServer()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def _drop_if_dead(self) -> bool:
            if state.dead:
                self.close_connection = True
                with suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return True
            return False

        def do_GET(self) -> None:
            if self._drop_if_dead():
                return
            with state.lock:
                state.gets.append(self.path)
                route = self.path.split("?", 1)[0].rstrip("/")  # a query follows the path
                reply = state.models if route.endswith("/models") else \
                    Scripted(status=404, body={"error": "not found"})
            self._answer(reply)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if self._drop_if_dead():
                return
            body = json.loads(raw or b"{}")
            with state.lock:
                state.requests.append(body)
                state.headers.append(dict(self.headers.items()))
                state.times.append(time.monotonic())
                if state.responder is not None:
                    reply = state.responder(body)
                elif state.script:
                    reply = state.script.pop(0)
                else:
                    reply = chat_reply("default")
            self._answer(reply)

        def _answer(self, reply: Scripted) -> None:
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if self._drop_if_dead():
                return
            data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

    server = _Server(("127.0.0.1", 0), Handler)
    state._server = server
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        state.stop()
