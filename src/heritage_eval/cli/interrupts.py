"""SIGTERM and Ctrl-C end a command within seconds, whatever it is waiting on.

The rule (docs/reference/conventions.md, "Stopping a run"):

- **SIGINT (Ctrl-C) and SIGTERM are the same request**: stop now. SIGTERM is handed to
  the current SIGINT handler (asyncio's, which cancels the running requests, or Python's
  default, which raises ``KeyboardInterrupt``), so the command unwinds as for Ctrl-C:
  responses already received are in the cache, the run folder lock is released, and a
  re-run of the same command resumes. The exit status is ``128 + signal`` (130, 143) of
  the *first* stop signal, whatever the command returned afterwards
  (:func:`heritage_eval.cli.main.main` applies it with :func:`received_signal`).
- **A bounded grace period**: a watchdog thread learns of the signal from the C-level
  signal handler (``signal.set_wakeup_fd``), so it hears it even while the main thread
  is blocked inside a C call that never returns to Python (a Ray client waiting for an
  unreachable cluster, a DNS lookup). If the process has not ended :data:`GRACE_S`
  seconds later — or at once on a second signal — it says which of the two on stderr
  and ends with ``os._exit(128 + first signal)``. What was received before is already
  in the SQLite cache (written per answer, journalled), and the run folder's lock is an
  ``flock`` that the OS releases, so the folder stays resumable.

Where a stop signal can land, and what happens there (the rule: no case prints a
traceback, and the status is always that of the first signal):

- **In the command** (first signal): its handler raises ``KeyboardInterrupt`` or
  cancels the asyncio task; the command reports it and returns ``128 + signal``.
- **Where Python discards exceptions** — a ``__del__``, a weakref or garbage-collector
  callback (the import system's module-lock callback is one): the interrupt would be
  lost and the command would go on as if nothing happened. Within the block,
  ``sys.unraisablehook`` catches such a ``KeyboardInterrupt`` quietly and has the
  watchdog send the main thread the signal again 20 ms later (once the hook has
  returned; at most :data:`MAX_REDELIVERIES` times; the watchdog does not count its own
  signal as a second one). Whatever still slips through, ``main()`` returns
  ``128 + signal`` once a stop signal came, whatever the command returned, and the
  watchdog's deadline stands.
- **A second signal while the command unwinds**: the watchdog ends the process at once;
  a ``KeyboardInterrupt`` it raises in the main thread first reaches ``main()``, which
  returns ``128 + first signal``.
- **The block's own exit** (and everything after it: ``main()`` returning, the wait for
  the process's threads): its first step points SIGINT and SIGTERM at a handler that
  only records the signal (the C-level handler still wakes the watchdog), so nothing
  from there on can be cut by a ``KeyboardInterrupt``. Without a stop signal the
  previous handlers are then restored; after one they stay until the process ends
  (*armed*: the watchdog ends it at a further signal or at the deadline — an exit stuck
  on a thread included).
- **The interpreter's shutdown**, armed: the first exit callback ignores SIGINT and
  SIGTERM from there on (Python's teardown would give them back their default action:
  a kernel kill, status ``-signal`` instead of ``128 + first``); the deadline still
  bounds the remaining callbacks.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

#: Seconds a command has to end by itself after SIGTERM / SIGINT.
GRACE_S = 3.0
#: The signals handled here.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Times per block a ``KeyboardInterrupt`` that Python discarded is sent again.
MAX_REDELIVERIES = 8
#: Byte asking the watchdog to send a discarded interrupt again (its own signal, which
#: it then does not count as a second one).
_REDELIVER = 0xFF
#: Seconds the watchdog waits before it sends the interrupt again: the hook that asked
#: (Python code in the main thread, perhaps) must have returned, or the signal's handler
#: would run inside it.
_RESEND_AFTER_S = 0.02
#: Seconds the block's exit waits for the watchdog to answer (it answers in
#: microseconds; the bound only guards a starved thread).
_ANSWER_S = 2.0

_received: list[int] = []


@dataclass
class _Block:
    """One :func:`stop_on_signals` block: its wake-up socket pair and what it replaced."""

    reader: socket.socket
    writer: socket.socket
    old_fd: int
    old_term: Any
    old_hook: Callable[[Any], object]
    answered: threading.Event = field(default_factory=threading.Event)
    stopping: bool = False  # set by the watchdog at the first stop signal
    ended: bool = False  # set by the watchdog as it ends the process
    redeliveries: int = 0
    old_int: Any = None  # the SIGINT handler replaced at the block's exit, if any
    watcher: threading.Thread | None = None


_current: list[_Block] = []  # the block in progress (none or one)
_armed: list[_Block] = []  # blocks left after a stop signal: armed until the process ends


def received_signal() -> int | None:
    """The first stop signal (``signal.SIGINT`` 2 or ``signal.SIGTERM`` 15) received
    during the current (or last) :func:`stop_on_signals` block, or ``None``."""
    return _received[0] if _received else None


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: do what Ctrl-C does (the current SIGINT handler)."""
    if signum not in _received:
        _received.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if handler is _record:  # the block is ending: nothing may raise any more
        return
    if callable(handler) and handler is not _on_sigterm:
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


def _record(signum: int, frame: FrameType | None) -> None:
    """From the block's exit on: a stop signal is only recorded — it cannot cut the
    exit; the watchdog, woken by the C-level handler, ends the process if one is due."""
    if signum not in _received:
        _received.append(signum)


def _hard_exit(signum: int, grace_s: float | None) -> None:
    """Say why on stderr and end the process with ``128 + signum``: the grace period of
    ``grace_s`` seconds ran out, or (``grace_s`` ``None``) a second signal came."""
    why = ("stopped at a second signal" if grace_s is None
           else f"stopped: the command had not ended {grace_s:g} s after the signal")
    with contextlib.suppress(OSError):
        os.write(2, (f"\n{why}; responses received so far are cached: re-run the same "
                     "command to resume\n").encode())
    os._exit(128 + signum)


def _end(block: _Block, first: int, grace_s: float | None) -> None:
    """The watchdog ends the process (:func:`_hard_exit`); ``block.ended`` tells
    :func:`_release_armed` that a watchdog still alive is only returning (where
    :func:`_hard_exit` was replaced and came back)."""
    block.ended = True
    _hard_exit(first, grace_s)


def _watch(block: _Block, grace_s: float) -> None:
    """The watchdog: ``block.reader`` receives the number of every signal
    (``set_wakeup_fd``), :data:`_REDELIVER` from :func:`_redeliver`, and a 0 byte when
    the block ends (answered through ``block.answered``). Returns at that 0 byte unless a
    stop signal came first; from a stop signal on, it ends the process at the deadline
    or at a second stop signal."""
    sock = block.reader
    deadline: float | None = None
    first = 0
    skip = False
    while True:
        sock.settimeout(None if deadline is None else max(0.0, deadline - time.monotonic()))
        try:
            data = sock.recv(64)
        except TimeoutError:
            _end(block, first, grace_s)
            return
        except OSError:
            data = b""
        if not data:  # the pair was closed: wait out the grace period, if one runs
            block.answered.set()
            if deadline is not None:
                time.sleep(max(0.0, deadline - time.monotonic()))
                _end(block, first, grace_s)
            return
        for byte in data:
            if byte == 0:
                block.answered.set()
                if deadline is None:
                    return
            elif byte == _REDELIVER:  # its own signal comes next: no second signal
                skip = _send_again()
            elif byte in STOP_SIGNALS:
                if skip:
                    skip = False
                    continue
                if deadline is not None:  # a second signal: no more waiting
                    _end(block, first, None)
                    return
                first, deadline = byte, time.monotonic() + grace_s
                if byte not in _received:
                    _received.append(byte)
                block.stopping = True


def _on_unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` within a block: a discarded ``KeyboardInterrupt`` is sent
    to the main thread again; anything else goes to the previous hook."""
    block = _current[-1] if _current else None
    try:
        if (block is not None and isinstance(unraisable.exc_value, KeyboardInterrupt)
                and _redeliver(block)):
            return
    except KeyboardInterrupt:  # a signal handled inside this hook: discarded too
        if block is not None:
            _redeliver(block)
        return
    (block.old_hook if block is not None else sys.__unraisablehook__)(unraisable)


def _redeliver(block: _Block) -> bool:
    """Ask the watchdog to send the main thread a stop signal again (it runs in its own
    thread: a signal sent from this hook would be handled inside the hook, and lost
    again). ``False`` when :data:`MAX_REDELIVERIES` were asked for already."""
    if block.redeliveries >= MAX_REDELIVERIES:
        return False
    block.redeliveries += 1
    try:
        block.writer.send(bytes([_REDELIVER]))
    except OSError:
        return False
    return True


def _send_again() -> bool:
    """The watchdog's part of :func:`_redeliver`: SIGINT to the main thread (SIGTERM
    where SIGINT has no Python handler); ``False`` when neither has one."""
    sig = next((s for s in STOP_SIGNALS if callable(signal.getsignal(s))), None)
    main = threading.main_thread().ident
    if sig is None or main is None:
        return False
    time.sleep(_RESEND_AFTER_S)  # the hook that asked has returned by then
    if hasattr(signal, "pthread_kill"):
        signal.pthread_kill(main, sig)  # a real signal: it ends a blocking call too
    else:  # pragma: no cover - platforms without pthread_kill
        _thread.interrupt_main(sig)
    return True


@contextlib.contextmanager
def stop_on_signals(grace_s: float = GRACE_S) -> Iterator[None]:
    """Within the block, SIGTERM acts as Ctrl-C and a watchdog ends the process
    ``grace_s`` seconds after either signal (module docstring). Outside the main thread
    (where Python cannot install handlers) the block runs unchanged. Restores the
    previous SIGINT / SIGTERM handlers, wake-up descriptor and ``sys.unraisablehook`` on
    leaving — except after a stop signal, when the watchdog stays armed, and signals are
    only recorded, until the process has ended."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _release_armed()
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
    block = _Block(reader, writer, old_fd, signal.signal(signal.SIGTERM, _on_sigterm),
                   sys.unraisablehook)
    sys.unraisablehook = _on_unraisable
    block.watcher = threading.Thread(target=_watch, args=(block, grace_s),
                                     name="stop-on-signals", daemon=True)
    block.watcher.start()
    _current.append(block)
    try:
        yield
    finally:
        _leave(block)


def _leave(block: _Block) -> None:
    """The block's exit: signals only recorded from now on, then the watchdog's answer
    decides between restoring everything and staying armed."""
    for _ in range(4):  # (a signal pending now is handled by signal.signal() itself,
        # by the handler being replaced: its KeyboardInterrupt is the one already heard)
        try:
            _quiet(block)
            break
        except KeyboardInterrupt:
            continue
    with contextlib.suppress(OSError):
        block.writer.send(b"\0")
    block.answered.wait(_ANSWER_S)
    with contextlib.suppress(ValueError):
        _current.remove(block)
    sys.unraisablehook = block.old_hook
    if block.stopping or not block.answered.is_set():
        _armed.append(block)  # (the pair kept open: a closed pair would disarm it)
        atexit.unregister(_ignore_at_exit)
        atexit.register(_ignore_at_exit)  # (the last registered: it runs first)
    else:
        _restore(block)


def _quiet(block: _Block) -> None:
    """Point SIGINT (unless it is ignored or left to the OS) and SIGTERM at
    :func:`_record`; idempotent."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not _record:
        block.old_int = signal.signal(signal.SIGINT, _record)
    if signal.getsignal(signal.SIGTERM) is not _record:
        signal.signal(signal.SIGTERM, _record)


def _ignore_at_exit() -> None:
    """An armed process's first exit callback: stop signals are ignored from here on.
    Python's own teardown comes next, and it puts back the default action (the
    kernel ending the process, status ``-signal``) of every signal that has a Python
    handler — but not of an ignored one; the exit status stays ``128 + first signal``,
    and the watchdog's deadline still bounds the remaining callbacks."""
    for sig in STOP_SIGNALS:
        if signal.getsignal(sig) is _record:
            signal.signal(sig, signal.SIG_IGN)


def _restore(block: _Block) -> None:
    """Put back what ``block`` replaced and close its socket pair."""
    if block.old_int is not None:
        signal.signal(signal.SIGINT, block.old_int)
    signal.signal(signal.SIGTERM, block.old_term)
    signal.set_wakeup_fd(block.old_fd)
    block.reader.close()
    block.writer.close()


def _release_armed() -> None:
    """Restore what armed blocks replaced once their watchdog is gone — which happens
    only where :func:`_hard_exit` was replaced (tests running commands in-process)."""
    for block in reversed(list(_armed)):
        if block.watcher is not None and block.ended:
            block.watcher.join(1.0)
        if block.watcher is None or not block.watcher.is_alive():
            _armed.remove(block)
            _restore(block)
