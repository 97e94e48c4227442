"""``heritage-eval export predictions RUN_DIR --out DIR`` (wired into ``cli/main.py``).

Light at import: the export code is imported in the handler.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from heritage_eval.benchmarks.registry import Command


def _add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", type=Path, metavar="RUN_DIR",
                   help="an Ancient-Bench run folder (samples.jsonl, summary.json)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="predictions root to write: DIR/<model>/<category>/results/"
                        "<image stem>.json")
    p.add_argument("--overwrite", action="store_true",
                   help="write into a non-empty --out (files of the same name are "
                        "replaced, other files are kept)")


def _handler(args: argparse.Namespace) -> int:
    from heritage_eval.report.export_predictions import ExportError, export_predictions
    from heritage_eval.report.runs import RunReadError

    out: Path = args.out
    if out.exists() and not out.is_dir():
        print(f"error: --out {out} exists and is not a folder", file=sys.stderr)
        return 2
    if out.is_dir() and any(out.iterdir()) and not args.overwrite:
        print(f"error: --out {out} is not empty; nothing was written. Use another --out, "
              "or --overwrite to write into it anyway", file=sys.stderr)
        return 2
    try:
        result = export_predictions(args.run, out)
    except (ExportError, RunReadError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for b in result.blanks[:20]:
        print(f"warning: {b.model} / {b.id}: written as an empty answer ({b.reason})",
              file=sys.stderr)
    if result.blanks:
        print(f"warning: {len(result.blanks)} record(s) without an answer written as "
              f'{{"answer": ""}} (the official evaluator scores them 0); listed in '
              f"{result.errors_file}", file=sys.stderr)
    for model, rid, why in result.skipped[:20]:
        print(f"warning: {model} / {rid}: not exported ({why})", file=sys.stderr)
    if len(result.skipped) > 20:
        print(f"warning: … and {len(result.skipped) - 20} more record(s) not exported",
              file=sys.stderr)
    print(f"wrote {len(result.paths)} prediction file(s) under {out}"
          + (f"; {len(result.skipped)} record(s) not exported" if result.skipped else ""))
    print(f"re-score: heritage-eval score ancient-bench --data GT_DIR --predictions {out} "
          "--out RUN_DIR", file=sys.stderr)
    return 0 if result.paths or not result.skipped else 1


EXPORT_PREDICTIONS = Command(
    name="predictions", help="write a run's answers in the official Ancient-Bench "
                             "predictions layout",
    add_args=_add_args, handler=_handler,
    description=(
        "Write the raw answers of an Ancient-Bench run folder in the official predictions\n"
        "layout, OUT/<model>/<category>/results/<image stem>.json holding\n"
        "{\"answer\": ...}, so that the official evaluator (or 'heritage-eval score\n"
        "ancient-bench --predictions OUT') can score them. Every ground-truth line gets\n"
        "its file: error records and predictions that were missing are written as\n"
        "{\"answer\": \"\"} and listed in OUT/export_errors.jsonl. Refuses a non-empty\n"
        "--out without --overwrite, and runs of other benchmarks (exit status 2)."))
