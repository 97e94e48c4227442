"""Ancient-Bench scoring throughput on 2,700 synthetic (ground truth, prediction) pairs.

Lengths follow the release (paper, section 4.1 / Fig. 2E): per medium, as many pairs as the
full release has images, lengths log-uniform in the medium's range (seals / oracle / bronze
1-77 characters, slips / cliffs / steles 2-816, silk / editions / calligraphy 361-1,666),
so most texts are short. Ground truths carry line breaks, punctuation, □ and
``<unrecognizable>``; predictions are the ground truth with ~15 % random edits inside
``<res>…</res>``.

Prints, for the same pairs in the same run: seconds and characters/s of
(a) ``score_pair`` (official normalisation + NED + F1 + alignment),
(b) ``build_record`` (the full samples.jsonl row, adding the s/t-only analysis),
(c) the reference: one plain ``Levenshtein.distance`` per raw string pair,
and the ratios (a)/(c), (b)/(c). Target: (b) under 1 s. Usage:
``python bench/bench_ancient_scoring.py [--seed N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable

import Levenshtein

from heritage_eval.benchmarks.ancient_bench.categories import RELEASE_SIZES
from heritage_eval.benchmarks.ancient_bench.normalize import (
    PROTOCOLS,
    normalize_text,
    target_tokens,
)
from heritage_eval.benchmarks.ancient_bench.records import build_record
from heritage_eval.benchmarks.ancient_bench.scoring import score_pair
from heritage_eval.core.types import Sample

LENGTH_RANGES = {
    "seals": (1, 77), "oracle_bone_artifacts": (1, 77), "bronze_rubbings": (1, 77),
    "bamboo_wooden_slips": (2, 816), "cliff_carvings": (2, 816),
    "inscription_rubbings": (2, 816), "silk_manuscripts": (361, 1666),
    "traditional_chinese_book_editions": (361, 1666), "calligraphys": (361, 1666),
}
CHARS = [chr(c) for c in range(0x4E00, 0x4E00 + 3500)]
EXTRA = ["□", "□", "，", "。", "<unrecognizable>", "=", "會", "会"]


def _text(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(EXTRA) if rng.random() < 0.03 else rng.choice(CHARS) for _ in range(n)]


def _layout(tokens: list[str], rng: random.Random) -> str:
    out = []
    for i, t in enumerate(tokens):
        out.append(t)
        if i % rng.randint(6, 14) == 0 and i:
            out.append("\n")
    return "".join(out)


def _corrupt(tokens: list[str], rng: random.Random) -> list[str]:
    out: list[str] = []
    for t in tokens:
        r = rng.random()
        if r < 0.05:
            continue                          # deletion
        out.append(rng.choice(CHARS) if r < 0.10 else t)  # substitution
        if r > 0.95:
            out.append(rng.choice(CHARS))      # insertion
    return out


def make_pairs(seed: int) -> list[tuple[str, str, str]]:
    """``(category, ground truth, raw answer)`` for 2,700 pairs, deterministic in ``seed``."""
    rng = random.Random(seed)
    pairs = []
    for cat, count in RELEASE_SIZES.items():
        lo, hi = LENGTH_RANGES[cat]
        for _ in range(count):
            n = round(math.exp(rng.uniform(math.log(lo), math.log(hi))))
            gt = _text(rng, n)
            pred = _corrupt(gt, rng)
            pairs.append((cat, _layout(gt, rng), f"<res>\n{_layout(pred, rng)}\n</res>"))
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--repeat", type=int, default=3, help="timed repeats, best kept")
    args = ap.parse_args()
    flags = PROTOCOLS["official"]
    pairs = make_pairs(args.seed)
    n_chars = sum(len(g) + len(p) for _, g, p in pairs)
    t0 = time.perf_counter()
    normalize_text("甲", flags)  # builds the punctuation/whitespace table once per process
    warm = time.perf_counter() - t0
    lengths = sorted(len(target_tokens(g, flags)) for _, g, _ in pairs)
    samples = [Sample(id=f"{c}/{i}", category=c, target=g, metadata={"image_name": f"{i}.png"})
               for i, (c, g, _) in enumerate(pairs)]

    def best(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    t_score = best(lambda: [score_pair(p, g, flags) for _, g, p in pairs])
    t_rows = best(lambda: [build_record(s, "m", p, None, flags)
                           for s, (_, _, p) in zip(samples, pairs, strict=True)])
    t_ref = best(lambda: [Levenshtein.distance(g, p) for _, g, p in pairs])
    print(f"pairs: {len(pairs)}; ground-truth tokens min {lengths[0]}, median "
          f"{lengths[len(lengths) // 2]}, max {lengths[-1]}; raw characters (gt + answer): "
          f"{n_chars}")
    print(f"one-time table build: {warm:.3f} s")
    for label, t in (("score_pair (normalise + NED + F1 + alignment)", t_score),
                     ("build_record (full row incl. s/t analysis)", t_rows),
                     ("reference: Levenshtein.distance on raw strings", t_ref)):
        print(f"{label:48s} {t:7.3f} s  {n_chars / t:12,.0f} chars/s")
    print(f"ratio score_pair / reference:   {t_score / t_ref:6.1f}x")
    print(f"ratio build_record / reference: {t_rows / t_ref:6.1f}x")
    print(f"build_record for 2,700 pairs (goal < 1 s): {'met' if t_rows < 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
