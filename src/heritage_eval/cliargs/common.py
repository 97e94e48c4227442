"""Options shared by commands outside the generated ``run`` options (curator tools,
studies): ``--allow-outside-paths``, and applying it once parsed."""

from __future__ import annotations

import argparse
from typing import Any

from heritage_eval.core.paths import ALLOW_OPTION, set_outside_allowed


def add_allow_outside_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup
                             ) -> None:
    """Add ``--allow-outside-paths`` (default: not given, the policy stays as it is)."""
    parser.add_argument(ALLOW_OPTION, action="store_true", default=None,
                        help="read image references that resolve outside the data folder "
                             "(../.., absolute paths, symlinks leading out); refused by "
                             "default; recorded in provenance")


def configure_from_options(args: argparse.Namespace | Any) -> None:
    """Set the outside-paths policy from ``args.allow_outside_paths`` when the command has
    the option (left unchanged otherwise)."""
    value = getattr(args, "allow_outside_paths", None)
    if value is not None:
        set_outside_allowed(bool(value))


def add_run_folder_args(p: argparse.ArgumentParser) -> None:
    """``--resume`` / ``--overwrite`` of an argparse-built command that writes a run
    folder (``score``, studies): what to do when ``--out`` holds another run (the help
    of :class:`~heritage_eval.core.config.OutputConfig`'s fields, read from
    :mod:`heritage_eval.core.run_folder_options`: no pydantic)."""
    from heritage_eval.core.run_folder_options import OVERWRITE_HELP, RESUME_HELP

    g = p.add_argument_group("run folder")
    x = g.add_mutually_exclusive_group()
    x.add_argument("--resume", action="store_true", help=RESUME_HELP)
    x.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
