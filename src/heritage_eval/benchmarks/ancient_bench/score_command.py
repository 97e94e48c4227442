"""``heritage-eval score ancient-bench``: its parser and its command
(:data:`SCORE_COMMAND`), light on purpose.

Building the parser imports neither pydantic nor the scoring code, and the handler
imports the scoring code (:mod:`~heritage_eval.benchmarks.ancient_bench.score`) only when
the command runs, so that ``score ancient-bench --help`` and the command's start-up stay
within 0.3 s of ``python -c pass`` (issue 23). The scoring itself:
:func:`heritage_eval.benchmarks.ancient_bench.score.score_predictions`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.option_names import (
    FLAG_HELP,
    MISSING_POLICIES,
    PROTOCOL_NAMES,
)
from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.common import add_run_folder_args


def add_protocol_args(p: argparse.ArgumentParser) -> None:
    """``--protocol`` preset plus one switch per normalisation flag (overrides the preset)."""
    g = p.add_argument_group("scoring protocol")
    g.add_argument("--protocol", choices=sorted(PROTOCOL_NAMES), default="official",
                   help="normalisation preset: 'official' = the official evaluator's config "
                        "(ignore_st=false, ignore_punc=true, ignore_space=true, "
                        "ignore_case=false); 'paper' = the paper's appendix A.6 (also "
                        "lower-cases and collapses □ runs) (default: official)")
    for name, text in FLAG_HELP.items():
        g.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None,
                       action=argparse.BooleanOptionalAction,
                       help=f"{text} (default: from --protocol)")


def add_categories_arg(p: argparse.ArgumentParser) -> None:
    """``--categories NAME…``: folder or paper names of the media to keep."""
    p.add_argument("--categories", nargs="+", action="extend", default=None, metavar="NAME",
                   help="only these media: folder names or paper names "
                        f"({', '.join(MEDIA.values())}) (default: all found)")


def add_score_options(p: argparse.ArgumentParser) -> None:
    """Every option of ``score ancient-bench`` except ``--resume`` / ``--overwrite``."""
    p.add_argument("--data", required=True, type=Path,
                   help="ground-truth root: <category>/conv.jsonl (images not needed)")
    p.add_argument("--predictions", required=True, type=Path,
                   help="predictions root in the official layout: "
                        "<root>/<model>/<category>/results/<stem>.json with {\"answer\": ...}")
    p.add_argument("--out", required=True, type=Path,
                   help="output folder: samples.jsonl, summary.json, summary.md")
    p.add_argument("--models", nargs="+", action="extend", default=None, metavar="NAME",
                   help="model folders to score, several as 'a,b' or 'a b', in any order "
                        "(default: every folder under --predictions)")
    p.add_argument("--missing", choices=MISSING_POLICIES, default="empty",
                   help="a prediction file that is missing, or that exists but gives no "
                        "answer (malformed JSON, no string 'answer', not UTF-8 …): "
                        "'empty' scores it as an empty answer (0), the model's failure "
                        "kept in its denominator, as the official evaluator scores an "
                        "empty answer; 'skip' leaves it out of the means, which gives the "
                        "official evaluator's numbers on a set with gaps (over the lines "
                        "that have a prediction); 'error' stops before writing anything, "
                        "as the official evaluator stops at the first missing file (exit "
                        "1; 2 for a file that cannot be used); each is listed "
                        "(default: empty)")
    add_categories_arg(p)
    add_protocol_args(p)


def add_score_args(p: argparse.ArgumentParser) -> None:
    """Every option of ``score ancient-bench``, ``--resume`` / ``--overwrite`` included."""
    add_score_options(p)
    add_run_folder_args(p)


def score_handler(opts: argparse.Namespace) -> int:
    """Handler of ``score ancient-bench``: score, print the table and the headline.
    Exit status: 0 done, 1 ``--missing error`` with files absent, 2 a usage error (a
    prediction file that cannot be used under ``--missing error`` among them) or a
    run-folder conflict (nothing written)."""
    from heritage_eval.benchmarks.ancient_bench.score import score_predictions

    try:
        out = score_predictions(opts)
    except Exception as exc:
        if _raised(exc, "heritage_eval.benchmarks.ancient_bench.predictions",
                   "MissingPredictionsError"):
            print(f"error: {exc}\n(use --missing empty or --missing skip to score anyway)",
                  file=sys.stderr)
            return 1
        if _raised(exc, "heritage_eval.core.benchmark", "UsageError") or _raised(
                exc, "heritage_eval.core.rundir", "RunFolderConflict", "RunFolderBusy") or \
                _raised(exc, "heritage_eval.benchmarks.ancient_bench.predictions",
                        "UnusablePredictionsError"):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise
    from heritage_eval.benchmarks.ancient_bench.console import print_score_result
    from heritage_eval.core.engine import headline_lines

    print_score_result(out.summary, out.out)
    for line in headline_lines(out.summary):
        print(line)
    return out.status


def _raised(exc: BaseException, module: str, *names: str) -> bool:
    """Whether ``exc`` is one of the classes ``names`` of ``module``. A module not loaded
    yet raised nothing: it is not imported for the test (the scoring code's exceptions
    are not imported before the scoring starts)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(exc, tuple(getattr(loaded, n) for n in names))


SCORE_COMMAND = Command(
    name="ancient-bench", help="score Ancient-Bench predictions in the official layout",
    add_args=add_score_args, handler=score_handler,
    description="Score predictions made elsewhere (<root>/<model>/<category>/results/"
                "<stem>.json) against the ground truth, exactly as the official evaluator "
                "does; one table row per model.")
