"""Start-up time of the command line: ``--help`` of every command, ``--version``, ``list``.

Goal (issue 23): each ``--help`` (``run NAME``, ``score NAME``, ``muse generate``, ``muse
analyze``, the command groups) within 0.3 s of ``python -c pass`` on this machine, and
the start-up of ``score ancient-bench`` (to where it reads the data) too. A goal line is
printed for each: help from the cache (``warm``) and built (``cold``), the start-up cold.

Each command runs as a fresh process, alternated with ``python -c pass`` (the
interpreter's own start-up, the reference) so that both see the same load on a shared
machine; medians of ``--repeats`` runs (default 5). Two figures per command:

- ``warm``: what a user sees from the second time on: the help text comes from the help
  cache (:mod:`heritage_eval.cli.help_cache`, in a temporary folder primed by one run);
- ``cold``: the parser built (``HERITAGE_EVAL_HELP_CACHE=off``): the first ``--help``
  after an install or an edit, and the start-up of every command that is not a plain
  help request.

``--cpu`` measures the children's CPU time (user + system, ``getrusage``) instead of
the wall-clock time: on a shared, loaded machine it varies much less (waiting for a core
is not counted), while the wall-clock time is what a user waits.

Children may write byte code (to a temporary ``PYTHONPYCACHEPREFIX``, primed by the
warm-up run), as an installed package has its ``.pyc`` files. Also printed: the modules
the warm run imported and which of numpy / pydantic / PIL it imported. ``--compare-src
DIR`` adds a column ``other``: the same command run from another source tree (``DIR`` put
first on ``PYTHONPATH``, e.g. ``git archive`` of an older commit's ``src``), in the same
rounds, so that before / after see the same load.

Usage: ``python bench/bench_startup.py [--repeats N] [--no-cold] [--only TEXT]
[--compare-src DIR] [--cpu]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 0.3
HEAVY = ("numpy", "pydantic", "PIL")
#: A plain command run to completion after the parser is built (no help cache applies):
#: ``score ancient-bench`` refused for a missing folder, i.e. its start-up before work.
SCORE_STARTUP = ["score", "ancient-bench", "--data", "/nonexistent/gt", "--predictions",
                 "/nonexistent/pred", "--out", "/nonexistent/out"]

_CHILD = rf"""
import atexit, os, sys
sys.path[0] = os.path.dirname(os.path.abspath(sys.executable))  # as the console script
def _report():
    heavy = ",".join(m for m in {HEAVY!r} if m in sys.modules) or "-"
    os.write(2, f"\nBENCH-MODULES {{len(sys.modules)}} {{heavy}}\n".encode())
atexit.register(_report)
sys.argv = ["heritage-eval", *sys.argv[1:]]
from heritage_eval.cli.main import main
sys.exit(main())
"""


def commands() -> dict[str, list[str]]:
    """Every command to time: name -> argv (read from the installed plug-ins)."""
    from heritage_eval.benchmarks import registry
    from heritage_eval.cli.parser import PLATFORM_COMMANDS, run_table, score_table
    from heritage_eval.core import plugins

    plugins.load_declarations()
    out: dict[str, list[str]] = {"--help": ["--help"], "--version": ["--version"],
                                 "list": ["list"], "run --help": ["run", "--help"]}
    for name in sorted(run_table()):
        out[f"run {name} --help"] = ["run", name, "--help"]
    out["score --help"] = ["score", "--help"]
    for name in sorted(score_table()):
        out[f"score {name} --help"] = ["score", name, "--help"]
    for group in sorted(registry.GROUPS):
        out[f"{group} --help"] = [group, "--help"]
    for name in sorted(PLATFORM_COMMANDS):
        out[f"{name} --help"] = [name, "--help"]
    out["muse generate --help"] = ["muse", "generate", "--help"]
    out["muse analyze --help"] = ["muse", "analyze", "--help"]
    out["score ancient-bench (start-up, refused)"] = SCORE_STARTUP
    return out


#: Measure the children's CPU time instead of the wall-clock time (``--cpu``).
CPU = False


def _cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Seconds the command took (wall clock, or CPU with ``--cpu``) and its stderr."""
    start, cpu = time.perf_counter(), _cpu_s()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=env, text=True, check=False)
    seconds = _cpu_s() - cpu if CPU else time.perf_counter() - start
    return seconds, proc.stderr


def _modules(stderr: str) -> tuple[str, str]:
    for line in reversed(stderr.splitlines()):
        if line.startswith("BENCH-MODULES "):
            _, count, heavy = line.split()
            return count, heavy
    return "?", "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-cold", action="store_true", help="skip the parser-built runs")
    ap.add_argument("--only", default="", help="time only commands containing TEXT")
    ap.add_argument("--compare-src", type=Path, default=None, metavar="DIR",
                    help="also time each command from this source tree (column 'other')")
    ap.add_argument("--cpu", action="store_true",
                    help="the children's CPU time (user + system) instead of wall-clock time")
    opts = ap.parse_args()
    global CPU
    CPU = opts.cpu
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pyc")
    warm_env = {**env, "HERITAGE_EVAL_HELP_CACHE": str(tmp / "help")}
    cold_env = {**env, "HERITAGE_EVAL_HELP_CACHE": "off"}
    other_env = None
    if opts.compare_src is not None:
        other_env = {**cold_env, "PYTHONPATH": os.pathsep.join(
            [str(opts.compare_src.resolve()), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    ref = [sys.executable, "-c", "pass"]
    cli = [sys.executable, "-c", _CHILD]
    table = {k: v for k, v in commands().items() if opts.only in k}
    print(f"python -c pass and each command alternated, medians of {opts.repeats}; "
          f"{'CPU' if CPU else 'wall-clock'} seconds; 'beyond' = median - median of "
          "python -c pass")
    print(f"{'command':40s} {'warm':>6s} {'beyond':>7s} {'cold':>6s} {'beyond':>7s} "
          f"{'other':>6s} {'beyond':>7s} {'modules':>8s}  heavy (warm)")
    goals = []
    for name, args in table.items():
        _run(cli + args, warm_env)  # primes the help cache and the byte code
        if other_env is not None:
            _run(cli + args, other_env)
        t_ref, t_warm, t_cold, t_other = [], [], [], []
        stderr = ""
        for _ in range(opts.repeats):
            t_ref.append(_run(ref, env)[0])
            seconds, stderr = _run(cli + args, warm_env)
            t_warm.append(seconds)
            if not opts.no_cold:
                t_cold.append(_run(cli + args, cold_env)[0])
            if other_env is not None:
                t_other.append(_run(cli + args, other_env)[0])
        base = statistics.median(t_ref)
        warm = statistics.median(t_warm)
        cold = statistics.median(t_cold) if t_cold else float("nan")
        other = statistics.median(t_other) if t_other else float("nan")
        count, heavy = _modules(stderr)
        print(f"{name:40s} {warm:6.3f} {warm - base:7.3f} {cold:6.3f} {cold - base:7.3f} "
              f"{other:6.3f} {other - base:7.3f} {count:>8s}  {heavy}", flush=True)
        if args[-1] == "--help":
            goals.append((f"{name} (warm)", warm - base))
        if (args[-1] == "--help" or args is SCORE_STARTUP) and t_cold:
            goals.append((f"{name} (cold)" if args[-1] == "--help" else name, cold - base))
    print()
    for name, beyond in goals:
        verdict = "met" if beyond < GOAL_S else "NOT met"
        print(f"goal: {name} < {GOAL_S} s beyond python: {beyond:.2f} s ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
