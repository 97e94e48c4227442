"""Written files take the user's umask, and killed writes leave nothing behind (issue 22).

- every atomic writer (binary, text, line-by-line, figures, HF export folders,
  canonicalized images) gives ``0o666 & ~umask`` (folders ``0o777 & ~umask``), checked in
  fresh processes under umask 022 and 027 (``mkstemp`` alone gives 0600 / 0700);
- a later ``canonicalize`` removes the stale temporary files it owns inside its output
  folder — and nothing else: a grid of names x owners x ages;
- a ``canonicalize`` killed mid-run and run again leaves no temporary or empty file.
The rule: ``core/atomic_write.py`` (README "Run folder").
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from heritage_eval.core.atomic_write import (
    STALE_AFTER_S,
    host_tag,
    remove_stale_temps,
    temp_pattern,
)

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"

WRITERS = """
import json, os, sys
from pathlib import Path
out = Path(sys.argv[1])
from heritage_eval.core.atomic_write import atomic_write_bytes
from heritage_eval.core.store import AtomicLineWriter, RunFolder, atomic_write_text
atomic_write_bytes(out / "bin" / "a.bin", b"x")
atomic_write_bytes(out / "img.png", b"x", suffix=".png")
atomic_write_text(out / "t.txt", "x")
with AtomicLineWriter(out / "lines.jsonl") as w:
    w.write("{}")
RunFolder(out / "run").write_json("summary.json", {"a": 1})
from heritage_eval.curate.hf.tempdirs import make_temp_dir
make_temp_dir(out, "export")
import matplotlib
matplotlib.use("Agg")
from matplotlib.figure import Figure
from heritage_eval.report.paper_io import save_png
save_png(Figure(figsize=(1, 1)), out / "fig.png")
from heritage_eval.curate.stats.figures import save
save(Figure(figsize=(1, 1)), out / "stats.png")
from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree
canonicalize_tree(Path(sys.argv[2]), out / "canon", workers=1, progress=False)
"""


def _small_tree(root: Path, n: int = 3) -> Path:
    src = root / "src"
    for i, image in enumerate(sorted(DEMO.glob("bei/*/*.png"))[:n]):
        dest = src / "bei" / image.parent.name / f"{i}.png"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(image, dest)
    return src


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_every_writer_uses_the_umask(tmp_path: Path, umask: int) -> None:
    src = _small_tree(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    os.chmod(out, 0o755)
    subprocess.run([sys.executable, "-c", WRITERS, str(out), str(src)], check=True,
                   timeout=300, preexec_fn=lambda: os.umask(umask))
    files = [p for p in out.rglob("*") if p.is_file()]
    folders = [p for p in out.rglob("*") if p.is_dir()]
    assert len(files) >= 9 and any(p.suffix == ".png" for p in (out / "canon").rglob("*"))
    # expected by hand: 0o666 & ~0o022 = 0o644, & ~0o027 = 0o640, & ~0o002 = 0o664
    for p in files:
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~umask, (p, oct(p.stat().st_mode))
    made = [p for p in folders if p.name.startswith(".export.tmp-")]
    assert made and all(stat.S_IMODE(p.stat().st_mode) == 0o777 & ~umask for p in made)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_canonicalize_removes_only_its_own_stale_temps(tmp_path: Path) -> None:
    from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree

    src = _small_tree(tmp_path, 2)
    dst = tmp_path / "dst"
    sub = dst / "bei" / "x"
    sub.mkdir(parents=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    me, dead, live, other_host = host_tag(), _dead_pid(), sleeper.pid, "0badc0de"
    old = time.time() - STALE_AFTER_S - 60
    # (name, where, age, removed?)
    grid = [
        (f".a.png.tmp-{me}-{dead}-k2j4h5q1.png", sub, None, True),  # owner gone
        (f".b.png.tmp-{me}-{dead}-abc_def9.png", dst, None, True),
        (f".c.png.tmp-{me}-{live}-k2j4h5q1.png", sub, None, False),  # owner writing
        (f".d.png.tmp-{me}-{live}-k2j4h5q1.png", sub, old, True),  # ... for over an hour
        (f".e.png.tmp-{other_host}-{dead}-k2j4h5q1.png", sub, None, False),  # can't tell
        (f".f.png.tmp-{other_host}-{dead}-k2j4h5q1.png", sub, old, True),
        (".g.png.k2j4h5q1.png", sub, None, False),  # earlier form: by age only
        (".h.png.k2j4h5q1.png", sub, old, True),
        (".summary.json.k2j4h5q1.tmp", dst, old, True),  # core.store's text temp
        (".keep.png", sub, old, False),  # not a temp name
        (f"a.png.tmp-{me}-{dead}-k2j4h5q1.png", sub, old, False),  # not hidden
        (f".i.png.tmp-{me}-{dead}-k2j4h5q1.jpg", sub, old, False),  # other suffix
        (f".j.png.tmp-{me}-{dead}-K2J4H5Q1.png", sub, old, False),  # not mkstemp's letters
    ]
    outside = tmp_path / f".z.png.tmp-{me}-{dead}-k2j4h5q1.png"  # not in the output folder
    outside.write_bytes(b"")
    try:
        for name, where, age, _ in grid:
            p = where / name
            p.write_bytes(b"")
            if age is not None:
                os.utime(p, (age, age))
        canonicalize_tree(src, dst, workers=1, progress=False)
        for name, where, _, removed in grid:
            assert (where / name).exists() != removed, name
        assert outside.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_pattern_matches_what_the_writer_makes(tmp_path: Path) -> None:
    import tempfile

    from heritage_eval.core.atomic_write import temp_prefix

    for suffix in (".png", ".tmp", ".jpg"):
        fd, name = tempfile.mkstemp(prefix=temp_prefix("x y.png"), suffix=suffix,
                                    dir=tmp_path)
        os.close(fd)
        m = temp_pattern(suffix).match(Path(name).name)
        assert m and m.group("host") == host_tag() and int(m.group("pid")) == os.getpid()
        assert remove_stale_temps(tmp_path, suffix) == []  # this process's own: kept


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_a_killed_canonicalize_leaves_nothing_after_the_next_run(tmp_path: Path) -> None:
    image = next(DEMO.glob("bei/*/*.png"))
    src = tmp_path / "src" / "bei" / "a-b"
    src.mkdir(parents=True)
    for i in range(1500):
        shutil.copyfile(image, src / f"{i}.png")
    dst = tmp_path / "dst"
    cmd = [sys.executable, "-m", "heritage_eval.cli.main", "hcsu", "canonicalize",
           str(tmp_path / "src"), str(dst), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None \
            and sum(1 for _ in dst.rglob("*.png")) < 50:
        time.sleep(0.05)
    assert proc.poll() is None, "finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(1.5)  # the pool workers notice their parent is gone (exit_with_parent)
    # a killed writer's temp file, as a kill between create and rename leaves it
    dead = _dead_pid()
    (dst / "bei" / "a-b" / f".7.png.tmp-{host_tag()}-{dead}-k2j4h5q1.png").write_bytes(b"")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    pattern = temp_pattern(".png")
    left = [p for p in dst.rglob("*") if pattern.match(p.name) or p.name.startswith(".")]
    assert left == []
    empty = [p for p in dst.rglob("*.png") if p.stat().st_size == 0]
    assert empty == []
    assert sum(1 for _ in dst.rglob("*.png")) == 1500
    manifest = json.loads((dst / "canonicalize.json").read_text(encoding="utf-8"))
    assert manifest["errors"] == []
