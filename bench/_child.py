"""Measure one child process: CPU seconds and peak resident memory, uncontaminated.

Linux keeps a process's peak RSS across ``fork`` + ``exec`` (the child starts with the
parent's high-water mark), so ``os.wait4`` on a child of a benchmark that holds a large
data set reports the *benchmark's* memory, not the child's. Here the command is started
by a small launcher (a fresh interpreter, ~10 MiB) that forks, execs it and reports the
child's ``wait4`` usage: the peak is then the child's own (or the launcher's, whichever is
larger).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import NamedTuple

_LAUNCHER = r"""
import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("\n" + json.dumps({"rc": os.waitstatus_to_exitcode(status),
    "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss,
    "wall": time.perf_counter() - start}) + "\n")
"""


class Usage(NamedTuple):
    """What one child used: CPU seconds (user + system), peak RSS (MiB), wall seconds
    (from its fork to its exit, the launcher's own start-up not included), its stdout."""

    cpu: float
    rss_mib: float
    wall: float
    stdout: str


def run_measured(cmd: list[str], env: dict[str, str] | None = None) -> Usage:
    """Run ``cmd`` through the launcher; its stderr is dropped. ``env`` replaces the
    environment (default: this one, with ``HF_HUB_OFFLINE=1``). Raises ``SystemExit``
    naming the command if it fails."""
    full_env = env if env is not None else dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", _LAUNCHER, *cmd], capture_output=True,
                          env=full_env, check=False)
    last = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
    try:
        facts = json.loads(last[0])
    except (IndexError, ValueError):
        raise SystemExit(f"launcher failed for: {' '.join(cmd)}") from None
    if facts["rc"] != 0:
        raise SystemExit(f"command failed ({facts['rc']}): {' '.join(cmd)}")
    return Usage(float(facts["cpu"]), facts["maxrss_kib"] / 1024, float(facts["wall"]),
                 proc.stdout.decode())


def measure(cmd: list[str]) -> tuple[float, float, str]:
    """``(CPU seconds, peak RSS MiB, stdout)`` of ``cmd`` (see :func:`run_measured`)."""
    u = run_measured(cmd)
    return u.cpu, u.rss_mib, u.stdout
