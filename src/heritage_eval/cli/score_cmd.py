"""``heritage-eval score NAME`` of a plug-in that declares typed score options
(:class:`~heritage_eval.core.plugins.BenchmarkPlugin` ``score_options``): the options are
generated from that model plus the run folder's (``--out``, ``--resume``,
``--overwrite``); the plug-in's scorer receives the
:class:`~heritage_eval.core.config.RunConfig` and returns an ``EvalOutput``.
"""

from __future__ import annotations

import argparse
import sys

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core import plugins
from heritage_eval.core.score_config import score_skipped as skipped


def typed_score_command(name: str) -> Command:
    """The ``score NAME`` command of a plug-in with typed score options."""
    target, help_text = plugins.typed_scorers()[name]

    def add_args(p: argparse.ArgumentParser) -> None:
        from heritage_eval.cliargs.run_options import add_run_options

        add_run_options(p, plugins.load_target(target), required=("out",), skip=skipped())

    def handler(args: argparse.Namespace) -> int:
        # the scoring code's dependencies are imported when the command runs, not when
        # its options are built (``score NAME --help``)
        from heritage_eval.cliargs.run_options import run_config_from_args
        from heritage_eval.cliargs.run_report import print_outcome
        from heritage_eval.core.benchmark import UsageError
        from heritage_eval.core.config import OptionsError
        from heritage_eval.core.rundir import RunFolderBusy, RunFolderConflict

        scorer = plugins.scorer(name)
        assert scorer is not None
        try:
            config = run_config_from_args(args, name, plugins.load_target(target),
                                          required=("out",), skip=skipped())
            out = scorer(config)
        except (OptionsError, UsageError, RunFolderConflict, RunFolderBusy) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return print_outcome(plugins.benchmark(name), out)

    return Command(name=name, help=help_text, add_args=add_args, handler=handler,
                   description=help_text)
