"""HCSU canonicalization throughput: images/s on one core vs all cores, and peak memory.

Input: the real character images of ``../shared/realdata/hcsu`` (109 RGB PNGs, 53x62 to
256x256 px, Bei and Tie), copied ``--repeat`` times into a temporary tree (or any tree in
the release layout with ``--src``). The same tree is canonicalized (§3.3 pipeline, 256 x 256
PNG output) twice into fresh folders: with 1 worker and with ``--workers`` (default: all
cores). Prints images/s of each, the speed-up ratio, the time the 39,307-image release
would take at the faster rate, and the peak resident memory of the main process and of
the largest worker (``getrusage``; KiB on Linux). Usage::

    python bench/bench_canonicalize.py [--repeat 8] [--workers N] [--src DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree, list_images

REAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "realdata" / "hcsu"
RELEASE_IMAGES = 39_307


def make_tree(src: Path, dst: Path, repeat: int) -> int:
    """Copy every image of ``src`` ``repeat`` times under ``dst`` (same folders)."""
    n = 0
    for rel in list_images(src):
        for i in range(repeat):
            out = dst / rel.parent / f"{rel.stem}__{i}{rel.suffix}"
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, out)
            n += 1
    return n


def timed(src: Path, dst: Path, workers: int) -> float:
    start = time.perf_counter()
    report = canonicalize_tree(src, dst, workers=workers, progress=False)
    elapsed = time.perf_counter() - start
    if report.errors:
        raise SystemExit(f"errors: {report.errors[:3]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--src", type=Path, default=REAL, help="image tree (default: real sample)")
    ap.add_argument("--repeat", type=int, default=8, help="copies of each image (default: 8)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes of the parallel run (default: all cores)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hcsu-bench-") as tmp:
        tree = Path(tmp) / "src"
        n = make_tree(args.src, tree, args.repeat)
        one = timed(tree, Path(tmp) / "one", 1)
        many = timed(tree, Path(tmp) / "many", args.workers)
    self_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    best = max(n / one, n / many)
    print(f"images: {n} ({args.repeat} copies of {n // args.repeat})")
    print(f"1 worker : {one:7.2f} s  {n / one:8.1f} images/s")
    print(f"{args.workers} workers: {many:7.2f} s  {n / many:8.1f} images/s  "
          f"(speed-up {one / many:.2f}x, ideal {args.workers}x)")
    print(f"release of {RELEASE_IMAGES:,} images at {best:.1f} images/s: "
          f"{RELEASE_IMAGES / best / 60:.1f} min")
    print(f"peak RSS: main process {self_kib / 1024:.0f} MiB, largest worker "
          f"{child_kib / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
