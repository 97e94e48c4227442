"""Options of an argparse-built command (``score NAME``, the curator and study commands)
from Python keyword arguments or a config file, checked by the same parser the command
line uses — so the Python API and ``--config`` files
can say everything the CLI can, with the same defaults, types, choices and messages.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Mapping
from typing import Any

from heritage_eval.benchmarks import registry
from heritage_eval.core.config import OptionsError

__all__ = ["OptionsError", "command_parser", "namespace_from"]


def command_parser(kind: str, name: str) -> tuple[argparse.ArgumentParser, registry.Command]:
    """The parser and command of ``heritage-eval score <name>`` (kind ``score``) or of a
    command group's sub-command (kind: the group). Raises :class:`OptionsError` for an
    unknown name, listing the known."""
    registry.load_all()
    table = registry.SCORE if kind == "score" else registry.GROUPS.get(kind, ("", {}))[1]
    if name not in table:
        known = sorted(table)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise OptionsError(f"unknown benchmark {name!r} for '{kind}' (known: "
                           f"{', '.join(known)}){hint}")
    cmd = registry.resolve(table[name])
    parser = argparse.ArgumentParser(prog=f"heritage-eval {kind} {name}", allow_abbrev=False)
    cmd.add_args(parser)
    return parser, cmd


def _convert(action: argparse.Action, key: str, value: Any) -> Any:
    if value is None or isinstance(action, argparse._StoreConstAction | argparse._StoreTrueAction
                                   | argparse._StoreFalseAction):
        return value
    if isinstance(action, argparse.BooleanOptionalAction):
        if not isinstance(value, bool):
            raise OptionsError(f"option {key!r} takes true or false, got {value!r}")
        return value
    parse_items = getattr(action, "parse_items", None)  # core.list_option: one rule
    if callable(parse_items):
        try:
            return parse_items(value if isinstance(value, list | tuple) else [value])
        except ValueError as exc:
            raise OptionsError(f"option {key!r}: {exc}") from None
    many = action.nargs in ("+", "*") or isinstance(action.nargs, int) or \
        isinstance(action, argparse._AppendAction)
    if many:
        items = value if isinstance(value, list | tuple) else [value]
        return [_one(action, key, v) for v in items]
    return _one(action, key, value)


def _one(action: argparse.Action, key: str, value: Any) -> Any:
    conv = action.type
    if callable(conv) and not isinstance(value, bool):
        try:
            value = conv(str(value)) if isinstance(value, str | int | float) or \
                not isinstance(value, type(None)) else value
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise OptionsError(f"option {key!r}: {exc}") from None
    if action.choices is not None and value not in action.choices:
        raise OptionsError(f"option {key!r}: {value!r} is not one of "
                           f"{', '.join(map(str, action.choices))}")
    return value


def namespace_from(parser: argparse.ArgumentParser, options: Mapping[str, Any]
                   ) -> argparse.Namespace:
    """A namespace as ``parser.parse_args`` would give, from ``options`` (keys are option
    names with ``_`` or ``-``, e.g. ``max_tokens`` or ``max-tokens``; values are Python
    values: strings, numbers, booleans, lists, paths).

    Raises :class:`OptionsError` for an unknown key (with a suggestion), a missing
    required option, or a value the option's type or choices refuse.
    """
    actions = {a.dest: a for a in parser._actions
               if a.dest not in ("help",) and a.dest is not argparse.SUPPRESS}
    given = {str(k).replace("-", "_"): v for k, v in options.items()}
    unknown = sorted(set(given) - set(actions))
    if unknown:
        msgs = []
        for key in unknown:
            close = difflib.get_close_matches(key, list(actions), n=1)
            msgs.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise OptionsError(f"{parser.prog}: unknown option(s) {', '.join(msgs)}")
    ns = argparse.Namespace()
    for dest, action in actions.items():
        default = action.default if action.default is not argparse.SUPPRESS else None
        setattr(ns, dest, default)
    for dest, value in parser._defaults.items():  # set_defaults(): handler, _defaults
        setattr(ns, dest, value)
    for dest, value in given.items():
        setattr(ns, dest, _convert(actions[dest], dest, value))
    missing = [f"{a.dest}" for a in actions.values()
               if a.required and getattr(ns, a.dest) is None]
    if missing:
        raise OptionsError(f"{parser.prog}: missing required option(s) "
                           f"{', '.join(missing)}")
    return ns
