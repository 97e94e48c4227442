"""``heritage-eval muse generate``: build a MUSE question file from annotations."""

from __future__ import annotations

import argparse
import sys
import time

from heritage_eval.benchmarks.muse.generate import GenerationFailed, generate_benchmark
from heritage_eval.benchmarks.muse.labelstudio import LabelStudioFormatError
from heritage_eval.benchmarks.muse.params import GenerationParams, apply_overrides, knob_lines
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.benchmarks.registry import Command, register_group_command

GROUP_HELP = "MUSE: generate questions from annotations, analyse runs"


def _grid(text: str) -> list[int]:
    rows, sep, cols = text.lower().partition("x")
    if not sep or not rows.strip().isdigit() or not cols.strip().isdigit():
        raise argparse.ArgumentTypeError(f"grid {text!r}: expected ROWSxCOLS, e.g. 3x4")
    return [int(rows), int(cols)]


def _knob_names() -> str:
    names = [line.split(" = ", 1)[0] for line in knob_lines()]
    return ", ".join(names)


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--annotations",
                   help="Label Studio JSON export with the MUSE annotation fields (required)")
    p.add_argument("--images",
                   help="folder holding the annotated images (data.image paths are looked "
                        "up relative to it, then by file name); questions refer to them as "
                        "@images/<path in this folder> (required)")
    p.add_argument("--out",
                   help="question file to write (JSONL); generated images go to "
                        "<stem>_assets/ beside it (required)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of every random choice (default 0); same seed, same files")
    p.add_argument("--tasks", nargs="+", choices=TASK_IDS, metavar="TASK",
                   help="tasks to generate (default: all 12); choosing one of tasks 1-4 "
                        "includes the dialogue turns before it. Choices: "
                        + ", ".join(TASK_IDS))
    p.add_argument("--jigsaw-grid", type=_grid, action="append", metavar="ROWSxCOLS",
                   help="jigsaw grid(s) to draw from, repeatable (default: 3x4 4x4 3x6 4x5 "
                        "3x7)")
    p.add_argument("--culture-clusters", type=int, metavar="K",
                   help="k-means clusters of culture labels (default 15, as the paper)")
    p.add_argument("--draw-boxes", action="store_true",
                   help="also send a copy of the image with the queried boxes drawn "
                        "(coordinates are always in the prompt)")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="TASK.KNOB=JSON",
                   help="set any generator knob, repeatable, e.g. "
                        "activity_description.n_options=4 or "
                        "'jigsaw_puzzle.distractor_types=[\"same_image_piece\"]'. Knobs: "
                        + _knob_names() + " (defaults: --list-knobs)")
    p.add_argument("--list-knobs", action="store_true",
                   help="print every knob with its default value and exit")
    p.add_argument("--copy-images", action="store_true",
                   help="copy the source artworks into <stem>_assets/images/ so the "
                        "question file and its assets folder form a self-contained package")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 1, nothing written) if any annotation is invalid or any "
                        "image is missing or unreadable, instead of skipping that image")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    """Exit 0: written (warnings on stderr when images were skipped); 1: nothing could be
    generated, or a problem under --strict (nothing written); 2: bad usage or an
    unreadable export."""
    if args.list_knobs:
        print("\n".join(knob_lines()))
        return 0
    missing = [f"--{n}" for n in ("annotations", "images", "out") if not getattr(args, n)]
    if missing:
        print(f"error: the following arguments are required: {', '.join(missing)}",
              file=sys.stderr)
        return 2
    extra = list(args.overrides)
    if args.jigsaw_grid:
        extra.append(f"jigsaw_puzzle.grids={args.jigsaw_grid}")
    if args.culture_clusters is not None:
        extra.append(f"cultural_identification.n_clusters={args.culture_clusters}")
    if args.draw_boxes:
        extra.append("draw_boxes=true")
    try:
        params = apply_overrides(GenerationParams(), extra)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        report = generate_benchmark(args.annotations, args.images, args.out, seed=args.seed,
                                    tasks=args.tasks, params=params,
                                    progress=not args.no_progress,
                                    copy_images=args.copy_images, strict=args.strict)
    except GenerationFailed as exc:
        print(f"error: {exc}\nnothing written", file=sys.stderr)
        return 1
    except (LabelStudioFormatError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    for line in report.errors:
        print(f"skipped image: {line}", file=sys.stderr)
    for line in report.warnings:
        print(f"warning: {line}", file=sys.stderr)
    print(f"wrote {report.out_path} ({report.n_questions} questions from {report.n_images} "
          f"images, {report.n_assets} asset images in {report.assets_dir}) in {seconds:.1f} s")
    for task, n in report.turns_per_task.items():
        skips = report.skipped.get(task, {})
        note = "; skipped: " + ", ".join(f"{r} ×{k}" for r, k in skips.items()) if skips else ""
        print(f"  {task:28s} {n:5d}{note}")
    if report.errors:
        print(f"warning: {len(report.errors)} problem(s); {report.n_images} of "
              f"{report.n_images_in_export} annotated images used (see 'skipped image' "
              "lines above; --strict makes this an error)", file=sys.stderr)
    return 0


register_group_command("muse", GROUP_HELP, Command(
    name="generate", help="generate MUSE questions (12 tasks) from Label Studio annotations",
    add_args=add_args, handler=run,
    description="Generate a versioned MUSE question file (JSONL + assets folder) from a "
                "Label Studio export of MUSE annotations. Every random choice is seeded "
                "from (seed, image id, task): the same inputs give byte-identical files."))
