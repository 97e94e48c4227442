"""``heritage-eval compare RUN_DIR... --out DIR`` (wired into ``cli/main.py``).

Light at import: the comparison code (pydantic, numpy, scipy) is imported in the
handler, so ``heritage-eval --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.option_types import float_option
from heritage_eval.core.option_checks import NumberRange

if TYPE_CHECKING:
    from heritage_eval.report.compare import Comparison

FORMATS = ("md", "csv", "tex")


def _add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="run folders of one benchmark (each holds samples.jsonl and "
                        "summary.json; a folder may hold several models)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="output folder: compare.md, models.*, groups_<key>.*, paired.csv, "
                        "disagreements.jsonl, compare.json; a new or empty folder, or "
                        "an earlier compare's --out")
    p.add_argument("--overwrite", action="store_true",
                   help="write into a non-empty --out that holds no earlier comparison "
                        "(compare's files are replaced, other files are kept)")
    p.add_argument("--reference", default=None, metavar="MODEL",
                   help="model the others are compared with: its name as in compare.md or "
                        "its model spec (default: the first model of the first run)")
    p.add_argument("--threshold", type=float_option(NumberRange(integer=False, low=0)),
                   default=0.1, metavar="X",
                   help="a record counts as a disagreement on a non-0/1 metric when the "
                        "scores differ by at least X in score units (0.1 = 10 points on a "
                        "percent metric); 0/1 metrics: any difference (default: 0.1)")
    p.add_argument("--samples", choices=("common", "all"), default="common",
                   help="'common': score every model on the samples all of them counted "
                        "(a sample some model left out — network, server or data error, or "
                        "a model failure under --model-failures exclude — is dropped for all; "
                        "its statistics are recomputed and what was dropped is named); "
                        "'all': each run's own numbers, marked NOT COMPARABLE when the "
                        "sample sets differ (default: common)")
    p.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS),
                   metavar="FMT", help="table formats: md csv tex (default: all three)")


def _handler(args: argparse.Namespace) -> int:
    from heritage_eval.report.compare import CompareError, compare_runs, write_comparison
    from heritage_eval.report.compare_out import OutFolderError, check_out
    from heritage_eval.report.runs import RunReadError

    if not args.threshold > 0:
        print(f"error: --threshold must be > 0, not {args.threshold}", file=sys.stderr)
        return 2
    if args.out.resolve() in {r.resolve() for r in args.runs}:
        print(f"error: --out {args.out} is one of the run folders; choose another folder",
              file=sys.stderr)
        return 2
    try:
        check_out(args.out, args.overwrite)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a damaged samples.jsonl is refused
            comp = compare_runs(args.runs, reference=args.reference,
                                threshold=args.threshold, samples=args.samples)
    except (CompareError, RunReadError, OutFolderError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for note in comp.warnings:
        print(f"warning: {note}", file=sys.stderr)
    try:
        paths = write_comparison(comp, args.out, args.formats)
    except OSError as exc:
        print(f"error: --out {args.out}: cannot write the comparison "
              f"({exc.strerror or exc}{': ' + str(exc.filename) if exc.filename else ''})",
              file=sys.stderr)
        return 2
    _print_paired(comp)
    print(f"wrote {len(paths)} file(s) to {args.out} (start with {paths[0]})",
          file=sys.stderr)
    return 0


def _print_paired(comp: Comparison) -> None:
    """The console summary: models, conditions, one line per paired difference with the
    marks of ``compare.md`` (:func:`~heritage_eval.report.compare_tables.paired_marks`)
    and, when a "†" is shown, its one-line explanation."""
    from heritage_eval.report.compare_tables import flags_note, paired_marks

    print(f"{comp.benchmark}: {len(comp.models)} model(s) "
          f"({', '.join(m.name for m in comp.models)}); reference {comp.reference}; "
          f"{len(comp.disagreements)} disagreement(s)")
    if comp.condition_key is not None:
        print(f"  per {comp.condition_key} (study folders: nothing is pooled over "
              f"conditions): {', '.join(comp.conditions)}")
    present: dict[str, None] = {}
    for p in comp.paired:
        where = "" if p.condition is None else f"{comp.condition_key} = {p.condition}: "
        if p.difference is None:
            print(f"  {where}{p.model} - {p.reference}, {p.label}: no record both models "
                  "scored (n 0)")
            continue
        ci_mark, p_mark, shown = paired_marks(p)
        present.update(dict.fromkeys(f for f in shown if (
            p_mark if f.startswith("p_floor:") else ci_mark)))
        spec = next(s for s in comp.metrics if s.name == p.metric)
        f = f".{spec.decimals}f"
        ci = ("—" if p.ci_low is None or p.ci_high is None else
              f"[{p.ci_low * spec.scale:{f}}, {p.ci_high * spec.scale:{f}}]")
        pv = "—" if p.p_value is None else f"{p.p_value:.4f}"
        print(f"  {where}{p.model} - {p.reference}, {p.label}: "
              f"{p.difference * spec.scale:{f}} {ci}{ci_mark}, p = {pv}{p_mark}, n = {p.n}")
    if present:
        print(f"  {flags_note(list(present), where='')}")


COMPARE = Command(
    name="compare", help="compare runs of one benchmark: models table with intervals, "
                         "paired differences, samples where models disagree",
    add_args=_add_args, handler=_handler,
    description=(
        "Compare the models of several run folders of one benchmark (any benchmark; a\n"
        "folder may hold several models). Writes to --out:\n"
        "  compare.md             all tables, paired differences against the reference\n"
        "                         model, the first 50 disagreements\n"
        "  models.{md,csv,tex}    each metric with its 95 % interval and n, invalid rate,\n"
        "                         error counts\n"
        "  groups_<key>.{md,csv,tex}  models x group values (Ancient-Bench media: the\n"
        "                         paper's Table 3); best bold, second underlined\n"
        "  paired.csv             difference, interval, p-value, n per model and metric\n"
        "  disagreements.jsonl    every record whose score differs from the reference's\n"
        "                         (0/1 metrics: any difference; others: by --threshold)\n"
        "  compare.json           the files written, so a later compare may replace them\n"
        "Study folders (hcsu k-sweep, shot-sweep, ablation, robustness) are compared per\n"
        "condition: a block of rows per K / shot count / mode / image variant, paired\n"
        "differences within a condition, nothing pooled; a condition that not every run\n"
        "has is left out (warning).\n"
        "--out must be new, empty or an earlier comparison's folder (else --overwrite).\n"
        "Exit status 2 for unusable input (not a run folder, a run folder given twice, a\n"
        "samples.jsonl damaged or not holding what its summary.json counts, runs of two\n"
        "benchmarks, unknown --reference, study folders with no condition in common, a\n"
        "non-empty --out)."))
