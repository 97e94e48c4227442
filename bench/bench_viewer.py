"""Viewer benchmark: synthetic Ancient-Bench-like runs of 10,000, 100,000 and 1,000,000
records (issue 23 item 2).

Per size, each line with its goal and a ratio against a reference measured in this run:

- build time of the site (goal < 60 s, at every size), in a child process; reference: a
  child that reads the same ``samples.jsonl`` and writes every record again with
  ``json.loads`` / ``json.dumps`` (the least any build has to do);
- peak RSS of that child (its high-water mark, ``bench/_child.py``; with worker
  processes, the largest of the build process and its workers): the goal is memory flat
  in the number of records, here: the peak at the largest size at most
  :data:`FLAT_RATIO` x the peak at the smallest; reference: the json child's peak;
- in headless Chromium, for the sizes up to 100,000: first render (goal < 2 s) against a
  bare page that only loads the same ``data/index.js``; the slowest filter (medium,
  state, score range, text search, sort by score; goal < 1 s) against one bare pass over
  the index's state column in the same page.

The records share 60 images (a run reuses few images many times), so thumbnails are made
once per image. ``BENCH_QUICK=1`` runs 5,000 / 20,000 / 100,000 records instead.

Usage: ``python bench/bench_viewer.py [--sizes 10000 100000 1000000] [--browser-max N]
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


def measured(*args: str) -> tuple[dict[str, Any], float]:
    """Run this file in child mode; its printed facts and peak RSS (MiB)."""
    u = run_measured([sys.executable, __file__, "--child", *args])
    return json.loads(u.stdout.strip().splitlines()[-1]), u.rss_mib


FILTERS = {  # name -> the state change applied (window.HE_APPLY, static/app.js)
    "medium": "{groups: {medium: 3}}",
    "state": "{states: {scored: false, unparsed: true, error: true, unscored: true}}",
    "score range": "{metric: 'ned_score', min: '0.5', max: '0.8'}",
    "text search": "{q: '天地'}",
    "sort by score": "{sort: 'desc'}",
}
RESET = ("{groups: {medium: -1}, states: {scored: true, unparsed: true, error: true, "
         "unscored: true}, min: '', max: '', q: '', sort: 'order'}")


def _wait(d: object, script: str, timeout: float = 60) -> object:
    end = time.time() + timeout
    while time.time() < end:
        v = d.execute_script(script)  # type: ignore[attr-defined]
        if v:
            return v
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for: {script}")


def browser_times(site: Path, repeats: int = 3) -> dict[str, float]:
    """First render, bare page, each filter and the bare pass, in ms (medians)."""
    from heritage_eval.viewer.browser import chromium, console_errors

    bare = site / "bare.html"
    bare.write_text('<!doctype html><meta charset="utf-8"><script src="data/index.js"></script>'
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
        _wait(d, "return !!window.HE_SEARCH")  # loaded when idle after the first render
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
    return {k: statistics.median(v) for k, v in out.items()}


def main() -> int:
    quick = os.environ.get("BENCH_QUICK") == "1"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[5_000, 20_000, 100_000] if quick else [10_000, 100_000, 1_000_000])
    ap.add_argument("--browser-max", type=int, default=100_000,
                    help="browser timings for sizes up to this many samples")
    ap.add_argument("--keep", type=Path, default=None, help="keep the runs and sites here")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        {"build": child_build, "json": child_json}[args.child[0]](*args.child[1:])
        return 0
    from heritage_eval.viewer.browser import missing_reason

    tmp = Path(args.keep or tempfile.mkdtemp(prefix="bench-viewer-"))
    reason = missing_reason()
    rss: dict[int, float] = {}
    ok = True
    try:
        names = make_images(tmp / "images", N_IMAGES, random.Random(0))
        for n in args.sizes:
            run = tmp / f"run{n}"
            t0 = time.perf_counter()
            write_samples(run / "samples.jsonl", n, names, tmp / "images")
            write_summary(run)
            mib = (run / "samples.jsonl").stat().st_size / 2**20
            print(f"== {n:,} records ({mib:.0f} MiB samples.jsonl, {N_IMAGES} images; "
                  f"written in {time.perf_counter() - t0:.0f} s)", flush=True)
            ref, ref_rss = measured("json", str(run / "samples.jsonl"), str(tmp / "ref.jsonl"))
            (tmp / "ref.jsonl").unlink()
            site = tmp / f"site{n}"
            facts, rss[n] = measured("build", str(run), str(site))
            met = facts["seconds"] < 60
            ok &= met
            print(f"build {n:,} records: {facts['seconds']:.1f} s  goal < 60 s "
                  f"{'met' if met else 'NOT met'}  ratio {facts['seconds'] / ref['seconds']:.1f}x"
                  f" the json reference ({ref['seconds']:.1f} s); {facts['made']} thumbnails "
                  f"made, {facts['sizes']['index'] / 2**20:.1f} MiB index.js", flush=True)
            print(f"peak RSS of the build, {n:,} records: {rss[n]:.0f} MiB  ratio "
                  f"{rss[n] / ref_rss:.2f}x the json child ({ref_rss:.0f} MiB)", flush=True)
            if n <= args.browser_max and not reason:
                t = browser_times(site)
                first_met, slowest = t["first"] < 2000, max(t[k] for k in FILTERS)
                ok &= first_met and slowest < 1000
                print(f"first render, {n:,} samples: {t['first']:.0f} ms  goal < 2000 ms "
                      f"{'met' if first_met else 'NOT met'}  ratio "
                      f"{t['first'] / max(t['bare'], 1e-9):.2f}x the bare page "
                      f"({t['bare']:.0f} ms)", flush=True)
                print(f"filters, {n:,} samples: slowest {slowest:.0f} ms  goal < 1000 ms "
                      f"{'met' if slowest < 1000 else 'NOT met'}  ("
                      + ", ".join(f"{k} {t[k]:.0f}" for k in FILTERS) + " ms)  ratio "
                      f"{slowest / max(t['pass'], 1e-3):.0f}x a bare pass over the index "
                      f"({t['pass']:.1f} ms)", flush=True)
            if args.keep is None:
                shutil.rmtree(site, ignore_errors=True)
                shutil.rmtree(run, ignore_errors=True)
        if reason:
            print(f"browser timings skipped: {reason}")
        lo, hi = min(rss), max(rss)
        ratio = rss[hi] / rss[lo]
        ok &= ratio <= FLAT_RATIO
        print(f"memory flat: peak RSS {rss[lo]:.0f} MiB at {lo:,} -> {rss[hi]:.0f} MiB at "
              f"{hi:,} records ({ratio:.2f}x for {hi // lo}x the records)  goal <= "
              f"{FLAT_RATIO}x {'met' if ratio <= FLAT_RATIO else 'NOT met'}")
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
