"""``hcsu canonicalize --workers 2`` killed with SIGKILL leaves no pool worker behind.

A worker of a ``ProcessPoolExecutor`` waits on its task queue for ever once the parent is
gone; each worker watches its parent (``canonical_batch.exit_with_parent``) and ends
itself within about a second."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"


def _children(pid: int) -> set[int]:
    """PIDs whose parent is ``pid`` (from /proc)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_killed_canonicalize_leaves_no_worker(tmp_path: Path) -> None:
    # 3,000 copies of one demo glyph: ~10 s of work for two workers, so the pool is busy
    # when the parent is killed
    image = next(DEMO.glob("bei/*/*.png"))
    src = tmp_path / "src" / "bei" / "a-b"
    src.mkdir(parents=True)
    for i in range(3000):
        shutil.copyfile(image, src / f"{i}.png")
    proc = subprocess.Popen([sys.executable, "-m", "heritage_eval.cli.main", "hcsu",
                             "canonicalize", str(tmp_path / "src"), str(tmp_path / "dst"),
                             "--workers", "2"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        if len(workers) >= 2 and any((tmp_path / "dst").rglob("*.png")):
            break  # the workers are at work
        time.sleep(0.1)
    assert proc.poll() is None, "canonicalize finished before it could be killed"
    assert len(workers) >= 2, f"no pool workers seen: {workers}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.2)
    left = [w for w in workers if _alive(w)]
    for w in left:  # do not leave them running if the test fails
        os.kill(w, signal.SIGKILL)
    assert not left, f"workers still running 10 s after the parent was killed: {left}"


def test_the_watch_thread_ends_a_process_whose_parent_is_gone() -> None:
    # in a child given a parent pid that is not its parent, the watch ends it at once
    # with status 1 (a real parent's pid keeps it running: the test above)
    code = ("import time; from heritage_eval.benchmarks.hcsu.canonical_batch import "
            "exit_with_parent as w; w(1, 0.05); time.sleep(30)")
    start = time.monotonic()
    assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 1
    assert time.monotonic() - start < 20
