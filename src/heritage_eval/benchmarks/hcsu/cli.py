"""``heritage-eval run hcsu-discrimination`` / ``run hcsu-description``: the platform's
generic run (:func:`heritage_eval.core.engine.execute`) with the HCSU messages.

Options are those of the generic ``run NAME`` command (the benchmark's own plus the
shared model, output and ``--resume`` / ``--overwrite`` options, with the paper's
temperature 0.1; max tokens 4,096 / 256). After the run the table is printed on stdout,
then on stderr the run folder, the error and judge digests (naming an endpoint that was
never reached) and, when nothing was answered, the exit-1 message. Exit status: 0 done,
1 nothing answered, 2 usage error (nothing written).
"""

from __future__ import annotations

import argparse
import sys

from heritage_eval.benchmarks.hcsu.bench_base import HcsuBenchmark
from heritage_eval.benchmarks.hcsu.benchmark import HcsuDiscrimination
from heritage_eval.benchmarks.hcsu.benchmark_description import HcsuDescription
from heritage_eval.benchmarks.hcsu.options import guarded
from heritage_eval.benchmarks.hcsu.run_output import (
    fail_if_nothing_answered,
    print_summary,
    report_errors,
)
from heritage_eval.benchmarks.outcomes import outcomes_lines
from heritage_eval.benchmarks.registry import Command, Handler
from heritage_eval.core.benchmark import UsageError
from heritage_eval.core.engine import (
    benchmark_command,
    execute,
    headline_lines,
    print_run_limits,
)
from heritage_eval.core.executors import ExecutorError
from heritage_eval.core.rundir import RunFolderBusy, RunFolderConflict

#: The exit-1 message of each task ({n}: the number of records).
NOTHING = {
    HcsuDiscrimination.name: "none of the {n} sample(s) was answered (every one ended as "
                             "error)",
    HcsuDescription.name: "none of the {n} description(s) was answered (errors or failed "
                          "metrics; see the warnings above)"}


def _handler(bench: HcsuBenchmark) -> Handler:
    def handle(args: argparse.Namespace) -> int:
        try:
            out = execute(bench, args)
        except (UsageError, RunFolderConflict, RunFolderBusy, ExecutorError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        summary = out.summary
        if summary.get("run_stopped"):
            print(f"error: the run was stopped: {summary['run_stopped']}; run folder "
                  f"written to {out.out}", file=sys.stderr)
            return 1
        if summary.get("partial"):
            print("note: --limit run: results are PARTIAL (marked so in summary.md and "
                  "summary.json)", file=sys.stderr)
        print_summary(bench.render_table(summary), out.out)
        for line in headline_lines(summary):
            print(line)
        prov = summary.get("provenance", {})
        report_errors(bench.name, summary["results"][0], out.records, prov.get("base_url"),
                      prov.get("judge_base_url"))
        for line in outcomes_lines(summary):
            print(f"warning: {line}", file=sys.stderr)
        print_run_limits(summary)
        return fail_if_nothing_answered(NOTHING[bench.name].format(n=len(out.records)),
                                        out.status == 1, out.out)
    return handle


def run_command(bench: HcsuBenchmark) -> Command:
    """The ``run NAME`` command of ``bench``: the generic options, the HCSU handler."""
    generic = benchmark_command(bench)
    return Command(name=bench.name, help=bench.help, add_args=generic.add_args,
                   handler=guarded(_handler(bench)), description=generic.description)


DISCRIMINATION_COMMAND = run_command(HcsuDiscrimination())
DESCRIPTION_COMMAND = run_command(HcsuDescription())
