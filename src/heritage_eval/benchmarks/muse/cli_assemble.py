"""``heritage-eval muse assemble``: sample N questions per task from a generated pool.

:data:`COMMAND` is declared (lazily) in :mod:`.commands`. Writes a frozen question file
(the format ``muse generate`` writes, so ``run muse --questions OUT`` reads it), its
``<stem>_assets/`` folder and the balance report ``<stem>_balance.{json,md}``. An
existing ``--out`` is never replaced without ``--overwrite`` (exit 2, nothing changed).
How questions are chosen: :mod:`.assemble` and GENERATION.md, *Assembling a benchmark*.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.option_types import float_option, int_option
from heritage_eval.core.option_checks import DATA_SEED, NumberRange

#: The paper's questions per task (MUSE §3: 2,400 questions over 12 tasks).
PAPER_PER_TASK = 200


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number >= 1")
    return n


def _slack(text: str) -> float:
    """A finite factor from 1 to 1000 (the numeric-option rule: core.option_checks)."""
    return float_option(NumberRange(integer=False, low=1, high=1000))(text)


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--questions", required=True, metavar="POOL.jsonl",
                   help="the question pool: a question file written by 'muse generate' "
                        "(its <stem>_assets/ folder beside it)")
    p.add_argument("--out", required=True, metavar="FILE.jsonl",
                   help="frozen question file to write; used generated images are copied to "
                        "<stem>_assets/ beside it, the balance report to "
                        "<stem>_balance.json and <stem>_balance.md")
    p.add_argument("--per-task", type=_positive, default=PAPER_PER_TASK, metavar="N",
                   help="questions per task (default 200, as in the paper); a task with "
                        "fewer in the pool gets all it has and is reported. Tasks 1-4 share "
                        "one dialogue question; a dialogue counts for each task it reaches")
    p.add_argument("--seed", type=int_option(DATA_SEED, "seed"), default=0,
                   help="assembly seed (default 0); each task's draw depends only on "
                        "(seed, task), so same pool + options + seed = byte-identical files")
    p.add_argument("--strategy", choices=("balanced", "random"), default="balanced",
                   help="balanced (default): round robin over artistic style, then scene "
                        "theme, then difficulty stratum, spread over images; random: "
                        "uniform seeded sample per task (the sampler for a human study, "
                        "as the paper's Fig. 11)")
    p.add_argument("--strata", metavar="FILE.csv",
                   help="CSV with a header row: image_id and style and/or theme columns; "
                        "first source of an image's style and theme")
    p.add_argument("--annotations", metavar="EXPORT.json",
                   help="the Label Studio export the pool came from: style from the task "
                        "data field style / artistic_style / artist, theme from the scene "
                        "label's category in the pool header (used where --strata gives "
                        "none; the pool's scene-classification questions give themes last)")
    p.add_argument("--image-slack", type=_slack, default=1.5, metavar="X",
                   help="balanced: one image gives at most ceil(ceil(n / images) * X) of a "
                        "task's n questions (default 1.5); raised only when nothing else "
                        "is left to reach N")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 1, nothing written) when some task cannot reach N")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out (and its <stem>_assets/ folder and "
                        "balance report); without it an existing --out is refused (exit 2)")


def _usage_problem(args: argparse.Namespace) -> str | None:
    pool, out = Path(args.questions), Path(args.out)
    if not pool.is_file():
        return f"--questions {pool}: no such file"
    if out.resolve() == pool.resolve():
        return f"--out {out} is the pool itself; choose another file"
    if out.resolve().parent / f"{out.stem}_assets" == pool.resolve().parent / f"{pool.stem}_assets":
        return (f"--out {out} would share the pool's assets folder {pool.stem}_assets/; "
                "choose another file name")
    if out.exists() and not args.overwrite:
        what = "a folder" if out.is_dir() else "a file"
        return (f"--out {out} exists ({what}); nothing was changed. Use --overwrite to "
                f"replace it, its {out.stem}_assets/ folder and balance report, or choose "
                "another --out")
    if out.is_dir():
        return f"--out {out} is a folder; give a file name"
    return None


def run(args: argparse.Namespace) -> int:
    """Exit 0: written (tasks short of N are warned about on stderr); 1: ``--strict``
    and a task short of N (nothing written); 2: bad usage or an unreadable pool or
    strata source (nothing written)."""
    from heritage_eval.benchmarks.muse.assemble import AssemblyShort, assemble
    from heritage_eval.benchmarks.muse.assemble_strata import StrataError
    from heritage_eval.core.paths import PathOutsideRoot

    if problem := _usage_problem(args):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        result = assemble(args.questions, args.out, args.per_task, seed=args.seed,
                          strategy=args.strategy, strata_csv=args.strata,
                          annotations=args.annotations, image_slack=args.image_slack,
                          progress=not args.no_progress, strict=args.strict)
    except AssemblyShort as exc:
        print(f"error: {exc}\nnothing written", file=sys.stderr)
        return 1
    except (StrataError, PathOutsideRoot, ValueError, OSError) as exc:
        print(f"error: {exc}\nnothing written", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    for task, row in result.short_tasks.items():
        print(f"warning: {task}: only {row['available']} question(s) in the pool, "
              f"{row['chosen']} chosen (N = {args.per_task})", file=sys.stderr)
    print(f"wrote {result.out_path} ({result.n_questions} questions, {result.n_assets} "
          f"asset files in {result.assets_dir}, strategy {args.strategy}, seed {args.seed})"
          f" in {seconds:.1f} s")
    for task, row in result.report["tasks"].items():
        print(f"  {task:28s} {row['chosen']:5d} of {row['available']:5d}")
    print(f"balance report: {result.report_md} ({result.report_json.name})")
    return 0


COMMAND = Command(
    name="assemble", help="sample N questions per task from a generated pool, balanced and seeded",
    add_args=add_args, handler=run,
    description=("Sample N questions per task (default 200, as the MUSE paper) from a question\n"
                 "pool written by 'muse generate' into a frozen, versioned question file that\n"
                 "'run muse --questions' reads unchanged. balanced: round robin over artistic\n"
                 "style, scene theme and difficulty stratum, spread over images; random:\n"
                 "uniform (human-study sampler). Each task's draw is seeded from (seed, task).\n"
                 "Writes a balance report beside the output. --strata ids not in the pool are\n"
                 "a warning; a --strata table with none in the pool is an error (exit 2).\n\n"
                 "Example:\n  heritage-eval muse assemble --questions "
                 "runs/muse-demo/questions.jsonl \\\n"
                 "      --per-task 2 --out runs/muse-demo/frozen.jsonl")
)
