"""Viewer benchmark: synthetic Ancient-Bench-like runs of 10,000 and 100,000 records
(and 1,000,000 with ``--million``; issue 23 item 2).

Per size, each line with its goal and a ratio against a reference measured in this run:

- build time of the site (goal < 60 s up to 100,000 records, and the same rate above:
  < 600 s at 1,000,000), in a child process: wall and CPU
  seconds (the CPU of its worker processes included; on a loaded machine the wall time
  says more about the neighbours than about the build); reference: a child that reads
  the same ``samples.jsonl`` and writes every record again with ``json.loads`` /
  ``json.dumps`` (the least any build has to do);
- peak RSS of that child (its high-water mark, ``bench/_child.py``; with worker
  processes, the largest of the build process and its workers): the goal is memory flat
  in the number of records, here: the peak at the largest size at most
  :data:`FLAT_RATIO` x the peak at the smallest; reference: the json child's peak;
- in headless Chromium (sizes up to ``--browser-max``): first render, i.e. the list
  drawn from the first index shard (goal < 2 s), against a bare page that only loads
  the same ``data/index.js`` manifest and first shard ``data/index-0000.js``; the time
  until every shard is loaded (no goal; filters cover the loaded samples until then);
  then, over every sample, each filter (medium, state, score range, text search, sort
  by score; median of 3) against one bare pass over the index's state column in the
  same page; the goal (< 1 s) is for the slowest single answer (the first sort by a
  score ranks the column's values, later ones reuse the ranks).

Every goal also gets one ``goal: … met`` / ``goal: … NOT met`` line at the end. The
records share 60 images (a run reuses few images many times), so thumbnails are made
once per image. ``BENCH_QUICK=1`` runs 5,000 / 20,000 records instead (and 100,000 with
``--million``).

Usage: ``python bench/bench_viewer.py [--million] [--sizes N ...] [--browser-max N]
[--keep DIR]``. Browser parts are skipped (with the reason) without Chromium.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _child import run_measured

CHARS = "天地玄黃宇宙洪荒日月盈昃辰宿列張寒來暑往秋收冬藏閏餘成歲律呂調陽雲騰致雨露結為霜"
MEDIA = ["Oracle", "Bronze", "Slip", "Silk", "Seal", "Stele", "Cliff", "Edition", "Calligraphy"]
PROMPT = ("The image shows writing on an ancient Chinese artifact. Transcribe the writing "
          "in reading order and answer inside <res></res>.")
FLAT_RATIO = 1.25
#: the build goal: < 60 s at 100,000 records (issue 23); above that many records, the
#: same rate (e.g. < 600 s at 1,000,000, where the issue asks only that it works)
BUILD_GOAL_S, BUILD_GOAL_N = 60.0, 100_000
N_IMAGES = 60


def make_images(folder: Path, n: int, rng: random.Random) -> list[str]:
    """``n`` JPEG "rubbings" of 900 x 1400 px (every 20th 2600 x 5200)."""
    from PIL import Image, ImageDraw

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(n):
        size = (2600, 5200) if i % 20 == 0 else (900, 1400)
        im = Image.new("RGB", size, (40 + i % 50, 40, 40))
        draw = ImageDraw.Draw(im)
        for _ in range(30):
            x, y = rng.randrange(size[0]), rng.randrange(size[1])
            draw.rectangle([x, y, x + 60, y + 60], fill=(220, 220, 210))
        name = f"img_{i:04d}.jpg"
        im.save(folder / name, quality=85)
        names.append(name)
    return names


def write_samples(path: Path, n: int, images: list[str], root: Path, seed: int = 0) -> None:
    """``n`` Ancient-Bench-like lines (a ground truth, a noisy prediction with its
    counts, NED / F1, every 50th unparsed) written as the runner writes them."""
    from heritage_eval.core.record import ImageRef, ResponseRecord, SampleRecord, TurnRecord

    rng = random.Random(seed)
    template = json.loads(SampleRecord(
        id="x", benchmark="ancient-bench", model="synthetic", state="scored",  # type: ignore[arg-type,call-arg]
        turns=[TurnRecord(prompt=PROMPT, images=[ImageRef(path="x", width=900, height=1400,
                                                          role="artifact")],
                          response=ResponseRecord(text="", latency_s=1.2))],
        image_root=str(root)).to_json_line())
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            gt = "".join(rng.choice(CHARS) for _ in range(rng.randint(8, 30)))
            pred = "".join(c if rng.random() > 0.2 else rng.choice(CHARS) for c in gt)
            pred = pred[: len(pred) - rng.randint(0, 3)]
            subs = sum(a != b for a, b in zip(gt, pred, strict=False))
            dels = len(gt) - len(pred)
            ned = 1 - (subs + dels) / max(len(gt), 1)
            medium = MEDIA[i % len(MEDIA)]
            rec = dict(template, id=f"{medium.lower()}/{i:07d}", groups={"medium": medium},
                       state="scored" if i % 50 else "unparsed",
                       scores={"ned_score": ned, "f1": min(1.0, ned + 0.05)},
                       answer=pred, reference=gt, source=f"conv.jsonl:{i + 1}",
                       details={"normalized_ground_truth": gt, "normalized_prediction": pred,
                                "insertions": 0, "deletions": dels, "substitutions": subs})
            turn = dict(template["turns"][0])
            turn["images"] = [dict(turn["images"][0], path=images[i % len(images)])]
            turn["response"] = dict(turn["response"], text=f"<res>{pred}</res>")
            rec["turns"] = [turn]
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def write_summary(run: Path) -> None:
    """A small ``summary.json`` (metric specs; the header is not what is measured)."""
    specs = [{"name": "ned_score", "label": "NED", "scale": 1.0, "decimals": 3},
             {"name": "f1", "label": "F1", "scale": 1.0, "decimals": 3}]
    (run / "summary.json").write_text(json.dumps({
        "schema": "heritage-eval/summary/1", "benchmark": "ancient-bench",
        "models": {"synthetic": {"metrics": {}}},
        "statistics": {"metric_specs": specs}}), encoding="utf-8")


def child_build(run: str, site: str) -> None:
    """(child) Build the site; print its facts as JSON."""
    from heritage_eval.viewer import build

    info = build([run], site)
    print(json.dumps({"seconds": info.seconds, "n": info.n_samples, "made": info.made,
                      "sizes": info.sizes}))


def child_json(run: str, out: str) -> None:
    """(child) The reference: read and re-write every record with json."""
    t0 = time.perf_counter()
    with open(run, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            dst.write(json.dumps(json.loads(line), ensure_ascii=False) + "\n")
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def measured(*args: str) -> tuple[dict[str, Any], float, float]:
    """Run this file in child mode; its printed facts, peak RSS (MiB), CPU seconds."""
    u = run_measured([sys.executable, __file__, "--child", *args])
    return json.loads(u.stdout.strip().splitlines()[-1]), u.rss_mib, u.cpu


FILTERS = {  # name -> the state change applied (window.HE_APPLY, static/app.js)
    "medium": "{groups: {medium: 3}}",
    "state": "{states: {scored: false, unparsed: true, error: true, unscored: true}}",
    "score range": "{metric: 'ned_score', min: '0.5', max: '0.8'}",
    "text search": "{q: '天地'}",
    "sort by score": "{sort: 'desc'}",
}
RESET = ("{groups: {medium: -1}, states: {scored: true, unparsed: true, error: true, "
         "unscored: true}, min: '', max: '', q: '', sort: 'order'}")


def _wait(d: object, script: str, timeout: float = 300) -> object:
    end = time.time() + timeout
    while time.time() < end:
        v = d.execute_script(script)  # type: ignore[attr-defined]
        if v:
            return v
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for: {script}")


def browser_times(site: Path, repeats: int = 3) -> dict[str, float]:
    """First render, bare page, all shards loaded, each filter and the bare pass, in ms
    (medians)."""
    from heritage_eval.viewer.browser import chromium, console_errors

    bare = site / "bare.html"
    bare.write_text('<!doctype html><meta charset="utf-8"><script src="data/index.js"></script>'
                    "<script>window.HE_SHARD = function (k, c) { window.S0 = c; };</script>"
                    '<script src="data/index-0000.js"></script>'
                    "<script>window.HE_FIRST_RENDER_MS = performance.now();</script>",
                    encoding="utf-8")
    out: dict[str, list[float]] = {}
    with chromium() as d:
        for key, page in (("bare", bare), ("first", site / "index.html")):
            for _ in range(repeats):
                d.get("about:blank")
                d.get(page.as_uri())
                out.setdefault(key, []).append(float(str(_wait(
                    d, "return window.HE_FIRST_RENDER_MS || null"))))
                if key == "first":
                    out.setdefault("loaded", []).append(float(str(_wait(
                        d, "return window.HE_LOADED_MS || null"))))
        _wait(d, "return !!window.HE_SEARCH")  # loaded when idle after the index
        for _ in range(repeats):
            out.setdefault("pass", []).append(float(d.execute_script(
                "var t = performance.now(), c = HE_INDEX.cols.st, n = 0;"
                "for (var i = 0; i < c.length; i++) if (c[i] === 0) n++;"
                "return performance.now() - t + n * 0;")))
            for name, change in FILTERS.items():
                out.setdefault(name, []).append(float(d.execute_script(
                    f"HE_APPLY({RESET}); var t = performance.now(); HE_APPLY({change});"
                    "document.body.offsetHeight; return performance.now() - t;")))
        errors = console_errors(d)
        if errors:
            print(f"console errors: {errors}", file=sys.stderr)
    bare.unlink()
    times = {k: statistics.median(v) for k, v in out.items()}
    times.update({f"{k} max": max(out[k]) for k in FILTERS})  # the first sort ranks
    return times


def _goal(lines: list[str], what: str, value: str, met: bool) -> bool:
    lines.append(f"goal: {what}: {value}  {'met' if met else 'NOT met'}")
    return met


def main() -> int:
    quick = os.environ.get("BENCH_QUICK") == "1"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="numbers of records (default 10,000 and 100,000)")
    ap.add_argument("--million", action="store_true",
                    help="also 1,000,000 records (browser timings included)")
    ap.add_argument("--browser-max", type=int, default=None,
                    help="browser timings for sizes up to this many samples (default: all)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the runs and sites here")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        {"build": child_build, "json": child_json}[args.child[0]](*args.child[1:])
        return 0
    from heritage_eval.viewer.browser import missing_reason

    sizes = args.sizes or ([5_000, 20_000] if quick else [10_000, 100_000])
    if args.million:
        sizes = [*sizes, 100_000 if quick else 1_000_000]
    browser_max = args.browser_max if args.browser_max is not None else max(sizes)
    tmp = Path(args.keep or tempfile.mkdtemp(prefix="bench-viewer-"))
    reason = missing_reason()
    rss: dict[int, float] = {}
    goals: list[str] = []
    ok = True
    try:
        names = make_images(tmp / "images", N_IMAGES, random.Random(0))
        for n in sizes:
            run = tmp / f"run{n}"
            t0 = time.perf_counter()
            write_samples(run / "samples.jsonl", n, names, tmp / "images")
            write_summary(run)
            mib = (run / "samples.jsonl").stat().st_size / 2**20
            print(f"== {n:,} records ({mib:.0f} MiB samples.jsonl, {N_IMAGES} images; "
                  f"written in {time.perf_counter() - t0:.0f} s)", flush=True)
            ref, ref_rss, _ = measured("json", str(run / "samples.jsonl"),
                                       str(tmp / "ref.jsonl"))
            (tmp / "ref.jsonl").unlink()
            site = tmp / f"site{n}"
            load = os.getloadavg()[0]
            facts, rss[n], cpu = measured("build", str(run), str(site))
            sz = facts["sizes"]
            print(f"build {n:,} records: {facts['seconds']:.1f} s wall, {cpu:.1f} s CPU "
                  f"(workers included; load {load:.1f} before)  ratio "
                  f"{facts['seconds'] / ref['seconds']:.1f}x the json reference "
                  f"({ref['seconds']:.1f} s); {facts['made']} thumbnails made; index "
                  f"{sz['index'] / 2**20:.1f} MiB in {sz['n_shards']} shard(s), first "
                  f"{sz['first_shard'] / 2**20:.1f} MiB + manifest {sz['manifest'] / 1024:.1f}"
                  f" KiB; search {sz['search'] / 2**20:.1f} MiB", flush=True)
            limit = BUILD_GOAL_S * max(1.0, n / BUILD_GOAL_N)
            ok &= _goal(goals, f"build < {limit:.0f} s at {n:,} records",
                        f"{facts['seconds']:.1f} s wall ({cpu:.1f} s CPU)",
                        facts["seconds"] < limit)
            print(f"peak RSS of the build, {n:,} records: {rss[n]:.0f} MiB  ratio "
                  f"{rss[n] / ref_rss:.2f}x the json child ({ref_rss:.0f} MiB)", flush=True)
            if n <= browser_max and not reason:
                t = browser_times(site)
                first_met, slowest = t["first"] < 2000, max(t[k] for k in FILTERS)
                worst = max(FILTERS, key=lambda k: t[f"{k} max"])
                once = t[f"{worst} max"]  # the slowest single answer (goal)
                print(f"first render, {n:,} samples: {t['first']:.0f} ms  goal < 2000 ms "
                      f"{'met' if first_met else 'NOT met'}  ratio "
                      f"{t['first'] / max(t['bare'], 1e-9):.2f}x the bare page "
                      f"({t['bare']:.0f} ms); every shard loaded at {t['loaded']:.0f} ms",
                      flush=True)
                print(f"filters, {n:,} samples: slowest median {slowest:.0f} ms  goal < 1000 ms"
                      f" {'met' if once < 1000 else 'NOT met'}  ("
                      + ", ".join(f"{k} {t[k]:.0f}" for k in FILTERS) + " ms)  ratio "
                      f"{slowest / max(t['pass'], 1e-3):.0f}x a bare pass over the index "
                      f"({t['pass']:.1f} ms); slowest single answer {once:.0f} ms ({worst})",
                      flush=True)
                ok &= _goal(goals, f"first render < 2 s at {n:,} samples",
                            f"{t['first'] / 1000:.2f} s", first_met)
                ok &= _goal(goals, f"filters < 1 s at {n:,} samples",
                            f"slowest single answer {once:.0f} ms ({worst}; medians "
                            f"<= {slowest:.0f} ms)", once < 1000)
            if args.keep is None:
                shutil.rmtree(site, ignore_errors=True)
                shutil.rmtree(run, ignore_errors=True)
        if reason:
            print(f"browser timings skipped: {reason}")
            goals.append(f"goal: first render < 2 s, filters < 1 s: not measured ({reason})")
        lo, hi = min(rss), max(rss)
        ratio = rss[hi] / rss[lo]
        print(f"memory flat: peak RSS {rss[lo]:.0f} MiB at {lo:,} -> {rss[hi]:.0f} MiB at "
              f"{hi:,} records ({ratio:.2f}x for {hi // lo}x the records)  goal <= "
              f"{FLAT_RATIO}x {'met' if ratio <= FLAT_RATIO else 'NOT met'}")
        ok &= _goal(goals, f"build memory flat ({lo:,} -> {hi:,} records, peak RSS <= "
                    f"{FLAT_RATIO}x)", f"{rss[lo]:.0f} -> {rss[hi]:.0f} MiB ({ratio:.2f}x)",
                    ratio <= FLAT_RATIO)
        print("\n".join(goals))
        print(f"all goals {'met' if ok else 'NOT met'}")
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
