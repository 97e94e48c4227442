"""``heritage-eval muse analyze``: tables, correlations and figures over several MUSE runs.

Reads each run folder's ``summary.json`` (its ``results`` block and ``provenance``, kept
by the platform envelope); :data:`COMMAND` is declared lazily in :mod:`.commands`.
The analysis (pandas, SciPy, matplotlib) is imported when the command runs; importing
this module only checks that those are installed (a missing one ends the command with
the 'muse' extra's install line, ``--help`` included).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.extra_modules import require_modules
from heritage_eval.cliargs.option_types import positive_int

#: The optional top-level modules the analysis imports (the 'muse' extra's).
NEEDS = ("pandas", "scipy", "matplotlib")
require_modules(*NEEDS)


def add_args(p: argparse.ArgumentParser) -> None:
    """The options of ``muse analyze``."""
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="run folders written by 'heritage-eval run muse' (one model each; "
                        "each folder at most once). Runs covering fewer tasks than the "
                        "others are marked † and not ranked; runs from different question "
                        "files are flagged")
    p.add_argument("--out", required=True, type=Path,
                   help="output folder: analysis.md, CSV tables, PNG figures")
    p.add_argument("--external", type=Path, default=None, metavar="CSV",
                   help="external benchmark scores to correlate with the MUSE tasks: a CSV "
                        "with a 'model' column (names as in the run summaries, each once) "
                        "and one numeric column per benchmark (blank = missing; a column "
                        "with text is ignored with a warning)")
    p.add_argument("--top", type=positive_int, default=5, metavar="N",
                   help="how many ranked models (Table 2 order) the radar chart draws "
                        "(default: 5)")


def analyze_muse(args: argparse.Namespace) -> int:
    """Handler of ``muse analyze``; returns the exit code (2 for unusable input)."""
    from heritage_eval.benchmarks.muse.analysis.analyze import analyze
    from heritage_eval.benchmarks.muse.analysis.correlations import ExternalScoresError
    from heritage_eval.benchmarks.muse.analysis.tables import RunFolderError

    try:
        out = analyze(args.runs, args.out, args.external, args.top)
    except (RunFolderError, ExternalScoresError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in out.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in out.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {len(out.files)} files to {args.out} (see analysis.md)")
    return 0


COMMAND = Command(
    name="analyze", help="tables, correlations and figures over several MUSE runs",
    add_args=add_args, handler=analyze_muse,
    description="Multi-model MUSE analysis: Table 2 (models x 12 tasks; runs lacking "
                "tasks are marked † and not ranked), capability / level / granularity "
                "aggregates, open-answer chance floors, Spearman correlations between "
                "tasks and with external benchmarks (heatmaps), chosen distractor types "
                "for tasks 5, 6 and 11 (percent and counts), invalid rates and a radar "
                "chart of the top ranked models. Exit status 2 for unusable input.")
