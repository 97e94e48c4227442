"""OCR throughput of the bundled ``rapidocr`` backend on the Ancient-Bench demo set.

Measures, in one run and on the same images:

* reference: decode + size-cap each image exactly as the backend does before OCR
  (:func:`heritage_eval.core.images.load_image` with the backend's ``max_side``, then
  the RGB->BGR array conversion) — the floor any image model pays;
* OCR: :meth:`RapidOCRBackend.recognise` (decode + detection + recognition + reading
  order), after one warm-up image so model loading is not counted.

Prints images/s and characters/s (ground-truth characters, column breaks excluded, and
characters actually output) for both, and the OCR / reference time ratio.

Usage: ``python bench/bench_ocr.py [--data DIR] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from heritage_eval.core.images import SizeCap, load_image
from heritage_eval.models.base import BackendOptions
from heritage_eval.models.rapidocr_backend import RapidOCRBackend

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "data" / "demo" / "ancient_bench"


def demo_items(root: Path) -> list[tuple[Path, str]]:
    """(image path, ground truth) for every ``conv.jsonl`` line under ``root``."""
    items = []
    for conv in sorted(root.glob("*/conv.jsonl")):
        for line in conv.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                items.append((conv.parent / "images" / rec["image"], rec["human_gt"]))
    return items


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="Ancient-Bench layout folder (default: data/demo/ancient_bench)")
    ap.add_argument("--repeat", type=int, default=1, help="passes over the images (default 1)")
    args = ap.parse_args(argv)
    items = demo_items(args.data)
    if not items:
        print(f"no conv.jsonl found under {args.data}", file=sys.stderr)
        return 2
    backend = RapidOCRBackend("", BackendOptions())
    cap = SizeCap(max_side=backend.max_side)
    backend.recognise(str(items[0][0]))  # warm-up: loads the ONNX models

    n_images = len(items) * args.repeat
    gt_chars = sum(len(gt.replace("\n", "")) for _, gt in items) * args.repeat

    start = time.perf_counter()
    for _ in range(args.repeat):
        for path, _gt in tqdm(items, desc="decode+resize", file=sys.stderr):
            np.ascontiguousarray(np.asarray(load_image(path, 0, cap))[:, :, ::-1])
    t_ref = time.perf_counter() - start

    out_chars = 0
    start = time.perf_counter()
    for _ in range(args.repeat):
        for path, _gt in tqdm(items, desc="rapidocr", file=sys.stderr):
            text, _meta = backend.recognise(str(path))
            out_chars += len(text.replace("\n", ""))
    t_ocr = time.perf_counter() - start

    print(f"images: {n_images} ({len(items)} x {args.repeat}), ground-truth characters: "
          f"{gt_chars}, output characters: {out_chars}")
    print(f"reference decode+resize: {t_ref:8.3f} s  {n_images / t_ref:9.1f} images/s  "
          f"{gt_chars / t_ref:10.1f} gt chars/s")
    print(f"rapidocr recognise:      {t_ocr:8.3f} s  {n_images / t_ocr:9.2f} images/s  "
          f"{gt_chars / t_ocr:10.1f} gt chars/s  {out_chars / t_ocr:8.1f} output chars/s")
    print(f"ratio OCR / decode+resize: {t_ocr / t_ref:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
