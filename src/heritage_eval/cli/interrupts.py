"""SIGTERM and Ctrl-C end a command within seconds, whatever it is waiting on.

The rule (docs/reference/conventions.md, "Stopping a run"):

- **SIGINT (Ctrl-C) and SIGTERM are the same request**: stop now. SIGTERM is handed to
  the current SIGINT handler (asyncio's, which cancels the running requests, or Python's
  default, which raises ``KeyboardInterrupt``), so the command unwinds as for Ctrl-C:
  responses already received are in the cache, the run folder lock is released, and a
  re-run of the same command resumes. The exit status is ``128 + signal`` (130, 143).
- **A bounded grace period**: a watchdog thread learns of the signal from the C-level
  signal handler (``signal.set_wakeup_fd``), so it hears it even while the main thread
  is blocked inside a C call that never returns to Python (a Ray client waiting for an
  unreachable cluster, a DNS lookup). If the process has not ended :data:`GRACE_S`
  seconds later — or at once on a second signal — it says so on stderr and ends with
  ``os._exit(128 + signal)``. What was received before is already in the SQLite cache
  (written per answer, journalled), and the run folder's lock is an ``flock`` that the
  OS releases, so the folder stays resumable.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from types import FrameType

#: Seconds a command has to end by itself after SIGTERM / SIGINT.
GRACE_S = 3.0
#: The signals handled here.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_received: list[int] = []
_armed: list[tuple[socket.socket, socket.socket]] = []


def received_signal() -> int | None:
    """The stop signal received during the current :func:`stop_on_signals` block, or
    ``None``."""
    return _received[0] if _received else None


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: do what Ctrl-C does (the current SIGINT handler)."""
    if signum not in _received:
        _received.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not _on_sigterm:
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


def _hard_exit(signum: int, grace_s: float) -> None:
    with contextlib.suppress(OSError):
        os.write(2, (f"\nstopped: the command had not ended {grace_s:g} s after the "
                     "signal; responses received so far are cached: re-run the same "
                     "command to resume\n").encode())
    os._exit(128 + signum)


def _watch(sock: socket.socket, grace_s: float) -> None:
    """The watchdog: ``sock`` receives the number of every signal (``set_wakeup_fd``),
    and a 0 byte when the block ends. Returns at that 0 byte unless a stop signal came
    first; from a stop signal on, it ends the process at the deadline or at a second
    stop signal."""
    deadline: float | None = None
    first = 0
    while True:
        sock.settimeout(None if deadline is None else max(0.0, deadline - time.monotonic()))
        try:
            data = sock.recv(64)
        except TimeoutError:
            _hard_exit(first, grace_s)
            return
        except OSError:
            data = b""
        if not data:  # the pair was closed: wait out the grace period, if one runs
            if deadline is None:
                return
            time.sleep(max(0.0, deadline - time.monotonic()))
            _hard_exit(first, grace_s)
            return
        for byte in data:
            if byte == 0 and deadline is None:
                return
            if byte not in STOP_SIGNALS:
                continue
            if deadline is not None:  # a second signal: no more waiting
                _hard_exit(first, grace_s)
            first, deadline = byte, time.monotonic() + grace_s
            if byte not in _received:
                _received.append(byte)


@contextlib.contextmanager
def stop_on_signals(grace_s: float = GRACE_S) -> Iterator[None]:
    """Within the block, SIGTERM acts as Ctrl-C and a watchdog ends the process
    ``grace_s`` seconds after either signal (module docstring). Outside the main thread
    (where Python cannot install handlers) the block runs unchanged. Restores the
    previous SIGTERM handler and wake-up descriptor on leaving — except after a stop
    signal, when the watchdog stays armed until the process has ended (an exit that
    waits on a stuck thread is ended too)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    try:
        old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except ValueError:  # not the main interpreter
        reader.close()
        writer.close()
        yield
        return
    old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    watcher = threading.Thread(target=_watch, args=(reader, grace_s),
                               name="stop-on-signals", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            writer.send(b"\0")
        watcher.join(0.25)
        if watcher.is_alive():  # a stop signal came: armed until the process has ended
            _armed.append((reader, writer))  # (kept open: a closed pair would disarm it)
        else:
            signal.signal(signal.SIGTERM, old_term)
            signal.set_wakeup_fd(old_fd)
            reader.close()
            writer.close()
