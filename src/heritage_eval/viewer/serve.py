"""Serve a built site on 127.0.0.1 (``heritage-eval view … --serve``).

A threaded :mod:`http.server` bound to the loopback interface only. It sends the files
of the site folder, and under ``/_fs/<absolute path>`` the original images the site
links to — only those listed in the site's ``originals.txt`` (written at build time, one
path a line as the file name's bytes), nothing else of the file system. A name that is
not valid UTF-8 is matched by its bytes (percent-encoded in the link).
"""

from __future__ import annotations

import functools
import os
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from heritage_eval.viewer.textio import decode_path_line

HOST = "127.0.0.1"


class _Handler(SimpleHTTPRequestHandler):
    originals: frozenset[str] = frozenset()

    def translate_path(self, path: str) -> str:
        rel = unquote(urlsplit(path).path, errors="surrogateescape")
        if rel.startswith("/_fs/"):
            target = os.path.normpath(rel[len("/_fs"):])
            if target in self.originals:
                return target
            return os.path.join(self.directory, "__not_allowed__")
        return super().translate_path(path)

    def log_message(self, format: str, *args: Any) -> None:  # quiet by default
        pass


def make_server(site_dir: str | Path, port: int = 0) -> ThreadingHTTPServer:
    """A server for ``site_dir`` on 127.0.0.1:``port`` (0: a free port), not started.
    Raises :class:`OSError` when the port is taken."""
    root = Path(site_dir).resolve()
    listed = root / "originals.txt"
    lines = listed.read_bytes().splitlines(keepends=True) if listed.is_file() else []
    allowed = frozenset(os.path.normpath(p) for p in map(decode_path_line, lines) if p)
    handler = type("SiteHandler", (_Handler,), {"originals": allowed})
    return ThreadingHTTPServer((HOST, port), functools.partial(handler, directory=str(root)))


def serve(site_dir: str | Path, port: int = 8000) -> None:
    """Serve ``site_dir`` until Ctrl-C, printing the address."""
    server = make_server(site_dir, port)
    host, real_port = server.server_address[:2]
    print(f"serving {site_dir} at http://{host!s}:{real_port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.server_close()
