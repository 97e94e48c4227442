"""The one form of an export's source: ``export hf BENCHMARK SOURCE`` and
``export tei SOURCE`` take it as a positional argument; ``--data SOURCE`` is accepted by
both as the same thing (the form ``export tei`` had, and ``run --data``'s spelling).

Rule: exactly one of the two is given, or both name the same path; otherwise a usage
error (exit status 2) says which form to use. Light at import (argparse, pathlib).
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_source_args", "resolve_source"]


def add_source_args(p: argparse.ArgumentParser, help: str) -> None:
    """Add the positional ``SOURCE`` (optional to argparse) and ``--data SOURCE``;
    :func:`resolve_source` reads them."""
    p.add_argument("source", nargs="?", type=Path, default=None, metavar="SOURCE",
                   help=f"{help} (or give it as --data SOURCE)")
    p.add_argument("--data", dest="data_source", type=Path, default=None,
                   metavar="SOURCE", help="the same as SOURCE (either form works)")


def resolve_source(args: argparse.Namespace) -> str | None:
    """Set ``args.source`` from ``SOURCE`` or ``--data`` and return ``None``; or return
    the usage error's message (none given, or two different paths)."""
    pos, opt = getattr(args, "source", None), getattr(args, "data_source", None)
    chosen = pos if pos is not None else opt
    if chosen is None:
        return "give the source: SOURCE (or --data SOURCE)"
    if pos is not None and opt is not None and Path(pos) != Path(opt):
        return (f"two sources given ({pos} and --data {opt}); give one, as SOURCE or "
                "--data SOURCE")
    args.source = Path(chosen)
    return None
