"""The ``heritage-eval hcsu canonicalize`` command: its options, handler and
:class:`~heritage_eval.benchmarks.registry.Command`.

Kept apart from the other ``hcsu`` tools (:mod:`.cli_tools`, which re-exports
:data:`CANONICALIZE`) so that the command imports only what canonicalizing needs —
OpenCV, numpy and the canonical modules — and not the studies, prompts, pydantic option
models and model back-ends of the commands that run a model: start-up is most of a
run's CPU on a few thousand crops (``bench/bench_canonicalize.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from heritage_eval.benchmarks.hcsu.canonical import DEFAULT_MIN_AREA_FRAC
from heritage_eval.benchmarks.hcsu.commands import TOOLS
from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.option_types import positive_int


def fraction(text: str) -> float:
    """argparse type: a number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text}")
    return value


def canonicalize_args(p: argparse.ArgumentParser) -> None:
    """Options of ``hcsu canonicalize``."""
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


def canonicalize(args: argparse.Namespace) -> int:
    """Run ``hcsu canonicalize``: 0 done, 1 some image failed, 2 refused
    (:class:`~.canonical_batch.CanonicalizeError`: no source, overlapping folders, other
    settings in DST …, printed as ``error: …``)."""
    from heritage_eval.benchmarks.hcsu.canonical import CanonParams
    from heritage_eval.benchmarks.hcsu.canonical_batch import (
        CanonicalizeError,
        canonicalize_tree,
    )

    if args.save_stages and args.variant == "wild-resize":
        print("warning: --save-stages is ignored with --variant wild-resize (it only pads "
              "and resizes: there is no intermediate stage)", file=sys.stderr)
    try:
        report = canonicalize_tree(args.src, args.dst, args.variant,
                                   CanonParams(args.size, args.min_area_frac), args.workers,
                                   args.save_stages, args.force, args.default_domain)
    except CanonicalizeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rate = report.written / report.elapsed_s if report.elapsed_s > 0 else 0.0
    print(f"written {report.written}, skipped {report.skipped} (already done), no glyph "
          f"{len(report.no_glyph)}, errors {len(report.errors)}; {rate:.1f} images/s")
    for note in report.collisions:
        print(f"warning: name collision: {note}", file=sys.stderr)
    for note in report.not_read:
        print(f"warning: {note}", file=sys.stderr)
    for blank in report.no_glyph[:20]:
        print(f"warning: {blank} (not written; its annotation record left out)",
              file=sys.stderr)
    if len(report.no_glyph) > 20:
        print(f"warning: … {len(report.no_glyph) - 20} more blank crop(s) listed in "
              f"{args.dst / 'canonicalize.json'}", file=sys.stderr)
    for err in report.errors[:20]:
        print(f"error: {err}", file=sys.stderr)
    return 1 if report.errors else 0


CANONICALIZE = Command(
    name="canonicalize", help=TOOLS["canonicalize"][0], add_args=canonicalize_args,
    handler=canonicalize,
    description=(
        "Invert rubbings, Otsu threshold, fix polarity from the corners, drop small "
        "connected components, put the real stroke pixels on white, pad to a square and "
        "Lanczos-resize to 256x256. Idempotent; never overwrites an input.\n\n"
        "Example:\n  heritage-eval hcsu canonicalize raw/ canonical/ --save-stages"))
