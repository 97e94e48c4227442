"""The console script's first and last moments (``cli/entry.py``): a stop signal while
the command line is still being imported, or after the command has returned (during the
interpreter's exit callbacks), ends the process with 128 + signal and no traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

# a stand-in for heritage_eval.cli.main, so that each moment is reached on purpose
_PRELUDE = """
import os, signal, sys, time, types
fake = types.ModuleType("heritage_eval.cli.main")
sys.modules["heritage_eval.cli.main"] = fake
"""


def _run(body: str) -> subprocess.CompletedProcess[str]:
    code = _PRELUDE + textwrap.dedent(body) + \
        "\nfrom heritage_eval.cli.entry import entry\nsys.exit(entry())\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, preexec_fn=lambda: signal.signal(
                              signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_command_line_is_imported(sig: int) -> None:
    # the signal comes as entry() imports main (the module's attribute is read then)
    proc = _run(f"""
    def __getattr__(name):
        os.kill(os.getpid(), {int(sig)})
        time.sleep(5)
    fake.__getattr__ = __getattr__
    """)
    assert proc.returncode == 128 + sig, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "interrupted before the command started: nothing was written" in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_an_exit_callback_after_the_command(sig: int) -> None:
    # the command returned 0; an exit callback (as tqdm's monitor registers one) is
    # running when the signal comes: 128 + signal, no "Exception ignored" traceback
    proc = _run(f"""
    import atexit
    def late():
        os.kill(os.getpid(), {int(sig)})
        time.sleep(5)
    def main():
        atexit.register(late)
        print("run folder: x")
        return 0
    fake.main = main
    """)
    assert proc.returncode == 128 + sig, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert proc.stdout == "run folder: x\n"  # what the command printed is kept


def test_without_a_signal_the_status_is_the_commands() -> None:
    proc = _run("""
    fake.main = lambda: 3
    """)
    assert proc.returncode == 3 and proc.stderr == ""
