"""A real local HTTP server speaking the OpenAI chat-completions protocol, for tests.

Each request pops the next scripted behaviour; every request body is recorded so tests
can check what the client really sent. Listens on 127.0.0.1 with an ephemeral port.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


def chat_reply(text: str | None, prompt_tokens: int = 10, completion_tokens: int = 5) -> Scripted:
    """A 200 reply whose first choice's message content is ``text``."""
    return Scripted(body={"id": "x", "object": "chat.completion",
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": text}}],
                          "usage": {"prompt_tokens": prompt_tokens,
                                    "completion_tokens": completion_tokens}})


class FakeServer:
    """Handle to a running fake server: ``base_url``, ``requests`` (parsed JSON bodies),
    ``headers`` (request headers), ``script`` (list of Scripted or a callable)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.script: list[Scripted] = []
        self.responder: Callable[[dict[str, Any]], Scripted] | None = None
        self.lock = threading.Lock()
        self.base_url = ""


@contextmanager
def fake_openai_server() -> Iterator[FakeServer]:
    """Start a fake chat-completions server; yields its :class:`FakeServer` handle."""
    state = FakeServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
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
            if reply.delay_s:
                time.sleep(reply.delay_s)
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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
