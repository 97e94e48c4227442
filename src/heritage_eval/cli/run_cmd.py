"""``heritage-eval run NAME``: the one run command of every benchmark, built from its
typed options (:mod:`heritage_eval.cliargs.run_options`) and run by the engine
(:func:`heritage_eval.core.engine.execute`).

After the run, stdout gets the benchmark's table (``print_result``) and the headline
with 95 % intervals; stderr gets the benchmark's diagnostics, the run-limit warnings,
the PARTIAL note, the cache line and the run folder. Exit status: 0 done, 1 nothing
answered, the run was stopped, or the data changed while running (a data file re-read on
each pass was replaced: one ``error:`` line naming it), 2 usage error / folder conflict /
busy (nothing written).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command

if TYPE_CHECKING:
    from heritage_eval.core.benchmark import Benchmark

DEFAULT_LIMIT_HELP = ("evaluate only the first N samples (a quick try; the run is marked "
                      "PARTIAL)")


def cli_execute(bench: Benchmark, args: argparse.Namespace) -> int:
    """Handler of ``heritage-eval run NAME`` (see the module docstring)."""
    # the engine and its dependencies (numpy …) are imported when a run starts, not
    # when the command's options are built (``run NAME --help``)
    from heritage_eval.cliargs.run_options import run_config_from_args
    from heritage_eval.cliargs.run_report import print_outcome
    from heritage_eval.core.backends import ModelSpecError
    from heritage_eval.core.benchmark import UsageError
    from heritage_eval.core.config import OptionsError
    from heritage_eval.core.engine import execute
    from heritage_eval.core.executors import ExecutorError
    from heritage_eval.core.lazy_samples import DataChangedError
    from heritage_eval.core.rundir import RunFolderBusy, RunFolderConflict

    try:
        config = run_config_from_args(args, bench.name, bench.Options,
                                      defaults=bench.platform_defaults(),
                                      required=bench.required_options())
        out = execute(bench, config)
    except (OptionsError, UsageError, RunFolderConflict, RunFolderBusy, ExecutorError,
            ModelSpecError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except DataChangedError as exc:  # a data file replaced while its samples were re-read
        # the run folder records the data as it was at the start, so a plain re-run
        # would refuse it as another configuration: --resume takes the data as it is now
        print(f"error: {exc}; run the same command again with --resume: it resumes from "
              "the cache (the answers received so far are reused)", file=sys.stderr)
        return 1
    output = config.output
    cache = None if output.no_cache else (output.cache or "cache.sqlite")
    return print_outcome(bench, out, cache)


def benchmark_command(bench: Benchmark) -> Command:
    """The ``run NAME`` :class:`~heritage_eval.benchmarks.registry.Command` of ``bench``:
    its options generated from ``bench.Options`` and the platform's configuration."""
    def add_args(p: argparse.ArgumentParser) -> None:
        from heritage_eval.cliargs.run_options import add_run_options

        add_run_options(p, bench.Options, defaults=bench.platform_defaults(),
                        helps={"limit": bench.limit_help or DEFAULT_LIMIT_HELP},
                        required=bench.required_options())

    return Command(name=bench.name, help=bench.help, add_args=add_args,
                   handler=lambda args: cli_execute(bench, args),
                   description=bench.description or bench.help)
