"""A tiny IIIF Image API (2 and 3) on a real loopback HTTP server, for the ingest tests.

``images`` maps a service path (``"/iiif3/a"``) to a Pillow image; a request
``{path}/{region}/{size}/0/default.jpg`` is answered by really cropping (``full``,
``x,y,w,h``, ``pct:x,y,w,h``) and scaling (``max``/``full``, ``!w,h``, ``w,h``) it, PNG
encoded (lossless, so tests can check pixels). ``infos`` maps a path to its
``info.json``; ``static`` maps a path to ``(content type, bytes)``; ``missing`` paths
answer 404; ``flaky`` maps a path to how many 503s come before a real answer;
``slow`` paths wait 0.6 s. Every request path (unquoted) is recorded in ``requests``.
"""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image


@dataclass
class IIIFServer:
    images: dict[str, Image.Image] = field(default_factory=dict)
    infos: dict[str, dict[str, Any]] = field(default_factory=dict)
    static: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    flaky: dict[str, int] = field(default_factory=dict)
    slow: set[str] = field(default_factory=set)
    requests: list[str] = field(default_factory=list)
    base: str = ""

    def render(self, path: str) -> bytes | None:
        for prefix, img in self.images.items():
            if not path.startswith(prefix + "/"):
                continue
            region, size, _rot, _quality = path[len(prefix) + 1:].split("/")
            w, h = img.size
            if region.startswith("pct:"):
                x, y, rw, rh = (float(v) for v in region[4:].split(","))
                box = (round(x * w / 100), round(y * h / 100), round((x + rw) * w / 100),
                       round((y + rh) * h / 100))
            elif region == "full":
                box = (0, 0, w, h)
            else:
                x, y, rw, rh = (int(v) for v in region.split(","))
                box = (x, y, min(w, x + rw), min(h, y + rh))
            out = img.crop(box)
            if size.startswith("!"):
                bw, bh = (int(v) for v in size[1:].split(","))
                out.thumbnail((bw, bh))
            elif size not in ("max", "full"):
                sw, sh = (int(v) for v in size.split(","))
                out = out.resize((sw, sh))
            buf = io.BytesIO()
            out.save(buf, "PNG")
            return buf.getvalue()
        return None


def _handler(server: IIIFServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, ctype: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with suppress(BrokenPipeError, ConnectionResetError):  # a client timed out
                self.wfile.write(body)

        def do_GET(self) -> None:
            path = urllib.parse.unquote(self.path)
            server.requests.append(path)
            if path in server.slow:
                time.sleep(0.6)
            if server.flaky.get(path, 0) > 0:
                server.flaky[path] -= 1
                self.send_response(503)
                self.send_header("Retry-After", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if path in server.missing:
                return self._send(404, "text/html", b"<html>not found</html>")
            if path in server.static:
                ctype, body = server.static[path]
                return self._send(200, ctype, body)
            if path.endswith("/info.json") and path[:-10] in server.infos:
                return self._send(200, "application/json",
                                  json.dumps(server.infos[path[:-10]]).encode())
            image = server.render(path)
            if image is None:
                return self._send(404, "text/plain", b"no such path")
            return self._send(200, "image/png", image)

    return Handler


@contextmanager
def serve(server: IIIFServer) -> Iterator[IIIFServer]:
    """Run ``server`` on 127.0.0.1 (ephemeral port) in a thread; ``server.base`` is set."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    server.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
