"""Where a stop signal can land (cli/interrupts.py, module docstring; docs/reference/
conventions.md, "Stopping a run"): a second signal in the command's clean-up, in the
exit of the signal block, in the wait for the process's threads or in its exit
callbacks; a first signal whose ``KeyboardInterrupt`` Python discards (raised inside a
weakref callback). Expected everywhere: no traceback, the exit status ``128 + first
signal``, and a watchdog line that says which case ended the process.

The subprocess grid runs a fake command under the real ``main()`` (its ``_main``
replaced: a command that waits, and whose clean-up after Ctrl-C takes a while in one of
four ways) and sends it real signals at generated moments. The in-process tests make the
discarded interrupt certain: a weakref callback raises it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import weakref
from collections.abc import Callable, Iterator

import pytest

from heritage_eval.cli import interrupts
from heritage_eval.cli import main as cli_main

ENV = dict(os.environ, PYTHONUNBUFFERED="1")

#: The fake command. After the first stop signal it reports and returns 128 + signal,
#: after a clean-up of 0.6 s in one of these places: its own except clause ("cleanup"),
#: a non-daemon thread the exit waits for ("thread"), an exit callback ("atexit"); or
#: at once ("prompt": the second signal then lands in the block's exit or later).
FAKE = r"""
import atexit, sys, threading, time
from heritage_eval.cli import main as cli_main
from heritage_eval.cli.interrupts import received_signal
mode = sys.argv[1]

def command(argv):
    try:
        print("ready", flush=True)
        time.sleep(60)
        return 0
    except KeyboardInterrupt:
        if mode == "cleanup":
            time.sleep(0.6)
        elif mode == "thread":
            threading.Thread(target=time.sleep, args=(0.6,)).start()
        elif mode == "atexit":
            atexit.register(time.sleep, 0.6)
        print("interrupted: fake command", file=sys.stderr, flush=True)
        return 128 + (received_signal() or 2)

cli_main._main = command
sys.exit(cli_main.main([]))
"""

PAIRS = [(signal.SIGINT, signal.SIGINT), (signal.SIGTERM, signal.SIGTERM),
         (signal.SIGINT, signal.SIGTERM)]


def _default_sigint() -> None:
    """In the child before exec: Ctrl-C as from a terminal, even when the test session
    was started in the background with SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("mode", ["prompt", "cleanup", "thread", "atexit"])
@pytest.mark.parametrize(("first", "second"), PAIRS, ids=["INT-INT", "TERM-TERM", "INT-TERM"])
@pytest.mark.parametrize("gap", [0.01, 0.04, 0.12, 0.3])
def test_two_signals_never_print_a_traceback(mode: str, first: signal.Signals,
                                             second: signal.Signals, gap: float) -> None:
    proc = subprocess.Popen([sys.executable, "-c", FAKE, mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV,
                            preexec_fn=_default_sigint)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        proc.send_signal(first)
        time.sleep(gap)
        proc.send_signal(second)  # (nothing when the process has already ended)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err and "Exception ignored" not in err, err
    # the status of the first signal, whoever ended the process (itself or the watchdog)
    assert proc.returncode == 128 + first, (proc.returncode, err)
    assert "interrupted" in err or "stopped at a second signal" in err, err
    # every clean-up is far shorter than the grace period: the watchdog can only have
    # acted on the second signal
    assert "had not ended" not in err, err


# -- in-process: a KeyboardInterrupt that Python discards ------------------------------


@pytest.fixture
def hard_exits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, float | None]]]:
    """The watchdog's exits, recorded instead of ending pytest; on leaving, waits for
    every watchdog of the test and puts back the signal handlers, wake-up descriptor and
    unraisable hook (an armed block keeps them until the process ends)."""
    calls: list[tuple[int, float | None]] = []
    monkeypatch.setattr(interrupts, "_hard_exit",
                        lambda signum, grace: calls.append((signum, grace)))
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    try:
        yield calls
    finally:
        for block in list(interrupts._armed):
            if block.watcher is not None:
                block.watcher.join(10)
            assert block.watcher is None or not block.watcher.is_alive()
        interrupts._release_armed()
        assert not interrupts._armed
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
        assert sys.unraisablehook is not interrupts._on_unraisable
        assert signal.set_wakeup_fd(-1) == -1


def _discarded(stop: Callable[[], object]) -> None:
    """Run ``stop`` inside a weakref callback, where Python discards what it raises."""
    class Thing:
        pass

    thing = Thing()
    ref = weakref.ref(thing, lambda _ref: stop())
    del thing  # the callback runs here
    assert ref() is None


def _command(stop: Callable[[], object], code: int, seen: list[str],
             steps: int = 500) -> Callable[[object], int]:
    """A fake ``_main``: its stop signal is discarded; then it works ``steps`` x 10 ms,
    returning ``code`` unless a ``KeyboardInterrupt`` reaches it (then it reports and
    returns 128 + signal, as the real command does)."""
    def command(argv: object) -> int:
        _discarded(stop)
        try:
            for _ in range(steps):
                time.sleep(0.01)
        except KeyboardInterrupt:
            seen.append("interrupt")
            print("interrupted: fake command", file=sys.stderr)
            return 128 + (interrupts.received_signal() or 2)
        seen.append("finished")
        return code
    return command


@pytest.mark.parametrize("code", [0, 1, 2, 130, 143])
def test_a_lost_sigterm_still_gives_its_exit_status(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        hard_exits: list[tuple[int, float | None]], code: int) -> None:
    # the report: SIGTERM's handler ran inside the import system's module-lock callback,
    # its KeyboardInterrupt was discarded, and the run finished with status 0. Here no
    # re-delivery either: the command finishes and returns `code`.
    monkeypatch.setattr(interrupts, "MAX_REDELIVERIES", 0)
    discarded: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: discarded.append(u.exc_value))
    seen: list[str] = []
    stop = _command(lambda: interrupts._on_sigterm(signal.SIGTERM, None), code, seen, 5)
    monkeypatch.setattr(cli_main, "_main", stop)
    assert cli_main.main([]) == 143  # 128 + SIGTERM, whatever the command returned
    assert seen == ["finished"]
    assert len(discarded) == 1 and isinstance(discarded[0], KeyboardInterrupt)
    err = capsys.readouterr().err
    if code == 143:  # the status of an interrupted command: it said so itself
        assert "interrupted" not in err
    else:
        assert err.strip() == ("interrupted: the stop signal came as the command was "
                               f"ending (it returned {code}); what it wrote is kept")
    assert hard_exits == []  # no real signal: the watchdog never armed


@pytest.mark.parametrize("real", [False, True], ids=["handler-called", "raise_signal"])
def test_a_discarded_interrupt_is_delivered_again(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        hard_exits: list[tuple[int, float | None]], real: bool) -> None:
    discarded: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: discarded.append(u.exc_value))
    seen: list[str] = []

    def stop() -> None:
        if real:  # a real SIGTERM, whose handler runs inside the callback
            signal.raise_signal(signal.SIGTERM)
        else:
            interrupts._on_sigterm(signal.SIGTERM, None)

    monkeypatch.setattr(cli_main, "_main", _command(stop, 0, seen))
    assert cli_main.main([]) == 143
    assert seen == ["interrupt"]  # the command was stopped, not left to finish
    assert discarded == []  # nothing printed as "Exception ignored"
    assert capsys.readouterr().err.strip() == "interrupted: fake command"
    if real:  # armed by the SIGTERM; the re-delivered SIGINT is no second signal, so it
        # ends at the deadline (here: the replaced exit returns), not at once
        block = interrupts._armed[-1]
        assert block.watcher is not None
        block.watcher.join(interrupts.GRACE_S + 5)
        assert hard_exits == [(signal.SIGTERM, interrupts.GRACE_S)]
    else:
        assert hard_exits == [] and not interrupts._armed


def test_after_a_stop_signal_a_later_one_raises_nothing(
        monkeypatch: pytest.MonkeyPatch, hard_exits: list[tuple[int, float | None]]) -> None:
    # the command stopped at SIGINT; once main() has returned, the block is armed:
    # another SIGINT (as during the interpreter's exit) raises no KeyboardInterrupt and
    # makes the watchdog end the process at once, with the first signal's status
    def command(argv: object) -> int:
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            return 130
        return 0

    monkeypatch.setattr(cli_main, "_main", command)
    assert cli_main.main([]) == 130
    assert signal.getsignal(signal.SIGINT) is interrupts._record
    signal.raise_signal(signal.SIGTERM)  # no KeyboardInterrupt here
    block = interrupts._armed[-1]
    assert block.watcher is not None
    block.watcher.join(5)
    assert hard_exits == [(signal.SIGINT, None)]  # at the second signal, not the deadline


def test_a_second_signal_in_the_clean_up_is_quiet(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        hard_exits: list[tuple[int, float | None]]) -> None:
    # the second signal cuts the command's own report of the first: main() returns the
    # first signal's status instead of letting the KeyboardInterrupt through
    def command(argv: object) -> int:
        try:
            signal.raise_signal(signal.SIGTERM)
        except KeyboardInterrupt:
            signal.raise_signal(signal.SIGINT)
        return 0

    monkeypatch.setattr(cli_main, "_main", command)
    assert cli_main.main([]) == 143
    block = interrupts._armed[-1]
    assert block.watcher is not None
    block.watcher.join(5)
    assert hard_exits == [(signal.SIGTERM, None)]
    assert "Traceback" not in capsys.readouterr().err

