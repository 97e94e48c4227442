"""The ``heritage-eval hcsu`` tools that evaluate nothing: ``canonicalize`` (paper §3.3),
``write-descriptions`` (model-written class descriptions for the ablation) and
``report`` (merge run folders of one command into one table). The studies are in
:mod:`.cli_studies`; every ``hcsu`` command is declared in :mod:`.commands`."""

from __future__ import annotations

import argparse
import sys

from heritage_eval.benchmarks.hcsu.canonical_command import CANONICALIZE
from heritage_eval.benchmarks.hcsu.commands import TOOLS
from heritage_eval.benchmarks.registry import AddArgs, Command, Handler

__all__ = ["CANONICALIZE", "REPORT", "WRITE_DESCRIPTIONS"]

# The modules of the commands that run a model (option models, studies, prompts, model
# back-ends) are imported when such a command is parsed or run, not with this module:
# ``hcsu canonicalize`` (re-exported here from :mod:`.canonical_command`) stays light.


def _write_args(p: argparse.ArgumentParser) -> None:
    from heritage_eval.benchmarks.hcsu.cli_args import write_descriptions_args

    write_descriptions_args(p)


def _report_args(p: argparse.ArgumentParser) -> None:
    from heritage_eval.benchmarks.hcsu.report import add_report_args

    add_report_args(p)


def _report(args: argparse.Namespace) -> int:
    from heritage_eval.benchmarks.hcsu.report import report

    return report(args)


def _write(args: argparse.Namespace) -> int:
    from heritage_eval.benchmarks.hcsu.cli_args import WRITE_OPTIONS
    from heritage_eval.benchmarks.hcsu.generated import write_descriptions
    from heritage_eval.benchmarks.hcsu.option_models import WriteOptions
    from heritage_eval.benchmarks.hcsu.options import WRITE
    from heritage_eval.benchmarks.hcsu.runio import engine_for, load_data, model_for
    from heritage_eval.core.store import RunFolder

    config = WRITE_OPTIONS.config(args)
    opts = config.options
    if not isinstance(opts, WriteOptions):
        raise TypeError(f"expected WriteOptions, got {type(opts).__name__}")
    backend = model_for(config.model, WRITE)
    folder = RunFolder(config.out_dir())
    ds = load_data(opts, config.out_dir())
    engine = engine_for(config, folder, backend)
    good, errors = write_descriptions(ds, engine, opts.max_words, config.output.limit)
    path = folder.write_json("generated_descriptions.json", good)
    for key, err in errors.items():
        print(f"error: {key}: {err}", file=sys.stderr)
    print(f"{len(good)} descriptions written to {path}")
    return 1 if errors else 0


def _guarded(handler: Handler) -> Handler:
    """``options.guarded(handler)``, the guard imported when the command runs."""
    def run(args: argparse.Namespace) -> int:
        from heritage_eval.benchmarks.hcsu.options import guarded

        return guarded(handler)(args)
    return run


def _command(name: str, add_args: AddArgs, handler: Handler, description: str = ""
             ) -> Command:
    help_text = TOOLS[name][0]
    return Command(name=name, help=help_text, add_args=add_args, handler=_guarded(handler),
                   description=description or help_text)


WRITE_DESCRIPTIONS = _command("write-descriptions", _write_args, _write)
REPORT = _command("report", _report_args, _report)
