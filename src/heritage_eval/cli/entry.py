"""The ``heritage-eval`` console script: :func:`heritage_eval.cli.main.main`, with the
process's first and last moments under the stop rule too (docs/reference/conventions.md,
"Stopping a run"; :mod:`heritage_eval.cli.interrupts` covers the command itself).

- **Start-up**: until the command's own handlers are in place (the imports of the first
  ~50 ms), Ctrl-C or SIGTERM ends the process at once with ``128 + signal`` and one line
  — nothing was started, so nothing was written — never an import traceback.
- **Teardown**: once the command has returned (its files written and closed) without a
  stop signal, a stop signal during the interpreter's exit (``atexit`` callbacks such as
  tqdm's monitor, thread joins) ends the process at once with ``128 + signal``: never a
  traceback from a callback, never exit status 0 after a stop signal. (After a stop
  signal *during* the command, :mod:`~heritage_eval.cli.interrupts` keeps its own
  handlers until the process ends.)

``main()`` called in-process (tests, notebooks) is unchanged: only the script installs
these handlers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType

#: The signals that mean "stop".
_STOP = (signal.SIGINT, signal.SIGTERM)


def _before_start(signum: int, frame: FrameType | None) -> None:
    with contextlib.suppress(OSError):
        os.write(2, b"\ninterrupted before the command started: nothing was written\n")
    os._exit(128 + signum)


def _after_end(signum: int, frame: FrameType | None) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(128 + signum)


def entry() -> int:
    """Run the command line (``sys.argv``) and return its exit status (module
    docstring)."""
    for sig in _STOP:
        signal.signal(sig, _before_start)
    # what main imports before its own handlers are installed, imported here (covered)
    import heritage_eval.cli.interrupts
    import heritage_eval.core.redact_streams  # noqa: F401
    from heritage_eval.cli.main import main

    signal.signal(signal.SIGINT, signal.default_int_handler)  # asyncio's Ctrl-C needs it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    code = main()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # no stop signal
        for sig in _STOP:
            signal.signal(sig, _after_end)
    return code
