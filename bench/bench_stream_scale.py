"""Whole ``heritage-eval run BENCH`` processes at 1k, 10k and 100k samples: is peak memory
flat and is time linear? (issue 23, item 1: the measurement).

For each benchmark — ``ancient-bench``, ``hcsu`` (``run hcsu-discrimination``),
``hcsu-description``, ``muse``, ``chronicles-ocr`` (the plug-in) — and each size, the
script writes a synthetic data set in the benchmark's real input format with real-size
images (``_stream_data.py``: a pool of a few hundred 1,000–3,000 px scans, 200–800 px
character crops for HCSU, hard-linked under each sample's own file name), runs the
command as a child process and prints its wall time, CPU time and peak RSS (the child's
own high-water mark, ``_child.run_measured``) — and, beside it, the peak as it stood
when the run was done and the command began printing (``_bench_model.py``,
``HE_BENCH_PEAK_FILE``), so that memory the printing adds shows apart: the goal is judged
on the whole process. Data making is not timed. Children run with
a bytecode cache, as an installed package (``bench_run_scale.child_env``).

Model (offline, no latency): ``baseline:random`` for HCSU discrimination; elsewhere
``bench:echo`` (``_bench_model.py``: an option when the turn offers some, else one of a
few fixed texts, so the text scorers — NED / F1, BERTScore, MUSE's embedder — run on
non-empty answers), registered by the child's entry point, because an OpenAI-compatible
backend would decode and re-encode every real-size image (tens of milliseconds or more
each) and measure that.

Restrictions (decisions, printed with the results):

- Chronicles-OCR runs ``--tasks spotting parsing classification``: ``recognition`` draws
  a red-box copy of the full image into the run folder per sample (decode + PNG encode
  of a 1-9 Mpx image, ~0.3-1.6 s of CPU and a few MB each), linear but hours and tens
  of GB at 100k; its per-sample cost is the draw's, independent of the run's streaming.
- HCSU: classes of 50 images, every image a target (``--per-class 50``), distractors from
  both domains; hcsu-description scores BERTScore with the bundled model, no judge.

Goals, one ``goal:`` line each per benchmark (``run_all.py`` collects them):

- peak RSS ratio largest / smallest size <= 1.5;
- time linear. Rule: the *marginal* CPU time (user + system, all threads) per sample
  over the last interval (``(cpu[k] - cpu[k-1]) / (n[k] - n[k-1])``) is at most 1.3 x
  that of the first interval. Marginal, because it leaves out the start-up (imports,
  models: 1-60 s, which would make a whole-run ratio look better than the run is); CPU,
  not wall, because up to eight jobs share this machine's two cores (load 10+): a wall
  time there measures the neighbours. The wall ratio is printed beside it, and each
  size's wall time above. With two sizes (quick mode) there is one interval: the rule is
  then ``cpu[1] / cpu[0] <= 1.3 x n[1] / n[0]`` (start-up included).

Usage: ``python bench/bench_stream_scale.py [--sizes 1000 10000 100000] [--only BENCH ...]
[--pool 200] [--work DIR]``; ``BENCH_QUICK=1`` runs sizes 500 and 5,000. ``--work`` keeps
the image pools (and MUSE's template) between runs; data sets and run folders of a size are
deleted once measured.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _stream_data as sd
from _child import Usage, run_measured
from bench_run_scale import child_env

HERE = Path(__file__).resolve().parent

RSS_GOAL = 1.5
TIME_GOAL = 1.3


class Bench(NamedTuple):
    """One benchmark: its ``run`` name, data maker ``(root, n, pools) -> Made`` and the
    model options."""

    command: str
    make: Callable[[Path, int, dict[str, object]], sd.Made]
    model: list[str]


def _pool(pools: dict[str, object], key: str) -> list[Path]:
    value = pools[key]
    assert isinstance(value, list)
    return value


BENCHES: dict[str, Bench] = {
    "ancient-bench": Bench("ancient-bench",
                           lambda r, n, p: sd.make_ancient(r, n, _pool(p, "scans")),
                           ["--model", "bench:echo"]),
    "hcsu": Bench("hcsu-discrimination",
                  lambda r, n, p: sd.make_hcsu_scaled(r, n, _pool(p, "crops")),
                  ["--model", "baseline:random"]),
    "hcsu-description": Bench("hcsu-description",
                              lambda r, n, p: sd.make_hcsu_scaled(r, n, _pool(p, "crops"),
                                                                  discrimination=False),
                              ["--model", "bench:echo", "--model-option",
                               "tasks=hcsu-description"]),
    "muse": Bench("muse", lambda r, n, p: sd.make_muse(r, n, _pool(p, "scans"),
                                                         Path(str(p["muse_template"]))),
                  ["--model", "bench:echo"]),
    "chronicles-ocr": Bench("chronicles-ocr",
                            lambda r, n, p: sd.make_chronicles(r, n, _pool(p, "scans")),
                            ["--model", "bench:echo", "--tasks", "spotting", "parsing",
                             "classification"]),
}
ALIASES = {"hcsu-discrimination": "hcsu"}
#: What each benchmark's runs leave out or fix (printed before its results).
NOTES = {
    "chronicles-ocr": "--tasks spotting parsing classification: recognition left out (it "
                      "draws a red-box PNG of the full image per sample into the run folder)",
    "hcsu": "classes of 50 images, all targets; distractors from both domains",
    "hcsu-description": "classes of 50 images, all targets; BERTScore (bundled model), "
                        "no judge",
    "muse": "all 12 tasks; open answers scored by the default embedder",
}


class Measured(NamedTuple):
    """One run: sample count, the child's usage, its peak RSS (MiB) when the run was
    done and printing began (0 when unknown: ``_bench_model.record_peak_before_report``),
    seconds to make the data."""

    samples: int
    usage: Usage
    run_peak_mib: float
    made_s: float


def run_one(bench: Bench, n: int, work: Path, pools: dict[str, object],
            env: dict[str, str]) -> Measured:
    """Make ``n`` samples and run the benchmark on them. The data and run folder are
    removed afterwards. Raises ``SystemExit`` (with the child's last stderr lines) when
    the run fails."""
    data, out, log = work / f"data-{n}", work / f"run-{n}", work / "child-stderr.txt"
    peak = work / "run-peak.txt"
    peak.unlink(missing_ok=True)
    for p in (data, out):
        shutil.rmtree(p, ignore_errors=True)
    start = time.perf_counter()
    made = bench.make(data, n, pools)
    made_s = time.perf_counter() - start
    cmd = ["sh", "-c", 'exec "$0" "$@" 2>"$HE_BENCH_LOG"', sys.executable,
           str(HERE / "_bench_model.py"), "run", bench.command, *made.args, *bench.model,
           "--out", str(out), "--concurrency", "64"]
    try:
        usage = run_measured(cmd, dict(env, HE_BENCH_LOG=str(log),
                                       HE_BENCH_PEAK_FILE=str(peak)))
    except SystemExit as exc:
        tail = log.read_text(errors="replace").strip().splitlines()[-8:]
        raise SystemExit(f"{exc}\n  " + "\n  ".join(tail)) from None
    finally:
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    run_peak = int(peak.read_text()) / 1024 if peak.exists() else 0.0
    return Measured(made.samples, usage, run_peak, made_s)


def goal_lines(name: str, sizes: list[int], runs: list[Measured]) -> list[str]:
    """The two ``goal:`` lines of one benchmark (module docstring: the rules)."""
    usages = [r.usage for r in runs]
    k = len(sizes) - 1
    at_end = (f"; at the run's end, before printing: {runs[0].run_peak_mib:.0f} -> "
              f"{runs[k].run_peak_mib:.0f} MiB = "
              f"{runs[k].run_peak_mib / runs[0].run_peak_mib:.2f}x"
              if runs[0].run_peak_mib and runs[k].run_peak_mib else "")
    label = f"{sizes[k] // 1000}k/{sizes[0] // 1000}k" if sizes[0] >= 1000 else \
        f"{sizes[k]}/{sizes[0]}"
    rss = usages[k].rss_mib / max(1e-9, usages[0].rss_mib)
    lines = [f"goal: {name} peak RSS {label} <= {RSS_GOAL}x: {rss:.2f}x "
             f"({usages[0].rss_mib:.0f} -> {usages[k].rss_mib:.0f} MiB{at_end}) "
             f"({'met' if rss <= RSS_GOAL else 'NOT met'})"]
    if k >= 2:
        def slope(i: int, j: int, attr: str) -> float:
            return ((getattr(usages[j], attr) - getattr(usages[i], attr))
                    / max(1, runs[j].samples - runs[i].samples))
        first, last = slope(0, 1, "cpu"), slope(k - 1, k, "cpu")
        # a first interval with no measurable cost (sizes too small): not judged met
        ratio = last / first if first > 0 else float("inf")
        wall = slope(k - 1, k, "wall") / max(1e-12, slope(0, 1, "wall"))
        lines.append(
            f"goal: {name} time linear {sizes[0]}->{sizes[k]} (marginal CPU per sample "
            f"{sizes[k - 1]}->{sizes[k]} <= {TIME_GOAL}x that of {sizes[0]}->{sizes[1]}): "
            f"{last * 1e3:.2f} vs {first * 1e3:.2f} ms/sample = {ratio:.2f}x (wall "
            f"{wall:.2f}x) ({'met' if ratio <= TIME_GOAL else 'NOT met'})")
    else:
        ratio = usages[1].cpu / max(1e-9, usages[0].cpu)
        allowed = TIME_GOAL * sizes[1] / sizes[0]
        lines.append(
            f"goal: {name} time linear {sizes[0]}->{sizes[1]} (CPU ratio <= {TIME_GOAL} x "
            f"{sizes[1] / sizes[0]:.0f} = {allowed:.0f}x): {ratio:.1f}x (wall "
            f"{usages[1].wall / max(1e-9, usages[0].wall):.1f}x) "
            f"({'met' if ratio <= allowed else 'NOT met'})")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    quick = os.environ.get("BENCH_QUICK") == "1"
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[500, 5000] if quick else [1000, 10000, 100000],
                    help="sample counts, ascending (default 1000 10000 100000; "
                         "BENCH_QUICK=1: 500 5000)")
    ap.add_argument("--only", nargs="+", default=[], metavar="BENCH",
                    help=f"only these benchmarks ({', '.join(BENCHES)})")
    ap.add_argument("--pool", type=int, default=200,
                    help="images in each image pool (default 200)")
    ap.add_argument("--work", type=Path, default=None,
                    help="folder for pools, data and runs (kept; default: a temporary one)")
    args = ap.parse_args()
    sizes = sorted(set(args.sizes))
    if len(sizes) < 2:
        ap.error("give at least two --sizes")
    names = [ALIASES.get(b, b) for b in args.only] or list(BENCHES)
    unknown = [b for b in names if b not in BENCHES]
    if unknown:
        ap.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    tmp = None if args.work else tempfile.TemporaryDirectory()
    work = args.work or Path(tmp.name)  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    try:
        start = time.perf_counter()
        pools: dict[str, object] = {
            "scans": sd.image_pool(work / "pool-scans", args.pool),
            "crops": sd.image_pool(work / "pool-crops", args.pool, sd.CROP_PX, crops=True)}
        if "muse" in names:
            pools["muse_template"] = sd.muse_template(work / "muse-template")
        mib = sum(p.stat().st_size for k in ("scans", "crops") for p in _pool(pools, k)) / 2**20
        print(f"image pools: 2 x {args.pool} images, {mib:.0f} MiB, ready in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        env = child_env(work / "pycache")
        for p in (work / "warmup", work / "warmup-run"):
            shutil.rmtree(p, ignore_errors=True)
        sd.make_ancient(work / "warmup", 20, _pool(pools, "scans"))  # fills the pyc cache
        run_measured([sys.executable, str(HERE / "_bench_model.py"), "run", "ancient-bench",
                      "--data", str(work / "warmup"), "--model", "bench:echo", "--out",
                      str(work / "warmup-run")], env)
        goals, failed = [], []
        for name in names:
            runs = []
            if name in NOTES:
                print(f"{name}: {NOTES[name]}", flush=True)
            for n in sizes:
                try:
                    run = run_one(BENCHES[name], n, work, pools, env)
                except SystemExit as exc:
                    print(f"{name:16} N={n:>7}: FAILED: {exc}", flush=True)
                    failed.append(name)
                    break
                runs.append(run)
                u = run.usage
                print(f"{name:16} N={n:>7}: {run.samples} samples, wall {u.wall:7.1f} s "
                      f"({u.wall / run.samples * 1e3:6.2f} ms/sample), CPU {u.cpu:7.1f} s, "
                      f"peak RSS {u.rss_mib:6.0f} MiB ({run.run_peak_mib:.0f} MiB when the "
                      f"run was done, before printing) (data made in {run.made_s:.0f} s)",
                      flush=True)
            if len(runs) == len(sizes):
                goals += goal_lines(name, sizes, runs)
            else:
                goals.append(f"goal: {name} peak RSS and time linear: run failed (NOT met)")
        print()
        for line in goals:
            print(line)
        print(f"total {time.perf_counter() - start:.0f} s")
        return 1 if failed else 0
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
