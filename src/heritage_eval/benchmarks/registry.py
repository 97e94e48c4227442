"""Registry of benchmark commands: ``run NAME``, ``score NAME`` and command groups.

A benchmark package ``heritage_eval.benchmarks.<pkg>`` with a ``cli`` module registers
its commands on import; :func:`load_all` imports every such module (plug-ins, DESIGN.md
rule 6), so adding a benchmark never edits a central switch.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

Handler = Callable[[argparse.Namespace], int]
AddArgs = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Command:
    """One registered sub-command: ``help`` line, argument builder and handler."""

    name: str
    help: str
    add_args: AddArgs
    handler: Handler
    description: str = ""


RUN: dict[str, Command] = {}
SCORE: dict[str, Command] = {}
#: group name -> (help, {sub-command name: Command}), e.g. ``hcsu canonicalize``.
GROUPS: dict[str, tuple[str, dict[str, Command]]] = {}


def register_run(cmd: Command) -> None:
    """Register ``heritage-eval run <cmd.name>``."""
    _add(RUN, cmd)


def register_score(cmd: Command) -> None:
    """Register ``heritage-eval score <cmd.name>`` (score predictions made elsewhere)."""
    _add(SCORE, cmd)


def register_group_command(group: str, group_help: str, cmd: Command) -> None:
    """Register ``heritage-eval <group> <cmd.name>``."""
    entry = GROUPS.setdefault(group, (group_help, {}))
    _add(entry[1], cmd)


def _add(table: dict[str, Command], cmd: Command) -> None:
    if cmd.name in table:
        raise ValueError(f"command {cmd.name!r} registered twice")
    table[cmd.name] = cmd


_loaded = False


def load_all() -> None:
    """Import ``heritage_eval.benchmarks.<pkg>.cli`` for every benchmark package."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import heritage_eval.benchmarks as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        try:
            importlib.import_module(f"{pkg.__name__}.{info.name}.cli")
        except ModuleNotFoundError as exc:
            if exc.name != f"{pkg.__name__}.{info.name}.cli":
                raise
