"""Viewer benchmark: a synthetic 10,000-sample Ancient-Bench-like run.

Prints, each with its goal and a ratio against a reference measured in the same run:

- site generation time (goal < 10 s), first build (thumbnails made) and re-build
  (thumbnails reused); reference: writing the same records with ``json.dumps``;
- first-render time in headless Chromium (goal < 2 s): ``performance.now()`` in the page
  when the first page of samples is drawn (from navigation start); reference: a bare page
  that only loads the same ``data/index.js``;
- opening one sample (its 500-record data page loaded and drawn);
- bytes loaded before the first render (HTML, CSS, JS, index data, first-page
  thumbnails) against the whole site's data.

Usage: ``python bench/bench_viewer.py [--n 10000] [--images 60] [--keep DIR]``.
Browser parts are skipped (with the reason) when Chromium is not installed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import ImageRef, ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.viewer import build
from heritage_eval.viewer.browser import chromium, missing_reason

CHARS = "天地玄黃宇宙洪荒日月盈昃辰宿列張寒來暑往秋收冬藏閏餘成歲律呂調陽雲騰致雨露結為霜"
MEDIA = ["Oracle", "Bronze", "Slip", "Silk", "Seal", "Stele", "Cliff", "Edition", "Calligraphy"]
PROMPT = ("The image shows writing on an ancient Chinese artifact. Transcribe the writing, "
          "following these rules: ... ") * 12


def make_images(folder: Path, n: int, rng: random.Random) -> list[str]:
    """``n`` JPEG "rubbings" of 900 x 1400 px (a few very large ones, 2600 x 5200)."""
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


def make_records(n: int, images: list[str], root: Path, rng: random.Random
                 ) -> list[SampleRecord]:
    """``n`` Ancient-Bench-like records with a ground truth, a noisy prediction, scores."""
    from heritage_eval.viewer.diff import char_ops, op_counts

    recs = []
    for i in range(n):
        gt = "".join(rng.choice(CHARS) for _ in range(rng.randint(8, 40)))
        pred = "".join(c if rng.random() > 0.2 else rng.choice(CHARS) for c in gt)
        pred = pred[: len(pred) - rng.randint(0, 3)]
        counts = op_counts(char_ops(gt, pred))
        ned = 1 - (counts["insertions"] + counts["deletions"] + counts["substitutions"]) / max(
            len(gt), len(pred), 1)
        state = "scored" if i % 50 else "unparsed"
        medium = MEDIA[i % len(MEDIA)]
        img = images[i % len(images)]
        recs.append(SampleRecord(
            id=f"{medium.lower()}/{i:06d}", benchmark="ancient-bench", model="synthetic",
            groups={"medium": medium}, state=state,  # type: ignore[arg-type,call-arg]
            scores={"ned_score": ned, "f1": min(1.0, ned + 0.05)},
            turns=[TurnRecord(prompt=PROMPT, images=[ImageRef(
                path=img, width=900, height=1400, role="artifact")],
                response=ResponseRecord(text=f"<res>{pred}</res>", latency_s=1.2))],
            image_root=str(root), answer=pred, reference=gt, source=f"conv.jsonl:{i + 1}",
            details={"normalized_ground_truth": gt, "normalized_prediction": pred, **counts}))
    return recs


def write_run(folder: Path, recs: list[SampleRecord]) -> float:
    """Write samples.jsonl (timed: the json.dumps reference) and summary.json."""
    from heritage_eval.core import summary as summ

    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with (folder / "samples.jsonl").open("w", encoding="utf-8") as fh:
        for r in recs:
            fh.write(json.dumps(r.model_dump(mode="json", by_alias=True), ensure_ascii=False))
            fh.write("\n")
    ref = time.perf_counter() - t0
    specs = [MetricSpec("ned_score", "NED", macro_over="medium", by=("medium",)),
             MetricSpec("f1", "F1", macro_over="medium", by=("medium",))]
    old = summ.N_RESAMPLES
    summ.N_RESAMPLES = 1000  # the summary is not what is measured here
    try:
        env = summ.envelope("ancient-bench", recs, specs, ["medium"])
    finally:
        summ.N_RESAMPLES = old
    (folder / "summary.json").write_text(json.dumps(env), encoding="utf-8")
    return ref


def first_page_bytes(site: Path, rows: int = 50) -> int:
    """Bytes the browser reads before the first list is drawn."""
    files = [site / "index.html", site / "static" / "style.css", site / "static" / "app.js",
             site / "data" / "index.js"]
    index = json.loads((site / "data" / "index.js").read_text(encoding="utf-8")
                       [len("window.HE_INDEX="):].rstrip().rstrip(";"))
    thumbs = {k for k in index["cols"]["th"][:rows] if k and k != "!"}
    files += [site / "thumbs" / f"{k}.jpg" for k in thumbs]
    return sum(f.stat().st_size for f in files)


def browser_times(site: Path) -> dict[str, float]:
    """First render, bare-page reference and one sample opened, in ms."""
    bare = site / "bare.html"
    bare.write_text('<!doctype html><meta charset="utf-8"><script src="data/index.js"></script>'
                    "<script>window.HE_FIRST_RENDER_MS = performance.now();</script>",
                    encoding="utf-8")
    out: dict[str, float] = {}
    with chromium() as d:
        for key, page in (("bare", bare), ("first", site / "index.html")):
            best = float("inf")
            for _ in range(3):
                d.get("about:blank")
                d.get(page.as_uri())
                t = None
                for _ in range(200):
                    t = d.execute_script("return window.HE_FIRST_RENDER_MS || null")
                    if t is not None:
                        break
                    time.sleep(0.02)
                best = min(best, float(t if t is not None else "inf"))
            out[key] = best
        t0 = d.execute_script("return performance.now()")
        d.execute_script("location.hash = '#s=9876'")
        for _ in range(500):
            if d.execute_script("return document.body.getAttribute('data-detail')") == "9876":
                break
            time.sleep(0.01)
        out["open"] = float(d.execute_script("return performance.now()")) - float(t0)
        errors = [e["message"] for e in d.get_log("browser") if e.get("level") == "SEVERE"]
        if errors:
            print(f"console errors: {errors}", file=sys.stderr)
    bare.unlink()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--images", type=int, default=60)
    ap.add_argument("--keep", type=Path, default=None, help="keep the run and site here")
    args = ap.parse_args()
    rng = random.Random(0)
    tmp = Path(args.keep or tempfile.mkdtemp(prefix="bench-viewer-"))
    try:
        names = make_images(tmp / "images", args.images, rng)
        recs = make_records(args.n, names, tmp / "images", rng)
        ref = write_run(tmp / "run", recs)
        site = tmp / "site"
        shutil.rmtree(site, ignore_errors=True)
        info = build([tmp / "run"], site)
        again = build([tmp / "run"], site)
        sizes = info.sizes
        print(f"synthetic run: {info.n_samples} samples, {args.images} images "
              f"({info.made} thumbnails made), {sizes['n_pages']} data pages")
        print(f"reference: json.dumps of the same records: {ref:.2f} s")
        print(f"site generation (first build): {info.seconds:.2f} s  goal < 10 s  "
              f"ratio {info.seconds / ref:.1f}x the json.dumps reference")
        print(f"site generation (re-build, thumbnails reused: {again.reused}): "
              f"{again.seconds:.2f} s  goal < 10 s  ratio {again.seconds / ref:.1f}x")
        first = first_page_bytes(site)
        total = sizes["index"] + sizes["search"] + sizes["pages"]
        print(f"data before first render: {first / 1024:.0f} KiB (index.js "
              f"{sizes['index'] / 1024:.0f} KiB)  of {total / 1024 / 1024:.1f} MiB data "
              f"({first / total:.1%})")
        reason = missing_reason()
        if reason:
            print(f"browser timings skipped: {reason}")
            return 0
        t = browser_times(site)
        print(f"reference: bare page loading only data/index.js: {t['bare']:.0f} ms")
        print(f"first render (first page of samples drawn): {t['first']:.0f} ms  goal < 2000 ms"
              f"  ratio {t['first'] / max(t['bare'], 1e-9):.1f}x the bare page")
        print(f"open one sample (its data page of 500 loaded + drawn): {t['open']:.0f} ms")
        ok = info.seconds < 10 and t["first"] < 2000
        print("goals met" if ok else "GOAL MISSED")
        return 0 if ok else 1
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
