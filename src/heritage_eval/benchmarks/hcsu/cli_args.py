"""Argument builders of the ``hcsu`` tool commands (:mod:`.cli_tools`,
:mod:`.cli_studies`) and their argparse types. The studies also get ``--resume`` /
``--overwrite`` (what to do when ``--out`` holds a run of other settings) and keep their
option defaults (:func:`~heritage_eval.core.engine.record_defaults`), so that an option
added later, at its default, does not make an older study folder "another
configuration"."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from heritage_eval.benchmarks.hcsu.canonical import DEFAULT_MIN_AREA_FRAC
from heritage_eval.benchmarks.hcsu.options import (
    DESCRIPTION,
    DISCRIMINATION,
    add_description_options,
    add_discrimination_options,
)
from heritage_eval.benchmarks.hcsu.pipeline import PAPER_TEMPERATURE
from heritage_eval.benchmarks.hcsu.runio import (
    LIMIT_HELP,
    add_bertscore_args,
    add_data_args,
    add_judge_args,
    add_task_args,
)
from heritage_eval.benchmarks.hcsu.studies import PAPER_KS, PAPER_SHOTS
from heritage_eval.cli.common import add_model_args, positive_int
from heritage_eval.core.engine import add_run_folder_args, record_defaults
from heritage_eval.core.list_option import add_list_option


def ints(text: str) -> list[int]:
    """argparse type: ``"2-10"`` or ``"1,2,4"`` -> list of positive ints."""
    out: list[int] = []
    try:
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            out += list(range(int(lo), int(hi) + 1)) if sep else [int(lo)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like '2-10' or '1,2,4', got "
                                         f"{text!r}") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
    return out


def fraction(text: str) -> float:
    """argparse type: a number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text}")
    return value


TASKS = ("discrimination", "description")


def canonicalize_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("src", type=Path, help="source folder (e.g. the raw Wild images, with "
                   "bei/ and tie/ subfolders); never modified")
    p.add_argument("dst", type=Path, help="destination folder (must not overlap SRC)")
    p.add_argument("--variant", choices=("canonical", "wild-resize"), default="canonical",
                   help="canonical: the full §3.3 pipeline (default); wild-resize: pad to a "
                        "square and resize only")
    p.add_argument("--size", type=positive_int, default=256,
                   help="output side in pixels, >= 1 (default: 256)")
    p.add_argument("--min-area-frac", type=fraction, default=DEFAULT_MIN_AREA_FRAC,
                   help="drop ink components smaller than this fraction of the image area, "
                        f"in [0, 1); 0 keeps every component (default: {DEFAULT_MIN_AREA_FRAC})")
    p.add_argument("--default-domain", choices=("tie", "bei"), default="tie",
                   help="domain of images not under a bei/ or tie/ top folder (default: tie)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help=f"processes, >= 1 (default: all cores, here {os.cpu_count()})")
    p.add_argument("--save-stages", action="store_true",
                   help="also save the intermediate stages of the canonical variant under "
                        "DST/_stages/<domain>/<class>/<stage>/ (stages: inverted (Bei only), "
                        "binary, denoised, masked)")
    p.add_argument("--force", action="store_true",
                   help="rewrite existing outputs (inputs are never touched)")


def k_sweep_args(p: argparse.ArgumentParser) -> None:
    add_task_args(p, DISCRIMINATION, lambda q: q.add_argument(
        "--ks", type=ints, default=list(PAPER_KS),
        help="K values, e.g. '2-10' or '2,4,8' (default: 2-10, as in the paper)"),
        omit=("--k",))
    add_run_folder_args(p)
    record_defaults(p)


def shot_sweep_args(p: argparse.ArgumentParser) -> None:
    add_task_args(p, DESCRIPTION, lambda q: q.add_argument(
        "--shot-list", type=ints, default=list(PAPER_SHOTS),
        help="shot counts to run (default: 1,2,3,4,8, as in the paper)"),
        omit=("--shots",))
    add_run_folder_args(p)
    record_defaults(p)


def ablation_args(p: argparse.ArgumentParser) -> None:
    # every description variant is run (generated ones with --generated-descriptions)
    add_task_args(p, DISCRIMINATION, omit=("--descriptions",))
    add_run_folder_args(p)
    record_defaults(p)


def robustness_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    p.add_argument("--canonical", type=Path, default=None, metavar="DIR",
                   help="canonical (Origin) copy of the same classes, e.g. the release's "
                        "processed bei/ tie/; default: canonicalize --data into OUT/conditions")
    add_list_option(p, "--tasks", TASKS, default=list(TASKS),
                    help="tasks to run (default: both)")
    p.add_argument("--description-model", default=None, metavar="MODEL",
                   help="model for the description task (default: --model)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="processes for making the Wild-Resize / canonical copies "
                        "(default: all cores)")
    add_discrimination_options(p)
    add_description_options(p)
    add_judge_args(p)
    add_bertscore_args(p)
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=256, limit_help=LIMIT_HELP)
    add_run_folder_args(p)
    record_defaults(p)


def write_descriptions_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p, per_class=False)
    p.add_argument("--max-words", type=positive_int, default=50,
                   help="word limit (default: 50)")
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=256,
                   limit_help="describe only the first N classes (sorted by class key; "
                              "for a quick try)")
