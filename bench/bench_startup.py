"""Start-up time of the command line: ``--help``, ``--version`` and ``list``.

Each command runs as a fresh process, alternated with ``python -c pass`` (the
interpreter's own start-up, the reference) so that both see the same load on a shared
machine; medians of REPEATS runs. Goal (platform issue): each under 1 s on this machine.
Prints the median wall time of each, its ratio to the reference, and the number of
modules imported.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

REPEATS = 7
GOAL_S = 1.0
COMMANDS = {"--help": ["--help"], "--version": ["--version"], "list": ["list"],
            "run ancient-bench --help": ["run", "ancient-bench", "--help"]}


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _modules(args: list[str]) -> int:
    code = ("import sys, contextlib, io\n"
            "from heritage_eval.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try: main({args!r})\n"
            "    except SystemExit: pass\n"
            "print(len(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip().splitlines()[-1])


def main() -> int:
    cli = [sys.executable, "-m", "heritage_eval.cli.main"]
    ref = [sys.executable, "-c", "pass"]
    worst = 0.0
    print(f"{'command':28s} {'median s':>9s} {'python -c pass':>15s} {'ratio':>7s} "
          f"{'modules':>8s}  goal < {GOAL_S:.1f} s")
    for name, args in COMMANDS.items():
        t_cmd, t_ref = [], []
        for _ in range(REPEATS):
            t_ref.append(_time(ref))
            t_cmd.append(_time(cli + args))
        med, base = statistics.median(t_cmd), statistics.median(t_ref)
        if not name.startswith("run "):
            worst = max(worst, med)
        print(f"{name:28s} {med:9.3f} {base:15.3f} {med / base:7.1f} {_modules(args):8d}")
    verdict = "met" if worst < GOAL_S else "NOT met"
    print(f"slowest of --help/--version/list: {worst:.3f} s -> goal {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
