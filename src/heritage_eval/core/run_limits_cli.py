"""The run-limit options and warnings of the run commands: ``--warn-downscale`` (the
threshold for heavily downscaled images) and the end-of-run lines of
``summary.json["run_limits"]`` (answers cut at ``--max-tokens``, images downscaled)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from heritage_eval.core.run_limits import DEFAULT_WARN_DOWNSCALE, run_limit_lines


def add_run_limit_args(p: argparse.ArgumentParser) -> None:
    """``--warn-downscale F``: the end-of-run warning threshold for downscaled images."""
    p.add_argument("--warn-downscale", type=_factor, default=DEFAULT_WARN_DOWNSCALE,
                   metavar="F",
                   help="after the run, warn about samples whose image was sent more than F "
                        "times smaller than the original on its longest side (by --max-side "
                        "/ --max-pixels); the count is summary.json's run_limits.downscaled, "
                        "next to the answers cut at --max-tokens (run_limits.truncated). "
                        "Does not change results (default: 4)")


def _factor(text: str) -> float:
    """A finite factor from 1 to 10**6 (the numeric-option rule: core.option_checks)."""
    from heritage_eval.core.option_checks import NumberRange, OptionValueError, parse_number

    try:
        return float(parse_number(text, NumberRange(integer=False, low=1, high=1e6)))
    except OptionValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def warn_downscale_of(opts: argparse.Namespace) -> float:
    """``--warn-downscale`` of ``opts`` (the default for namespaces without it)."""
    value = getattr(opts, "warn_downscale", None)
    return DEFAULT_WARN_DOWNSCALE if value is None else float(value)


def print_run_limits(summary: dict[str, Any]) -> None:
    """The end-of-run warnings of ``summary["run_limits"]`` on stderr: answers cut at
    ``--max-tokens`` and images downscaled past ``--warn-downscale`` (nothing when none);
    every ``run`` handler calls it after its tables."""
    for line in run_limit_lines(summary.get("run_limits") or {}):
        print(f"warning: {line}", file=sys.stderr)
