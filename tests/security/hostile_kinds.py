"""Hostile file kinds for the path-rule tests (docs/paths.md): planting a FIFO, a socket,
a folder or a link out at a data path, hostile references, and a watchdog that fails (and
unblocks) a reader stuck on a FIFO."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import shutil
import socket
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.cli.main import main
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
#: Seconds a case may take (the shared test machine is slow; a hang is minutes).
LIMIT_S = 60.0
#: The colour of the image outside the root: a request carrying it means it was used.
OUTSIDE_RGB = (255, 0, 255)
FILE_KINDS = ("fifo", "socket", "folder", "symlink-out")
REF_KINDS = ("dotdot", "absolute")
ALL_KINDS = FILE_KINDS + REF_KINDS
#: Words each kind's refusal message must hold (besides the path).
KIND_WORDS = {"fifo": "FIFO", "socket": "socket", "folder": "folder",
              "symlink-out": "outside", "dotdot": "outside", "absolute": "outside"}



class Recorder(ModelBackend):
    """Answers a fixed text and remembers every image it was sent (no network)."""

    backend = "recorder"
    seen: list[bytes]

    def __init__(self, answer: str = "<res>王</res>") -> None:
        self.answer = answer
        self.seen = []

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        self.seen.append(json.dumps(payload, default=str).encode())
        return Response(text=self.answer)


# ---------------------------------------------------------------- planting hostile kinds

def outside_image(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "secret.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (32, 32), OUTSIDE_RGB).save(path)
    return path


_SOCKETS: list[socket.socket] = []


def plant(path: Path, kind: str, outside: Path) -> None:
    """Replace the file at ``path`` by ``kind`` (one of :data:`FILE_KINDS`)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "symlink-out":
        path.symlink_to(outside)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        here = os.getcwd()
        os.chdir(path.parent)  # a relative name: tmp paths can pass AF_UNIX's 108 bytes
        try:
            sock.bind(path.name)
        finally:
            os.chdir(here)
        _SOCKETS.append(sock)
    else:
        raise AssertionError(kind)


def reference_for(kind: str, outside: Path, base: Path) -> str:
    """The text of a hostile reference (``dotdot`` relative to ``base``, ``absolute``)."""
    if kind == "absolute":
        return str(outside)
    return os.path.relpath(outside, base)


def unblock(paths: list[Path]) -> None:
    """Open each FIFO for writing and close it: a reader stuck in ``open`` gets EOF."""
    for p in paths:
        with contextlib.suppress(OSError):
            if stat.S_ISFIFO(os.lstat(p).st_mode):
                os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))


def run_watched(argv: list[str], fifos: list[Path]) -> int:
    """``main(argv)`` on a thread; fails if it takes over :data:`LIMIT_S` (then unblocks
    it) or raises."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["rc"] = main(argv)
        except SystemExit as exc:  # argparse
            box["rc"] = exc.code
        except BaseException as exc:  # the test fails on it below
            box["exc"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(LIMIT_S)
    if thread.is_alive():
        for _ in range(20):
            unblock(fifos)
            thread.join(0.5)
            if not thread.is_alive():
                break
        pytest.fail(f"{argv[:2]} hung on a FIFO (over {LIMIT_S:.0f} s)")
    assert "exc" not in box, f"raised {box.get('exc')!r}"
    rc = box["rc"]
    assert isinstance(rc, int)
    return rc


def texts_under(folder: Path) -> str:
    """Every regular text file under ``folder``, joined (run folders, reports)."""
    out = []
    if folder.is_dir():
        for p in sorted(folder.rglob("*")):
            if p.is_file() and not p.is_symlink() and p.suffix in (
                    ".json", ".jsonl", ".md", ".txt", ".log", ".csv"):
                out.append(p.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(out)


def sent_outside_colour(payloads: list[bytes]) -> bool:
    """Whether any request carried an image whose pixels are all :data:`OUTSIDE_RGB`."""
    for raw in payloads:
        for b64 in re.findall(rb"base64,([A-Za-z0-9+/=]+)", raw):
            with Image.open(io.BytesIO(base64.b64decode(b64))) as im:
                colours = im.convert("RGB").getcolors(4)
            if colours is not None and {c for _, c in colours} == {OUTSIDE_RGB}:
                return True
    return False
