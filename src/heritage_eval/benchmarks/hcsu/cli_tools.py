"""The ``heritage-eval hcsu`` tools that evaluate nothing: ``canonicalize`` (paper §3.3),
``write-descriptions`` (model-written class descriptions for the ablation) and
``report`` (merge run folders of one command into one table). The studies are in
:mod:`.cli_studies`; every ``hcsu`` command is declared in :mod:`.commands`."""

from __future__ import annotations

import argparse
import sys

from heritage_eval.benchmarks.hcsu.canonical import CanonParams
from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree
from heritage_eval.benchmarks.hcsu.cli_args import (
    WRITE_OPTIONS,
    canonicalize_args,
    write_descriptions_args,
)
from heritage_eval.benchmarks.hcsu.commands import TOOLS
from heritage_eval.benchmarks.hcsu.generated import write_descriptions
from heritage_eval.benchmarks.hcsu.option_models import WriteOptions
from heritage_eval.benchmarks.hcsu.options import WRITE, guarded
from heritage_eval.benchmarks.hcsu.report import add_report_args, report
from heritage_eval.benchmarks.hcsu.runio import engine_for, load_data, model_for
from heritage_eval.benchmarks.registry import AddArgs, Command, Handler
from heritage_eval.core.store import RunFolder


def _canonicalize(args: argparse.Namespace) -> int:
    if args.save_stages and args.variant == "wild-resize":
        print("warning: --save-stages is ignored with --variant wild-resize (it only pads "
              "and resizes: there is no intermediate stage)", file=sys.stderr)
    report = canonicalize_tree(args.src, args.dst, args.variant,
                               CanonParams(args.size, args.min_area_frac), args.workers,
                               args.save_stages, args.force, args.default_domain)
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


def _write(args: argparse.Namespace) -> int:
    config = WRITE_OPTIONS.config(args)
    opts = config.options
    if not isinstance(opts, WriteOptions):
        raise TypeError(f"expected WriteOptions, got {type(opts).__name__}")
    backend = model_for(config.model, WRITE)
    folder = RunFolder(config.out_dir())
    ds = load_data(opts, config.out_dir())
    engine = engine_for(config, folder, backend)
    good, errors = write_descriptions(ds, engine, opts.max_words, config.output.limit)
    path = folder.write_json("generated_descriptions.json", good)
    for key, err in errors.items():
        print(f"error: {key}: {err}", file=sys.stderr)
    print(f"{len(good)} descriptions written to {path}")
    return 1 if errors else 0


def _command(name: str, add_args: AddArgs, handler: Handler, description: str = ""
             ) -> Command:
    help_text = TOOLS[name][0]
    return Command(name=name, help=help_text, add_args=add_args, handler=guarded(handler),
                   description=description or help_text)


CANONICALIZE = _command(
    "canonicalize", canonicalize_args, _canonicalize,
    "Invert rubbings, Otsu threshold, fix polarity from the corners, drop small connected "
    "components, put the real stroke pixels on white, pad to a square and Lanczos-resize to "
    "256x256. Idempotent; never overwrites an input.\n\n"
    "Example:\n  heritage-eval hcsu canonicalize raw/ canonical/ --save-stages")
WRITE_DESCRIPTIONS = _command("write-descriptions", write_descriptions_args, _write)
REPORT = _command("report", add_report_args, report)
