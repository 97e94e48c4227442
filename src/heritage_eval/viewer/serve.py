"""Serve a built site on 127.0.0.1 (``heritage-eval view … --serve``).

A threaded :mod:`http.server` bound to the loopback interface only. It sends the files
of the site folder, and under ``/_fs/<absolute path>`` the original images the site
links to — only those listed in the site's ``originals.txt`` (written at build time, one
path a line as the file name's bytes), nothing else of the file system. A name that is
not valid UTF-8 is matched by its bytes (percent-encoded in the link).

The page names an original by its link relative to the site (``../../imgs/a.png``: the
site's data hold no absolute path), sent as ``/_up/<N>/<rest>`` (``N`` leading ``..``
parts, which a browser would otherwise fold away); the server resolves it against the
site folder and sends it only when listed, as for ``/_fs/``.

:func:`serve` ends on Ctrl-C (and on SIGTERM where the command turns it into Ctrl-C,
:mod:`heritage_eval.cli.interrupts`), printing ``stopped``, and returns ``True`` so the
command can exit ``128 + signal`` (docs/reference/conventions.md).
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
#: most leading ``..`` parts a ``/_up/`` link may have (deeper than any real folder tree)
MAX_UP = 256


class _Handler(SimpleHTTPRequestHandler):
    originals: frozenset[str] = frozenset()

    def translate_path(self, path: str) -> str:
        rel = unquote(urlsplit(path).path, errors="surrogateescape")
        if rel.startswith("/_fs/"):
            target = os.path.normpath(rel[len("/_fs"):])
            if target in self.originals:
                return target
            return os.path.join(self.directory, "__not_allowed__")
        if rel.startswith("/_up/"):
            ups, _, rest = rel[len("/_up/"):].partition("/")
            if ups.isdigit() and int(ups) <= MAX_UP:
                target = os.path.normpath(os.path.join(self.directory, "../" * int(ups), rest))
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


def serve(site_dir: str | Path, port: int = 8000) -> bool:
    """Serve ``site_dir`` until Ctrl-C, printing the address; returns ``True`` when it
    was stopped by Ctrl-C (``KeyboardInterrupt``, printing ``stopped``: the caller exits
    ``128 + signal``), ``False`` when the server was shut down otherwise. Raises
    :class:`OSError` when the port is taken."""
    server = make_server(site_dir, port)
    host, real_port = server.server_address[:2]
    print(f"serving {site_dir} at http://{host!s}:{real_port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", flush=True)
        return True
    finally:
        server.server_close()
    return False
