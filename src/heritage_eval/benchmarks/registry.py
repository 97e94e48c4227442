"""Registry of argparse-built commands: ``score NAME`` and the command groups
(``hcsu canonicalize``, ``muse generate``, ``stats``, ``paper`` …).

Benchmarks themselves are plug-ins found through entry points
(:mod:`heritage_eval.core.plugins`); the command line builds ``run NAME`` for each from
its typed options. A plug-in's light declaration module (a built-in's ``commands``
module) declares its extra commands here with a help line and a ``"module:attribute"``
target; nothing heavy is imported until a command is chosen, so ``--help``, ``--version``
and ``list`` stay fast, and adding a benchmark never edits a central switch
(docs/design.md).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from heritage_eval.core import plugins
from heritage_eval.core.plugins import load_target

__all__ = [
    "GROUPS",
    "SCORE",
    "Command",
    "Entry",
    "LazyCommand",
    "benchmark",
    "load_all",
    "load_target",
    "register_benchmark",
    "register_group_command",
    "register_score",
    "register_scorer",
    "resolve",
]

Handler = Callable[[argparse.Namespace], int]
AddArgs = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Command:
    """One sub-command: ``help`` line, argument builder and handler."""

    name: str
    help: str
    add_args: AddArgs
    handler: Handler
    description: str = ""


@dataclass(frozen=True)
class LazyCommand:
    """A declared sub-command whose code is imported only when it is used.

    ``target`` is ``"package.module:attribute"``; the attribute is a :class:`Command`."""

    name: str
    help: str
    target: str

    def resolve(self) -> Command:
        """Import the target and return its :class:`Command`. A module of an extra that
        is not installed (OpenCV, pandas …) ends the command with the ``pip install``
        line to run (exit 2), not a traceback."""
        try:
            obj = load_target(self.target)
        except ModuleNotFoundError as exc:
            _missing_extra(self.name, self.target, exc)
        if isinstance(obj, Command):
            return obj
        raise TypeError(f"{self.target} is not a Command")


def _missing_extra(command: str, target: str, exc: ModuleNotFoundError) -> NoReturn:
    import sys

    from heritage_eval.core.extras import extras_providing, install_line

    top = (exc.name or "").split(".")[0]
    extras = extras_providing(top)
    if not extras:
        raise exc
    # the extra named after the command's package (muse, hcsu, curate) when it has it
    own = [e for e in extras if f".{e}" in target.partition(":")[0]]
    extra = (own or list(extras))[0]
    print(f"error: '{command}' needs {top}, from the '{extra}' extra: "
          f"{install_line(extra)}", file=sys.stderr)
    raise SystemExit(2)


Entry = Command | LazyCommand

SCORE: dict[str, Entry] = {}
#: group name -> (help, {sub-command name: entry}), e.g. ``hcsu canonicalize``.
GROUPS: dict[str, tuple[str, dict[str, Entry]]] = {}



def resolve(entry: Entry) -> Command:
    """The :class:`Command` of a registry entry (importing its module if lazy)."""
    return entry.resolve() if isinstance(entry, LazyCommand) else entry


def register_score(cmd: Entry) -> None:
    """Register ``heritage-eval score <cmd.name>`` (score predictions made elsewhere)."""
    _add(SCORE, cmd)


def register_group_command(group: str, group_help: str, cmd: Entry) -> None:
    """Register ``heritage-eval <group> <cmd.name>``."""
    entry = GROUPS.setdefault(group, (group_help, {}))
    _add(entry[1], cmd)


def register_benchmark(name: str, help_text: str, target: str, *, run: bool = True) -> None:
    """Declare benchmark ``name`` (its ``Benchmark`` subclass at ``target``); ``heritage-eval
    run NAME`` and the API find it (:func:`heritage_eval.core.plugins.register_benchmark`;
    ``run`` is kept for compatibility and ignored)."""
    plugins.register_benchmark(name, help_text, target)


def register_scorer(name: str, target: str) -> None:
    """Declare the function behind ``he.score(name, …)``
    (:func:`heritage_eval.core.plugins.register_scorer`)."""
    plugins.register_scorer(name, target)


def _add(table: dict[str, Entry], cmd: Entry) -> None:
    if cmd.name in table:
        raise ValueError(f"command {cmd.name!r} registered twice")
    table[cmd.name] = cmd


def load_all() -> None:
    """Load every plug-in's declarations (:func:`heritage_eval.core.plugins.load_all`):
    benchmarks, their commands and baselines, the curator and paper command groups."""
    plugins.load_all()


def benchmark(name: str) -> Any:
    """A new instance of the registered benchmark ``name``; raises ``KeyError`` listing
    the known names."""
    return plugins.benchmark(name)
