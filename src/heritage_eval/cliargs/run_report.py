"""What a command prints after a benchmark run (``run NAME``, ``muse import-human``): the
benchmark's table and the headline with 95 % intervals on stdout; its diagnostics, the
truncation / model-failure / excluded-sample lines (``outcomes_lines``), the run-limit
warnings, the PARTIAL note, the cache line, the run folder and a
nothing-answered error on stderr."""

from __future__ import annotations

import sys
from pathlib import Path

from heritage_eval.core.benchmark import Benchmark
from heritage_eval.core.engine import headline_lines
from heritage_eval.core.failure_counts import outcomes_lines
from heritage_eval.core.run_limits import print_run_limits
from heritage_eval.core.run_output import EvalOutput, cache_line


def print_outcome(bench: Benchmark, out: EvalOutput,
                  cache: str | Path | None = "cache.sqlite") -> int:
    """Print a finished run of ``bench`` (see the module docstring); returns the exit
    status: 0, or 1 when the run was stopped or nothing was answered."""
    if out.summary.get("run_stopped"):
        print(f"error: the run was stopped: {out.summary['run_stopped']}; the samples not "
              f"answered are errors (not cached: re-run to complete); run folder written "
              f"to {out.out}", file=sys.stderr)
        return 1
    bench.print_result(out.summary)
    for line in headline_lines(out.summary):
        print(line)
    bench.print_diagnostics(out.summary, out.kept_records)
    for line in outcomes_lines(out.summary):  # the platform's rule, for every benchmark
        print(f"warning: {line}", file=sys.stderr)
    print_run_limits(out.summary)
    if out.summary.get("partial"):
        print("note: --limit run: results are PARTIAL (marked so in summary.md and "
              "summary.json)", file=sys.stderr)
    if (cached := cache_line(out.summary, cache)) is not None:
        print(cached, file=sys.stderr)
    print(f"run folder: {out.out}", file=sys.stderr)
    message = bench.nothing_answered_message(out.records) if out.status == 1 else None
    if message:
        print(f"error: {message}; run folder written to {out.out}", file=sys.stderr)
    return out.status
