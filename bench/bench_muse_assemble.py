"""Benchmark: ``muse assemble`` over a 50,000-question pool (goal < 10 s), and peak memory.

Synthesises a pool in the real question-file format (every record built and validated
by the :class:`~heritage_eval.benchmarks.muse.questions.Question` model, serialised as
``write_questions`` does, streamed): ``--images`` artworks with 20 styles and
13 scene themes (a ``--strata`` CSV), questions of all 12 tasks with the difficulty knobs
the generators record (options and distractor types, none-correct answers, jigsaw grids,
count answers), jigsaw pieces as small asset files — then times the whole assembly
in-process (scan, allocation, full validation of the chosen questions, asset copy,
writing) for both strategies and prints seconds against the goal and the peak RSS.

Usage: python bench/bench_muse_assemble.py [--questions 50000] [--per-task 200]
       [--workdir /tmp/muse-assemble-bench]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from heritage_eval.benchmarks.muse.assemble import assemble
from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
)
from heritage_eval.benchmarks.muse.taxonomy import AFFECTIVE_DIALOGUE, TASK_IDS

GOAL_S = 10.0
STYLES = [f"style {i:02d}" for i in range(20)]
THEMES = [f"theme {i:02d}" for i in range(13)]
KINDS = {"activity_localization": ["other_activity", "person_or_object", "sub_region",
                                   "random_region", "none"],
         "activity_description": ["oa", "oosi", "oodi", "oisi", "oidi", "so", "ca_s", "ca_d",
                                  "neg", "none"],
         "cultural_identification": ["other_cluster"],
         "jigsaw_puzzle": ["same_image_piece", "merged_neighbor", "zoomed_region",
                           "other_image_piece"],
         "remote_interaction": ["other_interaction", "same_image_entity", "mismatched_pair",
                                "cross_image"],
         "scene_classification": ["other_scene_category"],
         "object_classification": ["other_category"], "emotion_detection": ["other_emotion"]}
GRIDS = [[3, 4], [4, 4], [3, 6], [4, 5], [3, 7]]
#: Placeholders stamped into the serialised template questions.
IMAGE, NUMBER = "IMAGEXYZ", "NUMBERXYZ"


def _line(record: BaseModel) -> str:
    """A record as ``write_questions`` writes it (sorted keys, UTF-8)."""
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def _choice_turn(task: str, r: random.Random, n: int, stem: str, image: str,
                 pieces: bool) -> QuestionTurn:
    kinds = KINDS[task]
    labels = "ABCDEFGHIJK"[:n]
    answer = r.choice(labels)
    opts = [OptionRecord(label=lab, distractor_type="correct" if lab == answer
                         else kinds[i % len(kinds)],
                         text=None if pieces else f"option {lab} about {task} {r.random():.6f}",
                         image=f"{stem}_assets/{image}/piece_{lab}.bin" if pieces else None)
            for i, lab in enumerate(labels)]
    params: dict[str, object] = {"n_options": n, "draw_boxes": False}
    if task == "jigsaw_puzzle":
        params["grid"] = r.choice(GRIDS)
    if task == "cultural_identification":
        params["negative_pool"] = "dataset"
    prompt = f"Question about {task} in {image}. " + "Pick the right option. " * 8
    return QuestionTurn(task=task, prompt=prompt, images=[f"@images/{image}.jpg"],
                        answer_format="choice", tag="option", options=opts, answer=answer,
                        params=params)


def _question(task: str, image: str, k: int, r: random.Random, stem: str) -> Question:
    qid = f"{image}:{task}:{k}"
    if task == "affective_dialogue":
        depth = r.choice([3, 4, 4])
        turns = [_choice_turn("object_classification", r, 5, stem, image, False),
                 _choice_turn("emotion_detection", r, 11, stem, image, False)]
        turns += [QuestionTurn(task=t, prompt="Explain. " * 10, answer_format="open",
                               answer="reference text " * 6)
                  for t in AFFECTIVE_DIALOGUE[2:depth]]
        return Question(id=qid, image_id=image, turns=turns)
    if task == "object_count":
        turn = QuestionTurn(task=task, prompt="How many? " * 5, answer_format="number",
                            answer=r.randint(1, 12), images=[f"@images/{image}.jpg"])
        return Question(id=qid, image_id=image, turns=[turn])
    if task == "relative_position":
        ans = {"lateral": "left", "depth": "none", "vertical": "above"}
        turn = QuestionTurn(task=task, prompt="Where? " * 5, answer_format="position",
                            answer=ans, images=[f"@images/{image}.jpg"])
        return Question(id=qid, image_id=image, turns=[turn])
    n = 4 if task in ("jigsaw_puzzle", "remote_interaction", "cultural_identification",
                      "scene_classification") else r.choice([4, 5])
    turns = [_choice_turn(task, r, n, stem, image, task == "jigsaw_puzzle")]
    if task == "remote_interaction":
        turns.append(_choice_turn(task, r, n, stem, image, False))
    meta = {"none_correct": r.random() < 0.2} if task.startswith("activity_") else {}
    return Question(id=qid, image_id=image, turns=turns, metadata=meta)


def make_pool(n_questions: int, n_images: int, root: Path, seed: int = 0) -> tuple[Path, Path]:
    """Write the synthetic pool ``root/pool.jsonl`` (+ assets) and ``root/strata.csv``."""
    pool, strata = root / "pool.jsonl", root / "strata.csv"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    r = random.Random(seed)
    groups = ["affective_dialogue"] + [t for t in TASK_IDS if t not in AFFECTIVE_DIALOGUE]
    images = [f"art_{i:05d}" for i in range(n_images)]
    header = QuestionFileHeader(generator_version="bench", seed=seed, tasks=list(TASK_IDS),
                                source={"images_dir": "images", "images_dir_relative": "images",
                                        "images_dir_absolute": str(root / "images")})

    # 16 validated variants per group, serialised once with placeholders for the image
    # and question number, then stamped out 50,000 times (fast, still the real format)
    templates = {g: [_line(_question(g, IMAGE, 0, r, pool.stem)).replace(
        f"{IMAGE}:{g}:0", f"{IMAGE}:{g}:{NUMBER}") for _ in range(16)] for g in groups}
    made: set[str] = set()

    def lines() -> Iterator[str]:  # streamed, so memory stays flat while synthesising
        yield _line(header)
        for k in range(n_questions):
            group, image = groups[k % len(groups)], r.choice(images)
            line = r.choice(templates[group]).replace(NUMBER, str(k)).replace(IMAGE, image)
            if group == "jigsaw_puzzle" and image not in made:
                made.add(image)
                for lab in "ABCD":
                    path = root / f"{pool.stem}_assets" / image / f"piece_{lab}.bin"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(b"piece " + lab.encode())
            yield line

    with pool.open("w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(line + "\n" for line in lines())
    strata.write_text("image_id,style,theme\n" + "".join(
        f"{im},{STYLES[i % len(STYLES)]},{THEMES[(i * 7) % len(THEMES)]}\n"
        for i, im in enumerate(images)), encoding="utf-8")
    return pool, strata


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=50_000, help="pool size (default 50000)")
    ap.add_argument("--images", type=int, default=2_500, help="artworks (default 2500)")
    ap.add_argument("--per-task", type=int, default=200, help="N per task (default 200)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/muse-assemble-bench"),
                    help="where the pool and outputs go (rebuilt)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    pool, strata = make_pool(args.questions, args.images, args.workdir)
    print(f"pool: {args.questions} questions over {args.images} images "
          f"({pool.stat().st_size / 2**20:.0f} MiB) made in {time.perf_counter() - t0:.1f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for strategy in ("balanced", "random"):
        out = args.workdir / f"out_{strategy}" / "benchmark.jsonl"
        t0, c0 = time.perf_counter(), time.process_time()
        result = assemble(pool, out, args.per_task, seed=0, strategy=strategy,
                          strata_csv=strata)
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
        verdict = "ok" if took < GOAL_S else "SLOW"
        print(f"{strategy}: {result.n_questions} questions chosen from {args.questions} in "
              f"{took:.2f} s (goal < {GOAL_S:.0f} s: {verdict}; CPU {cpu:.2f} s); "
              f"{result.n_assets} assets copied")
    rss_assemble = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak:.0f} MiB after the pool synthesis, "
          f"{rss_assemble:.0f} MiB after assembling (whole process)")


if __name__ == "__main__":
    main()
