"""Registry of commands (``run NAME``, ``score NAME``, command groups) and benchmarks.

A benchmark package ``heritage_eval.benchmarks.<pkg>`` has a light ``commands`` module
that *declares* its commands and benchmarks with a help line and a ``"module:attribute"``
target; nothing heavy is imported until a command is chosen, so ``--help``, ``--version``
and ``list`` stay fast (plug-ins, DESIGN.md rule 6: adding a benchmark never edits a
central switch). A target is either a :class:`Command` or a
:class:`~heritage_eval.core.benchmark.Benchmark` subclass, from which the generic
``run NAME`` command is built.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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

    ``target`` is ``"package.module:attribute"``; the attribute is a :class:`Command`
    or a ``Benchmark`` subclass (for ``run NAME``)."""

    name: str
    help: str
    target: str

    def resolve(self) -> Command:
        """Import the target and return its :class:`Command`."""
        obj = load_target(self.target)
        if isinstance(obj, Command):
            return obj
        from heritage_eval.core.benchmark import Benchmark
        from heritage_eval.core.engine import benchmark_command

        if isinstance(obj, type) and issubclass(obj, Benchmark):
            return benchmark_command(obj())
        raise TypeError(f"{self.target} is neither a Command nor a Benchmark subclass")


Entry = Command | LazyCommand

RUN: dict[str, Entry] = {}
SCORE: dict[str, Entry] = {}
#: group name -> (help, {sub-command name: entry}), e.g. ``hcsu canonicalize``.
GROUPS: dict[str, tuple[str, dict[str, Entry]]] = {}
#: benchmark name -> ``"module:Class"`` of its Benchmark subclass (for the API).
BENCHMARKS: dict[str, str] = {}
#: benchmark name -> ``"module:function"`` scoring predictions made elsewhere: the
#: function takes the ``score NAME`` options namespace and returns an ``EvalOutput``.
SCORERS: dict[str, str] = {}


def load_target(target: str) -> Any:
    """Import ``"package.module:attribute"`` and return the attribute."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def resolve(entry: Entry) -> Command:
    """The :class:`Command` of a registry entry (importing its module if lazy)."""
    return entry.resolve() if isinstance(entry, LazyCommand) else entry


def register_run(cmd: Entry) -> None:
    """Register ``heritage-eval run <cmd.name>``."""
    _add(RUN, cmd)


def register_score(cmd: Entry) -> None:
    """Register ``heritage-eval score <cmd.name>`` (score predictions made elsewhere)."""
    _add(SCORE, cmd)


def register_group_command(group: str, group_help: str, cmd: Entry) -> None:
    """Register ``heritage-eval <group> <cmd.name>``."""
    entry = GROUPS.setdefault(group, (group_help, {}))
    _add(entry[1], cmd)


def register_benchmark(name: str, help_text: str, target: str, *, run: bool = True) -> None:
    """Declare benchmark ``name`` (its ``Benchmark`` subclass at ``target``); with
    ``run`` also the generic ``heritage-eval run NAME`` command."""
    if name in BENCHMARKS:
        raise ValueError(f"benchmark {name!r} registered twice")
    BENCHMARKS[name] = target
    if run:
        register_run(LazyCommand(name, help_text, target))


def register_scorer(name: str, target: str) -> None:
    """Declare the function behind ``he.score(name, …)`` (see :data:`SCORERS`)."""
    SCORERS[name] = target


def _add(table: dict[str, Entry], cmd: Entry) -> None:
    if cmd.name in table:
        raise ValueError(f"command {cmd.name!r} registered twice")
    table[cmd.name] = cmd


#: command declarations outside ``benchmarks/`` (curator tools, the papers' artefacts)
EXTRA_COMMAND_MODULES = ("heritage_eval.curate.commands", "heritage_eval.paper.commands")

_loaded = False
_loading = False
_load_lock = threading.RLock()


def load_all() -> None:
    """Import ``heritage_eval.benchmarks.<pkg>.commands`` for every benchmark package
    (falling back to ``<pkg>.cli`` for a package without a ``commands`` module)."""
    global _loaded
    if _loaded:
        return
    global _loading
    with _load_lock:  # two threads calling the API at once must both see every command
        if _loaded or _loading:  # _loading: re-entered from a module being imported
            return
        _loading = True
        try:
            _load_all()
            _loaded = True
        finally:
            _loading = False


def _load_all() -> None:
    import heritage_eval.benchmarks as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        for leaf in ("commands", "cli"):
            name = f"{pkg.__name__}.{info.name}.{leaf}"
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name != name:
                    raise
                continue
            break
    for extra in EXTRA_COMMAND_MODULES:  # platform-wide groups outside benchmarks/
        importlib.import_module(extra)
    register_group_command("export", "export a run or a benchmark in other formats",
                           LazyCommand("predictions", "write an Ancient-Bench run's answers "
                                       "in the official predictions layout",
                                       "heritage_eval.cli.export_cmd:EXPORT_PREDICTIONS"))


def benchmark(name: str) -> Any:
    """A new instance of the registered benchmark ``name``; raises ``KeyError`` listing
    the known names."""
    load_all()
    if name not in BENCHMARKS:
        known = ", ".join(sorted(BENCHMARKS)) or "none"
        raise KeyError(f"unknown benchmark {name!r}; known: {known}")
    return load_target(BENCHMARKS[name])()
