"""Benchmark: work that scales with the data at 1x and 10x the real sample — memory flat,
time linear (issue 11, goal 5).

Items, each run at both sizes in its own child process (peak RSS per size: the child's
own, ``_child.run_measured``; time measured inside the child around the work, after its
imports; an item that takes under 3 s at 1x is repeated, up to 5 runs, as often at
10x, and timed by its fastest run):

- ``muse-generate``: ``generate_benchmark`` with all 12 tasks (jigsaw included) on the
  synthetic export + 1920x1080 JPEGs of ``bench_muse_generate.py``;
- ``hcsu-kway``: load an HCSU release (``load_hcsu``) and build every K-way
  discrimination item as ``run hcsu-discrimination`` does (``plan_discrimination``,
  K = 4, distractor pool ``all`` — the largest K the real sample's four classes allow —
  then each item's conversation and record);
- ``summary-<benchmark>`` (ancient-bench, hcsu, muse): re-score a finished synthetic run
  folder from its response cache (``heritage-eval run … --out`` again, in-process): the
  run's records are scored again and ``samples.jsonl``, ``summary.json``, ``summary.md``
  and ``tables/`` rebuilt. The finished runs are made first against a loopback
  OpenAI-compatible server (not measured).

"Real sample size" (1x) is counted in ``../shared/realdata`` (README there): MUSE 7
annotated artworks, HCSU 109 character images in 4 classes (synthetic classes keep its
27 images per class; 10x = 10x the classes), Ancient-Bench 34 samples; these numbers are
used when ../shared is absent. The MUSE summary item answers the questions generated for
the ``muse-generate`` item (7 and 70 images).

Goals: time 10x / time 1x <= 12 (linear: 10x the data, some slack for noise) and peak
RSS 10x / 1x < 1.5 (flat). Each line says ``met`` / ``NOT met``. Also printed: the memory
added by the work (peak RSS during it, ``VmHWM`` reset first, minus the RSS before it;
modules the work imports count) and its growth per extra question / item / record.

Usage: python bench/bench_scale_data.py [--scale 1] [--items ITEM ...] [--workdir DIR]
(``--scale S``: sizes S x and 10 S x the real sample).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REALDATA = HERE.parents[2] / "shared" / "realdata"
TIME_GOAL = 12.0  # time ratio at 10x the data (linear, with slack for a noisy machine)
RSS_GOAL = 1.5  # peak RSS ratio at 10x the data (flat)
#: a short item is run again (same process) until this many seconds have passed, at
#: most MAX_REPEATS times; its time is the fastest run (the machine is shared and noisy)
REPEAT_UNTIL_S, MAX_REPEATS = 3.0, 5
ITEMS = ("muse-generate", "hcsu-kway", "summary-ancient-bench", "summary-hcsu",
         "summary-muse")
HCSU_ANSWERS = ["A", "B", "C", "D", "The answer is B.", "none"]
MUSE_ANSWERS = ["A", "B", "C", "D", "2", "3", "left", "A person holds a jug beside a lantern.",
                "She looks happy because someone offers her a fan."]
AB_ANSWERS = ["<res>天地玄黄</res>", "<res>天地玄黃宇宙洪荒</res>", "天地", "<res></res>"]


# ---------------------------------------------------------------- child side: the work
def _status_kib(field: str) -> int:
    """``VmRSS`` / ``VmHWM`` of this process from ``/proc/self/status`` (KiB); the
    ``getrusage`` peak when ``/proc`` is not there."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _reset_peak() -> None:
    """Reset this process's peak RSS (``VmHWM``) to its current RSS (Linux >= 4.0,
    ``/proc/PID/clear_refs`` value 5), so the work's own peak is seen past the imports'."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _work_muse_generate(root: Path) -> tuple[Callable[[], int], str]:
    from heritage_eval.benchmarks.muse.generate import generate_benchmark

    export = next(root.glob("export_*.json"))

    def work() -> int:
        report = generate_benchmark(export, root / "images", root / "out" / "questions.jsonl",
                                    seed=0, progress=False)
        return report.n_questions
    return work, "questions"


def _work_hcsu_kway(root: Path) -> tuple[Callable[[], int], str]:
    from heritage_eval.benchmarks.hcsu.discrimination import DiscriminationConfig
    from heritage_eval.benchmarks.hcsu.loader import load_hcsu
    from heritage_eval.benchmarks.hcsu.pipeline import plan_discrimination

    def work() -> int:
        dataset = load_hcsu(root)
        plan = plan_discrimination(dataset, DiscriminationConfig(k=4, pool="all"))
        n = 0
        for item in plan:
            if item.question is not None:
                item.question.conversation()
                item.question.record()
                n += 1
        return n
    return work, "items"


def _work_rerun(root: Path) -> tuple[Callable[[], int], str]:
    from heritage_eval.cli.main import main

    argv = json.loads((root / "rerun.json").read_text(encoding="utf-8"))

    def work() -> int:
        status = main(argv)
        if status not in (0, 1):
            raise SystemExit(f"re-run exited {status}: {argv}")
        with (root / "run" / "samples.jsonl").open("rb") as fh:
            return sum(1 for _ in fh)
    return work, "records"


WORK = {"muse-generate": _work_muse_generate, "hcsu-kway": _work_hcsu_kway,
        "summary-ancient-bench": _work_rerun, "summary-hcsu": _work_rerun,
        "summary-muse": _work_rerun}


def _again(times: list[float], repeats: int) -> bool:
    """Whether to run once more after runs taking ``times`` seconds."""
    if repeats:
        return len(times) < repeats
    return not times or (sum(times) < REPEAT_UNTIL_S and len(times) < MAX_REPEATS)


def child(item: str, root: Path, repeats: int) -> int:
    """Run ``item`` on ``root`` ``repeats`` times (0: again while under
    :data:`REPEAT_UNTIL_S`, at most :data:`MAX_REPEATS` times); print
    ``{"seconds" (fastest run), "repeats", "count", "unit", "base_kib", "work_peak_kib"}``
    (RSS before the work, after the imports; peak RSS during it)."""
    os.environ.setdefault("OPENAI_API_KEY", "x")
    work, unit = WORK[item](root)
    _reset_peak()
    base = _status_kib("VmRSS")
    times: list[float] = []
    while _again(times, repeats):
        start = time.perf_counter()
        count = work()
        times.append(time.perf_counter() - start)
    print(json.dumps({"seconds": min(times), "repeats": len(times), "count": count,
                      "unit": unit, "base_kib": base, "work_peak_kib": _status_kib("VmHWM")}))
    return 0


# ---------------------------------------------------------------- parent side
def measure(item: str, root: Path, repeats: int = 0) -> dict[str, Any]:
    """Run ``item`` on ``root`` in a child process (``repeats`` runs; 0: by time, see
    :func:`child`); its JSON plus ``peak_kib``, the child's own peak RSS
    (``_child.run_measured``: a plain ``fork`` from this process would pass on this
    process's high-water mark)."""
    from _child import run_measured  # bench/ is on sys.path (this script's folder)

    usage = run_measured([sys.executable, str(HERE), "--child", item, "--root", str(root),
                          "--repeats", str(repeats)],
                         env=dict(os.environ, OPENAI_API_KEY="x", HF_HUB_OFFLINE="1"))
    result: dict[str, Any] = json.loads(usage.stdout.strip().splitlines()[-1])
    result["peak_kib"] = int(usage.rss_mib * 1024)
    return result


def _cli(argv: list[str], log: Path) -> None:
    with log.open("wb") as fh:
        code = subprocess.run([sys.executable, "-c", "import sys; from heritage_eval.cli.main "
                               "import main; sys.exit(main())", *argv], stdout=fh, stderr=fh,
                              env=dict(os.environ, OPENAI_API_KEY="x"), check=False).returncode
    if code not in (0, 1):
        raise SystemExit(f"preparing failed (exit {code}): {' '.join(argv)}; see {log}")


def prepare(item: str, root: Path, size: int, server: Any, work: Path) -> None:
    """Build ``item``'s synthetic data of ``size`` (images / classes / samples) under
    ``root``; for a summary item, also the finished run to re-score."""
    import _scale_data as data

    root.mkdir(parents=True, exist_ok=True)
    if item == "muse-generate":
        data.make_dataset(size, root)
        return
    if item == "hcsu-kway":
        data.make_hcsu(root, size)
        return
    url = ["--model", "openai:bench", "--base-url", server.url, "--concurrency", "16"]
    if item == "summary-ancient-bench":
        if not (root / "release").exists():
            data.make_release(root / "release", size)
        argv = ["run", "ancient-bench", "--data", str(root / "release"), *url]
        server.answer_with(AB_ANSWERS)
    elif item == "summary-hcsu":
        data.make_hcsu(root / "release", size)
        argv = ["run", "hcsu-discrimination", "--data", str(root / "release"), "--k", "4",
                "--distractor-pool", "all", *url]
        server.answer_with(HCSU_ANSWERS)
    else:
        gen = work / f"muse-generate-{size}"
        if not (gen / "out" / "questions.jsonl").exists():
            prepare("muse-generate", gen, size, server, work)
            measure("muse-generate", gen)
        argv = ["run", "muse", "--questions", str(gen / "out" / "questions.jsonl"), *url]
        server.answer_with(MUSE_ANSWERS)
    argv += ["--out", str(root / "run")]
    if not (root / "run" / "summary.json").exists() or not (root / "rerun.json").exists():
        _cli([*argv, "--overwrite"], root / "first-run.log")
        # the re-run repeats the first run's command (its server address included)
        (root / "rerun.json").write_text(json.dumps(argv), encoding="utf-8")


def base_sizes(counts: dict[str, int]) -> dict[str, int]:
    """The 1x size of each item: MUSE images, HCSU classes, Ancient-Bench samples."""
    return {"muse-generate": counts["muse_images"], "hcsu-kway": counts["hcsu_classes"],
            "summary-ancient-bench": counts["ancient_samples"],
            "summary-hcsu": counts["hcsu_classes"], "summary-muse": counts["muse_images"]}


UNIT_OF_SIZE = {"muse-generate": "images", "hcsu-kway": "classes",
                "summary-ancient-bench": "samples", "summary-hcsu": "classes",
                "summary-muse": "images"}


def report(item: str, sizes: tuple[int, int], small: dict[str, Any],
           large: dict[str, Any]) -> list[str]:
    """The lines printed for one item."""
    t_ratio = large["seconds"] / max(small["seconds"], 1e-9)
    m_ratio = large["peak_kib"] / max(small["peak_kib"], 1)
    data_ratio = sizes[1] / sizes[0]
    added = [(r["work_peak_kib"] - r["base_kib"]) / 1024 for r in (small, large)]
    per_unit = (added[1] - added[0]) * 1024 / max(large["count"] - small["count"], 1)
    return [
        f"{item}: {sizes[0]} / {sizes[1]} {UNIT_OF_SIZE[item]} -> {small['count']} / "
        f"{large['count']} {small['unit']} (fastest of {small['repeats']} / "
        f"{large['repeats']} runs)",
        f"  time   {small['seconds']:7.2f} s / {large['seconds']:7.2f} s, ratio "
        f"{t_ratio:5.2f} for x{data_ratio:.0f} the data (goal linear, <= {TIME_GOAL:g}: "
        f"{'met' if t_ratio <= TIME_GOAL else 'NOT met'})",
        f"  memory {small['peak_kib'] / 1024:7.1f} MiB / {large['peak_kib'] / 1024:7.1f} MiB "
        f"peak RSS, ratio {m_ratio:5.2f} (goal flat, < {RSS_GOAL:g}: "
        f"{'met' if m_ratio < RSS_GOAL else 'NOT met'}); added by the work "
        f"{added[0]:.1f} / {added[1]:.1f} MiB, {per_unit:+.2f} KiB per extra "
        f"{small['unit'][:-1]}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1,
                    help="sizes are SCALE x and 10 SCALE x the real sample (default 1)")
    ap.add_argument("--items", nargs="+", choices=ITEMS, default=list(ITEMS),
                    help="items to measure (default: all)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/scale-bench"),
                    help="synthetic data and runs (reused when there; default "
                         "/tmp/scale-bench)")
    ap.add_argument("--child", choices=ITEMS, help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child, args.root, args.repeats)
    if args.scale < 1:
        ap.error("--scale must be at least 1")
    sys.path.insert(0, str(HERE.parent))
    import _scale_data as data

    counts = data.real_counts(REALDATA)
    source = "../shared/realdata" if REALDATA.is_dir() else "stated sizes (no ../shared)"
    print(f"real sample ({source}): {counts['muse_images']} MUSE images, "
          f"{counts['hcsu_images']} HCSU images in {counts['hcsu_classes']} classes, "
          f"{counts['ancient_samples']} Ancient-Bench samples; sizes x{args.scale} and "
          f"x{10 * args.scale}")
    server = data.AnswerServer()
    try:
        for item in args.items:
            base = base_sizes(counts)[item] * args.scale
            sizes = (base, 10 * base)
            results: list[dict[str, Any]] = []
            for size in sizes:
                root = args.workdir / f"{item}-{size}"
                prepare(item, root, size, server, args.workdir)
                # 10x runs as many times as 1x did: both timed alike (cold or warm)
                results.append(measure(item, root, results[0]["repeats"] if results else 0))
            for line in report(item, sizes, results[0], results[1]):
                print(line, flush=True)
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
