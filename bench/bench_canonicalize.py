"""HCSU canonicalization (issue 11, goal 4): ours vs a plain OpenCV reference, per core and
with workers, peak memory per worker, and proof that the outputs did not change.

Input: the real character images of ``../shared/realdata/hcsu`` (109 RGB PNGs, 53x62 to
256x256 px, Bei and Tie), copied ``--repeat`` times into a temporary tree (or any tree in
the release layout with ``--src``). Printed, each line with its goal and ``met`` /
``NOT met``:

1. **per core**: ``canonicalize_tree`` with 1 worker (in this process) against the
   reference — a plain OpenCV version of the same steps (``cv2.imread``, inversion, Otsu,
   corner check, connected components, mask, pad, Lanczos, ``cv2.imwrite``; no letterbox
   trim, no blank-crop checks, no atomic writes) — run alternately ``--rounds`` times
   (A B A B ...: the machine is shared), medians. The goal (>= 1.5x) is judged on CPU
   seconds per image (``time.process_time``: the work one core does, which other
   people's processes on the machine do not inflate); the wall-clock ratio is printed
   beside it.
   Also printed: the **ceiling**, the CPU time of decoding, resampling, encoding and
   writing alone (the same libraries and settings, hence the same bytes): what no
   implementation of these steps can go below.
2. **workers**: the speed-up of ``--workers`` processes over 1 (wall clock) on a tree
   of ``--parallel-repeat`` copies (a release has 39,307 images). The goal,
   near-linear, is printed as ``speed-up >= 0.8 x min(workers, idle cores)``, where
   idle cores = CPUs minus the 1-minute load average before the run (at least 1): on a
   shared machine the cores other people use are not ours to scale on. The CPU seconds
   per image inside the workers against the 1-worker run show whether a worker does
   more work per image (a cost of parallelism) or not.
3. **memory**: peak resident set of this process (which ran the 1-worker case:
   ``getrusage``) and of the largest worker (``VmHWM``, polled), goal <= 150 MiB each.
4. **whole process** (issue 23): ``heritage-eval hcsu canonicalize SRC DST --workers 1``
   against the reference as a script of its own (the same steps, :func:`reference_one`'s
   source, on ``--process-repeat`` copies: 981 crops by default), each a fresh process
   with its start-up (imports, argument parsing, listing, the manifest), alternated
   ``--rounds`` times; CPU seconds (user + system of the child, ``_child.measure``),
   medians. Goal: ours >= 1.0x the reference. Also printed: the start-up floor of each
   (the same command on an empty tree).
5. **outputs unchanged**: (a) on the real sample, a SHA-256 over every output's decoded
   pixels equals the digest recorded with the code before the issue-11 optimisation;
   (b) every Tie output made by the reference's steps (nothing cut by the letterbox
   trim, no corner flip) is pixel-identical to the reference's output (Bei differs by
   design: the reference keeps the inverted colour, the pipeline the inverted grey).

Usage::

    python bench/bench_canonicalize.py [--repeat 8] [--rounds 3] [--parallel-repeat 24]
                                       [--process-repeat 9] [--workers N] [--src DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import os
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from heritage_eval.benchmarks.hcsu.canonical import canonicalize_bgr
from heritage_eval.benchmarks.hcsu.canonical_batch import (
    canonicalize_tree,
    list_images,
)
from heritage_eval.benchmarks.hcsu.canonical_steps import trim_letterbox
from heritage_eval.benchmarks.hcsu.png_io import encode_png_bgr, read_bgr, write_png_atomic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _child import measure

REAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "realdata" / "hcsu"
RELEASE_IMAGES = 39_307
#: :func:`pixel_digest` of the real sample's outputs (default settings), computed with the
#: code before the issue-23 start-up and letterbox-speed changes (pipeline version 3; the
#: issue-11 digest, 8e0e2567…, predates the letterbox rule fixed by
#: tests/hcsu/test_canonical_kinds.py, which changed some outputs on purpose).
REAL_DIGEST = "3d0fd7619dffda38c0b4f88af5df50d3e9786d18eda4b5158e420ef9181bd5dc"
GOAL_RATIO, GOAL_MIB, LINEAR = 1.5, 150, 0.8


def imread(path: Path, flags: int = cv2.IMREAD_COLOR) -> np.ndarray:
    """``cv2.imread`` that fails loudly (naming the file) instead of returning None."""
    image = cv2.imread(str(path), flags)
    if image is None:
        raise SystemExit(f"cannot read {path}")
    return np.asarray(image)


def make_tree(src: Path, dst: Path, repeat: int, limit: int | None = None) -> int:
    """Copy every image of ``src`` (the first ``limit``) ``repeat`` times under ``dst``
    (same folders)."""
    n = 0
    for rel in list_images(src)[:limit]:
        for i in range(repeat):
            out = dst / rel.parent / f"{rel.stem}__{i}{rel.suffix}"
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, out)
            n += 1
    return n


def pixel_digest(root: Path, copy: str = "__0") -> str:
    """SHA-256 over (path without the ``copy`` suffix, shape, decoded pixels) of the
    outputs of copy ``copy`` under ``root``, in path order."""
    h = hashlib.sha256()
    for p in sorted(root.glob(f"[bt]*/*/*{copy}.png")):
        px = imread(p, cv2.IMREAD_UNCHANGED)
        rel = p.relative_to(root).as_posix().replace(f"{copy}.png", ".png")
        h.update(rel.encode() + b"\0" + str(px.shape).encode() + px.tobytes())
    return h.hexdigest()


def timed(src: Path, dst: Path, workers: int) -> tuple[float, float]:
    """``(wall s, CPU s of this process)`` of one ``canonicalize_tree`` run."""
    wall, cpu = time.perf_counter(), time.process_time()
    report = canonicalize_tree(src, dst, workers=workers, progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if report.errors:
        raise SystemExit(f"errors: {report.errors[:3]}")
    return wall, cpu


def reference_one(src: Path, dst: Path, is_bei: bool, size: int = 256) -> None:
    """The plain OpenCV pipeline of one image (the reference of issue 11, goal 4)."""
    bgr = imread(src)
    work = 255 - bgr if is_bei else bgr
    gray = cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)
    thr, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    ink = gray <= thr
    h, w = gray.shape
    c = max(1, round(0.05 * min(h, w)))
    corners = np.mean([gray[:c, :c].mean(), gray[:c, -c:].mean(), gray[-c:, :c].mean(),
                       gray[-c:, -c:].mean()])
    if corners <= thr:
        ink = ~ink
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    keep = np.zeros(n, dtype=bool)
    keep[1:] = stats[1:, cv2.CC_STAT_AREA] >= max(1, int(np.ceil(0.0005 * h * w)))
    mask = keep[labels]
    out = np.full_like(bgr, 255)
    out[mask] = work[mask] if is_bei else bgr[mask]
    side = max(h, w)
    canvas = np.full((side, side, 3), 255, dtype=np.uint8)
    canvas[(side - h) // 2:(side - h) // 2 + h, (side - w) // 2:(side - w) // 2 + w] = out
    cv2.imwrite(str(dst), cv2.resize(canvas, (size, size), interpolation=cv2.INTER_LANCZOS4))


def timed_reference(src: Path, dst: Path) -> tuple[float, float]:
    """``(wall s, CPU s)`` of the reference over the tree ``src``."""
    cv2.setNumThreads(1)
    rels = list_images(src)
    wall, cpu = time.perf_counter(), time.process_time()
    for rel in rels:
        out = dst / rel.with_suffix(".png")
        out.parent.mkdir(parents=True, exist_ok=True)
        reference_one(src / rel, out, rel.parts[0].lower() == "bei")
    return time.perf_counter() - wall, time.process_time() - cpu


def timed_floor(src: Path, dst: Path) -> float:
    """CPU s of the part no implementation writing the same bytes can avoid: decode,
    the Lanczos resampling of the padded square (one channel where the output is an
    inverted grey level, as in the pipeline, else three), PNG encoding and the write.
    The pipeline runs untimed before each image, for its output to encode."""
    cv2.setNumThreads(1)
    total = 0.0
    for rel in list_images(src):
        out = dst / rel.with_suffix(".png")
        out.parent.mkdir(parents=True, exist_ok=True)
        image = canonicalize_bgr(read_bgr(str(src / rel)), rel.parts[0].lower() == "bei").image
        grey = bool(np.array_equal(image[:, :, 0], image[:, :, 2]))
        cpu = time.process_time()
        side = max(read_bgr(str(src / rel)).shape[:2])
        square = np.full((side, side) if grey else (side, side, 3), 255, dtype=np.uint8)
        cv2.resize(square, (256, 256), interpolation=cv2.INTER_LANCZOS4)
        write_png_atomic(encode_png_bgr(image), out)
        total += time.process_time() - cpu
    return total


class WorkerPeaks(threading.Thread):
    """Polls the peak resident set (``VmHWM`` in ``/proc/PID/status``, KiB) of this
    process's multiprocessing workers every 20 ms; ``getrusage`` cannot tell it, as a
    child's ``ru_maxrss`` includes the parent's resident set at fork time."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_kib, self.seen, self.done = 0, set[int](), threading.Event()

    def run(self) -> None:
        me = str(os.getpid())
        while not self.done.wait(0.02):
            for stat in Path("/proc").glob("[0-9]*/stat"):
                try:
                    if stat.read_text().rsplit(")", 1)[1].split()[1] != me:
                        continue
                    if b"spawn_main" not in (stat.parent / "cmdline").read_bytes():
                        continue
                    status = (stat.parent / "status").read_text()
                except (OSError, IndexError):
                    continue  # the process ended meanwhile
                hwm = [int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM")]
                self.peak_kib = max([self.peak_kib, *hwm])
                self.seen.add(int(stat.parent.name))


def tie_agreement(tree: Path, ours: Path, ref: Path) -> tuple[int, int, int, int]:
    """``(Tie images on which the pipeline takes the reference's steps, of them outputs
    identical to the reference's, other Tie images, of them identical)``. The same
    steps: nothing cut by the letterbox trim, no corner flip, not already canonical, not
    blank."""
    same_steps = same_a = other = same_b = 0
    for rel in list_images(tree):
        if rel.parts[0] != "tie":
            continue
        same = int(np.array_equal(imread(ours / rel.with_suffix(".png"), cv2.IMREAD_UNCHANGED),
                                  imread(ref / rel.with_suffix(".png"), cv2.IMREAD_UNCHANGED)))
        bgr = imread(tree / rel)
        res = canonicalize_bgr(bgr, False)
        if res.ok and not (res.corner_flip or res.already_canonical
                           or any(trim_letterbox(bgr)[1])):
            same_steps, same_a = same_steps + 1, same_a + same
        else:
            other, same_b = other + 1, same_b + same
    return same_steps, same_a, other, same_b


#: The reference as a script of its own: :func:`imread` and :func:`reference_one` (their
#: source, so the steps are the ones timed in this process), over a tree in
#: :func:`list_images` order (walk sorted, ``_stages`` skipped), one core.
_SCRIPT_HEAD = """import os, sys
from pathlib import Path
import cv2
import numpy as np
SUFFIXES = {suffixes!r}
"""
_SCRIPT_MAIN = """
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
cv2.setNumThreads(1)
for dirpath, dirnames, filenames in os.walk(src):
    dirnames[:] = sorted(d for d in dirnames if d != "_stages")
    for name in sorted(filenames):
        rel = (Path(dirpath) / name).relative_to(src)
        if rel.suffix.lower() in SUFFIXES:
            out = dst / rel.with_suffix(".png")
            out.parent.mkdir(parents=True, exist_ok=True)
            reference_one(src / rel, out, rel.parts[0].lower() == "bei")
"""


def reference_script() -> str:
    """The source of the whole-process reference (:data:`_SCRIPT_HEAD`)."""
    from heritage_eval.benchmarks.hcsu.canonical_batch import IMAGE_SUFFIXES

    return (_SCRIPT_HEAD.format(suffixes=sorted(IMAGE_SUFFIXES)) + inspect.getsource(imread)
            + "\n\n" + inspect.getsource(reference_one) + _SCRIPT_MAIN)


def whole_process(tree: Path, tmp: Path, rounds: int) -> dict[str, float]:
    """CPU seconds (medians of ``rounds`` alternations) of the reference script and of
    ``hcsu canonicalize --workers 1`` on ``tree``, each a fresh process into a fresh
    folder, and of each on an empty tree (the start-up floor)."""
    script = tmp / "reference.py"
    script.write_text(reference_script(), encoding="utf-8")
    empty = tmp / "empty"
    empty.mkdir()
    ours = [sys.executable, "-m", "heritage_eval.cli.main", "hcsu", "canonicalize"]
    runs: dict[str, list[float]] = {"ref": [], "ours": [], "ref0": [], "ours0": []}
    for i in range(rounds):  # A B A B ...
        runs["ref"].append(measure([sys.executable, str(script), str(tree),
                                    str(tmp / f"pref{i}")])[0])
        runs["ours"].append(measure([*ours, str(tree), str(tmp / f"pours{i}"),
                                     "--workers", "1"])[0])
        runs["ref0"].append(measure([sys.executable, str(script), str(empty),
                                     str(tmp / f"eref{i}")])[0])
        runs["ours0"].append(measure([*ours, str(empty), str(tmp / f"eours{i}"),
                                      "--workers", "1"])[0])
    same = pixel_digest(tmp / "pours0", "") == pixel_digest(tmp / "process-one", "")
    return {**{k: statistics.median(v) for k, v in runs.items()}, "same": float(same)}


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--src", type=Path, default=REAL, help="image tree (default: real sample)")
    ap.add_argument("--repeat", type=int, default=8, help="copies of each image (default: 8)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternated reference / 1-worker runs; medians (default: 3)")
    ap.add_argument("--parallel-repeat", type=int, default=24,
                    help="copies of each image for the 1-worker vs N-worker run, large "
                         "enough to amortise the workers' start-up (default: 24)")
    ap.add_argument("--process-repeat", type=int, default=9,
                    help="copies of each image for the whole-process comparison (default: "
                         "9, i.e. 981 crops of the real sample)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes of the parallel run (default: all cores)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hcsu-bench-") as tmp:
        tree = Path(tmp) / "src"
        n = make_tree(args.src, tree, args.repeat)
        make_tree(args.src, Path(tmp) / "warm", 1, limit=4)  # first calls: lazy imports
        timed_reference(Path(tmp) / "warm", Path(tmp) / "warm-ref")
        timed(Path(tmp) / "warm", Path(tmp) / "warm-ours", 1)
        refs, ones, floors = [], [], []
        for i in range(args.rounds):  # A B C A B C ...
            refs.append(timed_reference(tree, Path(tmp) / f"ref{i}"))
            ones.append(timed(tree, Path(tmp) / f"one{i}", 1))
            floors.append(timed_floor(tree, Path(tmp) / f"floor{i}"))
        floor = statistics.median(floors)
        big = Path(tmp) / "big"
        n_big = make_tree(args.src, big, args.parallel_repeat)
        one_big, _ = timed(big, Path(tmp) / "one_big", 1)
        load = os.getloadavg()[0]
        child_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        peaks = WorkerPeaks()
        peaks.start()
        many, _ = timed(big, Path(tmp) / "many", args.workers)
        peaks.done.set()
        peaks.join()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        many_cpu = (after.ru_utime + after.ru_stime) - (child_cpu.ru_utime + child_cpu.ru_stime)
        process_tree = Path(tmp) / "process"
        n_process = make_tree(args.src, process_tree, args.process_repeat)
        timed(process_tree, Path(tmp) / "process-one", 1)  # in-process outputs, to compare
        proc = whole_process(process_tree, Path(tmp), args.rounds)
        digest = pixel_digest(Path(tmp) / "one0") if args.src == REAL else None
        agree = tie_agreement(tree, Path(tmp) / "one0", Path(tmp) / "ref0")
    ref_wall, ref_cpu = (statistics.median(x) for x in zip(*refs, strict=True))
    one_wall, one_cpu = (statistics.median(x) for x in zip(*ones, strict=True))
    cpu_ratio, wall_ratio = ref_cpu / one_cpu, ref_wall / one_wall
    idle = max(1, round((os.cpu_count() or 1) - load))
    usable = min(args.workers, idle)
    speedup = one_big / many
    self_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_mib = peaks.peak_kib / 1024
    print(f"images: {n} ({args.repeat} copies of {n // args.repeat}); {args.rounds} rounds, "
          f"medians; {os.cpu_count()} CPUs, load average {load:.1f} before the parallel run")
    print(f"reference (plain OpenCV, 1 core): {ref_wall:6.2f} s wall, {ref_cpu / n * 1e3:.2f} "
          f"ms CPU/image ({n / ref_wall:.0f} images/s)")
    print(f"ours, 1 worker                  : {one_wall:6.2f} s wall, {one_cpu / n * 1e3:.2f} "
          f"ms CPU/image ({n / one_wall:.0f} images/s)")
    print(f"per core: {cpu_ratio:.2f}x the reference in CPU time ({wall_ratio:.2f}x in wall "
          f"time); goal >= {GOAL_RATIO}x: {verdict(cpu_ratio >= GOAL_RATIO)}")
    print(f"ceiling: decode + Lanczos + PNG encoding + write alone take {floor / n * 1e3:.2f} "
          f"ms CPU/image, so no pipeline writing these same bytes with these libraries "
          f"can exceed {ref_cpu / floor:.2f}x the reference")
    print(f"{args.workers} workers on {n_big} images: {many:6.2f} s wall ({n_big / many:.0f} "
          f"images/s) vs {one_big:.2f} s with 1: speed-up {speedup:.2f}x; "
          f"{many_cpu / n_big * 1e3:.2f} ms CPU/image in the workers, start-up included "
          f"(1 worker: {one_cpu / n * 1e3:.2f}); goal near-linear >= {LINEAR} x "
          f"min({args.workers} workers, {idle} idle cores) = {LINEAR * usable:.1f}x: "
          f"{verdict(speedup >= LINEAR * usable)}")
    print(f"peak RSS: this process (the 1-worker runs) {self_mib:.0f} MiB, largest of "
          f"{len(peaks.seen)} workers {child_mib:.0f} MiB; goal <= {GOAL_MIB} MiB per worker: "
          f"{verdict(max(self_mib, child_mib) <= GOAL_MIB and bool(peaks.seen))}")
    pr = proc["ref"] / proc["ours"]
    print(f"whole process, {n_process} crops, 1 worker: reference script {proc['ref']:.2f} s "
          f"CPU (start-up alone {proc['ref0']:.2f} s), heritage-eval hcsu canonicalize "
          f"{proc['ours']:.2f} s (start-up alone {proc['ours0']:.2f} s; outputs "
          f"{'equal to' if proc['same'] else 'DIFFERENT from'} the in-process run's)")
    print(f"goal: whole-process CPU {pr:.2f}x the plain OpenCV script's, start-up included "
          f"(goal >= 1.0x; per image without start-up "
          f"{(proc['ref'] - proc['ref0']) / (proc['ours'] - proc['ours0']):.2f}x) "
          f"({verdict(pr >= 1.0 and bool(proc['same']))})")
    if digest is not None:
        print(f"outputs unchanged: pixel digest of the {n // args.repeat} real outputs "
              f"{digest[:16]}… {'equals' if digest == REAL_DIGEST else 'DIFFERS from'} the "
              f"one recorded before the optimisation: {verdict(digest == REAL_DIGEST)}")
    same_steps, same_a, other, same_b = agree
    print(f"same steps, same pixels: {same_a} of the {same_steps} Tie outputs made by the "
          f"reference's steps (nothing trimmed or flipped) identical to the reference's "
          f"({same_b} of the {other} others); goal all: {verdict(same_a == same_steps > 0)}")
    best = max(n / one_wall, n_big / many)
    print(f"release of {RELEASE_IMAGES:,} images at {best:.0f} images/s: "
          f"{RELEASE_IMAGES / best / 60:.1f} min")


if __name__ == "__main__":
    main()
