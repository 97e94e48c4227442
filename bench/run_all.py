"""Run every benchmark in ``bench/`` and end with the lines that state a goal.

Each ``bench/bench_*.py`` runs as its own process with this Python (its output is shown
as it comes); a line stating a goal and ``met`` / ``NOT met`` is collected, and the run
ends with all of them grouped per benchmark, so ``make bench`` prints every ratio with
its goal in one place (issue 11, "Done when"). Exit status 1 if a benchmark failed (the
others still run); a goal that is not met does not fail the run: the numbers are the
result.

Usage: ``python bench/run_all.py [--only NAME ...] [--skip NAME ...] [--quick]`` (NAME: a
file name such as ``bench_run_scale.py`` or its stem). ``--quick`` sets ``BENCH_QUICK=1``
in the benchmarks' environment; those that read it run a reduced version (e.g.
``bench_coverage.py``: 300 simulated data sets per scenario instead of 2,000).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: a line stating a goal and whether it is met (not a table header naming the goal)
_GOAL = re.compile(r"goal.*\b(met|not met)\b", re.IGNORECASE)


def _names(values: list[str]) -> set[str]:
    return {Path(v).stem for v in values}


def run_one(path: Path, quick: bool = False) -> tuple[int, list[str], float]:
    """Run one benchmark (``quick``: with ``BENCH_QUICK=1``); return (exit status, its
    goal lines, wall seconds)."""
    start = time.perf_counter()
    env = dict(os.environ, BENCH_QUICK="1") if quick else None
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1, env=env)
    assert proc.stdout is not None
    goals = []
    for line in proc.stdout:
        sys.stdout.write(line)
        if _GOAL.search(line):
            goals.append(line.rstrip())
    return proc.wait(), goals, time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", default=[], metavar="NAME",
                    help="run only these benchmarks")
    ap.add_argument("--skip", nargs="+", default=[], metavar="NAME",
                    help="leave these benchmarks out")
    ap.add_argument("--quick", action="store_true",
                    help="reduced runs where a benchmark supports it (BENCH_QUICK=1)")
    args = ap.parse_args()
    only, skip = _names(args.only), _names(args.skip)
    paths = [p for p in sorted(HERE.glob("bench_*.py"))
             if (not only or p.stem in only) and p.stem not in skip]
    results = []
    for path in paths:
        print(f"== {path.name}", flush=True)
        results.append((path.name, *run_one(path, args.quick)))
    print("\n== goals")
    failed = []
    for name, status, goals, wall in results:
        state = "ok" if status == 0 else f"FAILED (exit {status})"
        print(f"{name} ({wall:.0f} s, {state})")
        for line in goals:
            print(f"    {line.strip()}")
        if status != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
