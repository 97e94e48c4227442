"""``stats ancient-bench`` on a release-sized collection: wall time and peak memory.

Builds a synthetic Ancient-Bench collection of the full release's size in a temporary
folder: the 9 media with the paper's image counts (2,700 images, ``RELEASE_SIZES``),
``conv.jsonl`` lines with 1–1,666-character transcriptions, and images of 40 distinct
sizes from 41 x 80 px up to ``--large`` copies of a 5,000 x 15,000 px scan (75 Mpx, the
release's largest is 97 Mpx). Images are 1-bit PNGs of one colour, written once per size
and copied, so setting up takes a few seconds; their headers are what the command reads.
Then runs ``heritage-eval stats ancient-bench`` in-process (tables, figures, stats.json)
and prints the wall time against the goal (under 30 s), the per-image cost, and the
peak resident memory of that process (``getrusage``; the collection is built in a child
process, so the figure is the command's own). Usage::

    python bench/bench_curate_stats.py [--large 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path

from PIL import Image

from heritage_eval.benchmarks.ancient_bench.categories import RELEASE_SIZES
from heritage_eval.cli.main import main as cli_main

GOAL_S = 30.0
LARGE = (5000, 15000)
#: Characters used for synthetic transcriptions (any Han characters do).
POOL = "天地玄黃宇宙洪荒日月盈昃辰宿列張寒來暑往秋收冬藏閏餘成歲律呂調陽雲騰致雨露結為霜"


def _template(folder: Path, size: tuple[int, int]) -> Path:
    path = folder / f"tpl_{size[0]}x{size[1]}.png"
    Image.new("1", size, 1).save(path, optimize=False)
    return path


def make_release(root: Path, n_large: int, seed: int = 0) -> int:
    """Write the synthetic collection under ``root``; returns the number of images."""
    rng = random.Random(seed)
    tpl_dir = root.parent / "templates"
    tpl_dir.mkdir(parents=True, exist_ok=True)
    sizes = [(41 + 97 * k, 80 + 151 * k) for k in range(40)]  # 41x80 .. 3824x5969
    templates = [_template(tpl_dir, s) for s in sizes]
    large = _template(tpl_dir, LARGE)
    n = 0
    for medium, count in RELEASE_SIZES.items():
        folder = root / medium / "images"
        folder.mkdir(parents=True)
        lines = []
        for i in range(count):
            name = f"{medium}_{i:06d}.png"
            src = large if n < n_large and i == 0 else templates[rng.randrange(len(templates))]
            shutil.copyfile(src, folder / name)
            text = "".join(rng.choice(POOL) for _ in range(rng.randint(1, 1666)))
            lines.append(json.dumps({"image": name, "human_gt": text}, ensure_ascii=False))
            n += 1
        (root / medium / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--large", type=int, default=5,
                    help="images of 5,000 x 15,000 px (one per medium, first media; "
                         "default: 5)")
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="build the collection in DIR and keep it (default: a temporary "
                         "folder, removed)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="stats-bench-") as tmp:
        base = args.keep or Path(tmp)
        root, out = base / "release", base / "stats"
        t0 = time.perf_counter()
        # built in a child process, so that the peak memory below is the command's own
        with multiprocessing.get_context("fork").Pool(1) as pool:
            n = pool.apply(make_release, (root, args.large))
        setup = time.perf_counter() - t0
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            rc = cli_main(["stats", "ancient-bench", "--data", str(root), "--out", str(out)])
        elapsed = time.perf_counter() - start
        doc = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    largest = doc["overall"]["largest"]
    print(f"collection: {n} images in {len(RELEASE_SIZES)} media, {args.large} of "
          f"{LARGE[0]:,} x {LARGE[1]:,} px (set up in {setup:.1f} s)")
    print(f"stats ancient-bench: exit {rc}, {doc['counts']['images']} images counted, "
          f"largest {largest}, {doc['n_problems']} bad items")
    print(f"wall time: {elapsed:6.2f} s  ({elapsed / n * 1000:.2f} ms/image)")
    print(f"peak RSS of the process running the command: {peak_kib / 1024:.0f} MiB")
    print(f"ratio to goal: {elapsed / GOAL_S:.1%} of {GOAL_S:.0f} s")
    print(f"goal wall time < {GOAL_S:.0f} s for {n} images: "
          f"{'MET' if elapsed < GOAL_S and rc == 0 else 'NOT MET'}")


if __name__ == "__main__":
    main()
