"""Benchmark: MUSE question generation throughput (all 12 tasks, jigsaw included).

Makes a synthetic Label Studio export and N synthetic 1920x1080 JPEG artworks under
``--workdir`` (reused when already there), then times ``generate_benchmark`` on them and
prints questions/s and images/s. Reference measured in the same run: a plain PNG encode
(Pillow, at the generator's asset compression level) of the same decoded images — the
ratio says how many "PNG encodes of the artwork" one image's questions cost (the jigsaw
puzzle image is one such encode). A second run without the jigsaw task shows the
text-only throughput.

Usage: python bench/bench_muse_generate.py [--images 1000] [--workdir /tmp/muse-bench]
"""

from __future__ import annotations

import argparse
import io
import json
import random
import time
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from heritage_eval.benchmarks.muse.annotation import EMOTIONS, PERSON_CATEGORIES
from heritage_eval.benchmarks.muse.generate import generate_benchmark
from heritage_eval.benchmarks.muse.params import GenerationParams
from heritage_eval.benchmarks.muse.questions import read_questions
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.core.images import load_image

W, H = 1920, 1080
OBJECTS = ["straw hat", "jug", "violin", "lantern", "umbrella", "basket", "fan", "drum",
           "bowl", "boat", "kite", "bicycle", "sarong", "teapot", "book", "bird cage"]
SCENES = ["hawker centre at night", "kampung house veranda", "temple courtyard",
          "river bank at dusk", "shophouse street", "harbour quay", "classroom",
          "wet market", "palace hall", "rice paddy", "church interior", "tea house"]
CULTURES = ["Peranakan", "Malay", "Chinese (Qing)", "Tamil", "Japanese (Edo)",
            "Dutch Golden Age", "French Rococo", "Javanese", "Thai", "Ottoman", "Mughal",
            "Victorian English", "Balinese", "Korean (Joseon)", "Filipino", "Khmer"]
VERBS = ["holds", "carries", "points at", "looks at", "lifts", "offers", "paints", "sells"]


def _textures(rng: np.random.Generator, n: int = 8) -> list[np.ndarray]:
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    out = []
    for _ in range(n):
        f = rng.uniform(30, 200, 3)
        base = np.stack([np.sin(xx / f[0]) * 60 + 120, np.cos(yy / f[1]) * 50 + 110,
                         np.sin((xx + yy) / f[2]) * 70 + 100], -1)
        noise = cv2.resize(rng.normal(0, 30, (H // 8, W // 8, 3)).astype(np.float32), (W, H))
        out.append(np.clip(base + noise, 0, 255).astype(np.uint8))
    return out


def _box(r: random.Random) -> dict[str, float]:
    w, h = r.uniform(5, 40), r.uniform(10, 60)
    return {"x": round(r.uniform(0, 100 - w), 4), "y": round(r.uniform(0, 100 - h), 4),
            "width": round(w, 4), "height": round(h, 4), "rotation": 0}


def _region(rid: str, name: str, kind: str, geo: dict[str, float], key: str, val: object
            ) -> dict[str, object]:
    return {"id": rid, "from_name": name, "to_name": "image", "type": kind,
            "original_width": W, "original_height": H, "value": {**geo, key: val}}


def _task(i: int, r: random.Random) -> dict[str, object]:
    res: list[dict[str, object]] = []
    people = r.randint(2, 4)
    for p in range(1, people + 1):
        g = _box(r)
        res += [_region(f"p{p}", "character", "rectanglelabels", g, "rectanglelabels",
                        [r.choice(PERSON_CATEGORIES)]),
                _region(f"p{p}", "emotion", "choices", g, "choices", [r.choice(EMOTIONS)]),
                _region(f"p{p}", "visual_clues", "textarea", g, "text",
                        [f"Face turned to the {r.choice(OBJECTS)}, brows raised."]),
                _region(f"p{p}", "emotion_cause", "textarea", g, "text",
                        [f"Someone nearby {r.choice(VERBS)} a {r.choice(OBJECTS)}."])]
    for a in range(1, r.randint(2, 3) + 1):
        g = _box(r)
        res += [_region(f"a{a}", "activity", "rectanglelabels", g, "rectanglelabels",
                        [r.choice(VERBS)]),
                _region(f"a{a}", "activity_description", "textarea", g, "text",
                        [f"A person {r.choice(VERBS)} the {r.choice(OBJECTS)} beside the "
                         f"{r.choice(OBJECTS)} near a {r.choice(OBJECTS)}."])]
        if a == 1:
            res.append(_region("a1", "negative_description", "textarea", g, "text",
                               [f"A person {r.choice(VERBS)} a {r.choice(OBJECTS)}."]))
    names = r.sample(OBJECTS, 3)
    for o, name in enumerate(names, start=1):
        res.append(_region(f"o{o}", "object", "rectanglelabels", _box(r), "rectanglelabels",
                           [name]))
        res.append({"id": f"count_{o}", "from_name": "count_" + name.replace(" ", "_"),
                    "type": "number", "value": {"number": 1}})
    res.append(_region("c1", "culture", "rectanglelabels", _box(r), "rectanglelabels",
                       [r.choice(CULTURES)]))
    res.append({"id": "scene", "from_name": "scene", "type": "choices",
                "value": {"choices": [r.choice(SCENES)]}})
    res.append({"id": "rp", "from_name": "relative_position", "type": "textarea",
                "value": {"text": ["A=p1;B=p2;lateral=left;depth=front;vertical=none"]}})
    if i % 2 == 0:
        res.append({"id": "ri", "from_name": "remote_interaction", "type": "textarea",
                    "value": {"text": [f"A=p1;B=p2;evidence=He {r.choice(VERBS)} her."]}})
    return {"id": i + 1, "data": {"image": f"images/art_{i:05d}.jpg"},
            "annotations": [{"id": i + 1, "result": res}]}


def make_dataset(n: int, root: Path, seed: int = 0) -> Path:
    """Synthetic export + ``n`` JPEGs under ``root``; returns the export path."""
    export = root / f"export_{n}.json"
    if export.exists():
        return export
    (root / "images").mkdir(parents=True, exist_ok=True)
    nrng, r = np.random.default_rng(seed), random.Random(seed)
    textures = _textures(nrng)
    for i in range(n):
        img = np.roll(textures[i % len(textures)], (i * 37 % H, i * 91 % W), axis=(0, 1))
        img = np.ascontiguousarray(img)
        for _ in range(12):
            color = tuple(int(v) for v in nrng.integers(0, 255, 3))
            cv2.circle(img, (int(nrng.integers(0, W)), int(nrng.integers(0, H))),
                       int(nrng.integers(20, 200)), color, -1)
        Image.fromarray(img).save(root / "images" / f"art_{i:05d}.jpg", quality=90)
    export.write_text(json.dumps([_task(i, r) for i in range(n)]), encoding="utf-8")
    return export


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=1000, help="synthetic images (default 1000)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/muse-bench"),
                    help="where data and outputs go")
    ap.add_argument("--reference-images", type=int, default=200,
                    help="images timed for the PNG-encode reference (default 200)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    export = make_dataset(args.images, args.workdir)
    print(f"dataset: {args.images} images {W}x{H} ready in {time.perf_counter() - t0:.1f} s")
    level = GenerationParams().jigsaw_puzzle.png_compress_level
    ref_paths = sorted((args.workdir / "images").glob("*.jpg"))[:args.reference_images]
    t0 = time.perf_counter()
    for p in ref_paths:
        Image.fromarray(np.asarray(load_image(p))).save(io.BytesIO(), format="PNG",
                                                        compress_level=level)
    ref = (time.perf_counter() - t0) / len(ref_paths)
    out = args.workdir / "out" / "questions.jsonl"
    t0 = time.perf_counter()
    generate_benchmark(export, args.workdir / "images", out, seed=0)
    full = time.perf_counter() - t0
    _, questions = read_questions(out)
    n_turns = sum(len(q.turns) for q in questions)
    per_image = full / args.images
    print(f"all 12 tasks: {len(questions)} questions ({n_turns} turns, "
          f"{sum(q.turns[0].task == 'jigsaw_puzzle' for q in questions)} jigsaw) "
          f"in {full:.1f} s -> {len(questions) / full:.1f} questions/s, "
          f"{args.images / full:.2f} images/s")
    print(f"reference: decode + PNG encode (level {level}) of one image {ref * 1000:.0f} ms "
          f"(mean of {len(ref_paths)}); generation per image {per_image * 1000:.0f} ms "
          f"= {per_image / ref:.2f}x the reference")
    text_out = args.workdir / "out_text" / "questions.jsonl"
    tasks = [t for t in TASK_IDS if t != "jigsaw_puzzle"]
    t0 = time.perf_counter()
    generate_benchmark(export, args.workdir / "images", text_out, seed=0, tasks=tasks,
                       progress=False)
    text = time.perf_counter() - t0
    _, tq = read_questions(text_out)
    print(f"without jigsaw: {len(tq)} questions in {text:.1f} s -> "
          f"{len(tq) / text:.0f} questions/s")


if __name__ == "__main__":
    main()
