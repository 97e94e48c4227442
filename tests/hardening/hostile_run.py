"""Running one hostile call (:mod:`tests.hardening.hostile_argv`) and judging it.

:func:`run_case` runs ``python -m heritage_eval.cli.main`` in a fresh process inside the
call's sandbox (:func:`sandbox_env`: home, caches and temporary files there, offline)
with a time limit, and returns what went wrong: an exit status other than 0, 1 or 2, a
usage error without a message on stderr, a traceback, a hang, or a file written outside
the call's outputs and the cache folder (:func:`tree` snapshots before and after).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.hardening.hostile_argv import Call

TRACEBACK = "Traceback (most recent call last)"
#: seconds one call may take before it counts as a hang
CALL_TIMEOUT = 30.0


def sandbox_env(root: Path) -> dict[str, str]:
    """The environment of a call: home, caches and temporary files inside ``root``,
    offline, no endpoint or cluster taken from the caller's environment."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "RAY_", "HF_", "TRANSFORMERS_", "HERITAGE_"))}
    cache = root / "cache"
    env |= {"HOME": str(root / "home"), "XDG_CACHE_HOME": str(cache),
            "HERITAGE_EVAL_HF_CACHE": str(cache / "heritage-hf"),
            "HF_HOME": str(cache / "hf"), "MPLCONFIGDIR": str(cache / "mpl"),
            "TORCHINDUCTOR_CACHE_DIR": str(cache / "torchinductor"),
            "TRITON_CACHE_DIR": str(cache / "triton"),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TMPDIR": str(root / "tmp"),
            "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "100", "NO_COLOR": "1"}
    return env


def tree(root: Path) -> dict[str, tuple[str, int, int]]:
    """Relative path -> (kind, size, mtime_ns) of everything under ``root``, links not
    followed (a symlink loop is one entry)."""
    out: dict[str, tuple[str, int, int]] = {}

    def walk(d: Path) -> None:
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            st = e.stat(follow_symlinks=False)
            kind = ("link" if e.is_symlink() else "dir" if e.is_dir(follow_symlinks=False)
                    else "file")
            out[os.path.relpath(e.path, root)] = (kind, st.st_size if kind == "file" else 0,
                                                   st.st_mtime_ns if kind == "file" else 0)
            if kind == "dir":
                walk(Path(e.path))

    walk(root)
    return out


def _allowed(path: Path, kind: str, outputs: Sequence[Path]) -> bool:
    """``path`` lies in or under one of ``outputs``, is a companion of one (``NAME_…``
    beside the output ``NAME.EXT``: ``muse generate`` writes a question file's images
    to ``NAME_assets``, ``muse assemble`` its balance report to ``NAME_balance.md``), or
    is a folder made on the way to one (the missing parents of ``--out``)."""
    for o in outputs:
        if path == o or o in path.parents or (kind == "dir" and path in o.parents):
            return True
        top = next((p for p in (path, *path.parents) if p.parent == o.parent), None)
        if top is not None and top.name.startswith(f"{o.stem}_"):
            return True
    return False


@dataclass(frozen=True)
class Outcome:
    """What one call did: ``returncode`` (``None`` on a hang), ``stderr`` tail,
    ``seconds`` and ``problems`` (empty when the call behaved)."""

    call: Call
    returncode: int | None
    stderr: str
    seconds: float
    problems: tuple[str, ...]


def run_case(call: Call, timeout: float = CALL_TIMEOUT) -> Outcome:
    """Run ``call`` in a fresh process (stdin closed, its own process group, killed
    whole on timeout) and judge it: exit status 0, 1 or 2; a message on stderr when
    not 0; no traceback on stdout or stderr; nothing new or changed in the sandbox
    outside the outputs and the cache folder."""
    allowed = [*call.outputs, call.root / "cache"]
    before = tree(call.root)
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "heritage_eval.cli.main", *call.argv],
                            cwd=call.root / "cwd", env=sandbox_env(call.root),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out_b, err_b = proc.communicate(timeout=timeout)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        out_b, err_b = proc.communicate()
        rc = None
    seconds = time.monotonic() - start
    out, err = (b.decode("utf-8", "replace") for b in (out_b, err_b))
    problems: list[str] = []
    if rc is None:
        problems.append(f"hung (no exit within {timeout:g} s)")
    elif rc not in (0, 1, 2):
        problems.append(f"exit status {rc}")
    elif rc == 2 and not err.strip():
        problems.append("exit status 2 (usage error) without a message on stderr")
    elif rc == 1 and not (err.strip() or out.strip()):  # validate: findings on stdout
        problems.append("exit status 1 without a message")
    if TRACEBACK in out or TRACEBACK in err:
        problems.append("traceback")
    after = tree(call.root)
    changed = sorted(p for p, facts in after.items() if before.get(p) != facts
                     and not _allowed(call.root / p, facts[0], allowed))
    if changed:
        problems.append(f"wrote outside its outputs: {changed[:5]}")
    return Outcome(call, rc, err[-1500:], seconds, tuple(problems))


def iter_labels(outcomes: Sequence[Outcome]) -> Iterator[str]:
    """One line per misbehaving call: label, problems, argv, the stderr tail."""
    for o in outcomes:
        if o.problems:
            yield (f"{o.call.case.label()}: {'; '.join(o.problems)}\n  argv: "
                   f"{o.call.argv!r}\n  stderr: {o.stderr[-800:]!r}")
