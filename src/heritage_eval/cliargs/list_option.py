"""One parser for list options such as ``--tasks``: ``--tasks a,b``, ``--tasks a b`` and
any mix (``--tasks a,b c``) give the same list.

Rule (docs/reference/conventions.md, "List options"): every value after the option is split on
commas and white space; empty pieces (``a,,b``, a trailing comma) are dropped; every
piece must be one of the option's choices; at least one piece is needed. The list is a
selection: each choice once, aliases read as their id, in the order of the choices. A
repeated option adds to the earlier one (``--tasks a --tasks b`` is ``--tasks a,b``).
A refused value is a usage error (exit 2)
naming the option, the refused piece and the choices. The same rule reads a suite file's
value (a list, or one comma-separated string; the configuration's rule,
:func:`heritage_eval.core.option_spec.split_list`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from heritage_eval.core.option_spec import split_list

__all__ = ["ListOption", "add_list_option", "split_list"]


class ListOption(argparse.Action):
    """argparse action of :func:`add_list_option` (``nargs="+"``, values checked by
    :func:`split_list` against ``list_choices``)."""

    def __init__(self, option_strings: list[str], dest: str, *,
                 list_choices: Sequence[str] = (),
                 canonical: Callable[[str], str | None] | None = None,
                 **kwargs: Any) -> None:
        kwargs.setdefault("nargs", "+")
        super().__init__(option_strings, dest, **kwargs)
        self.list_choices = tuple(list_choices)
        self.canonical = canonical

    def parse_items(self, values: Iterable[object]) -> list[str]:
        """:func:`split_list` for this option (``ValueError`` when refused)."""
        return split_list(values, self.list_choices, "/".join(self.option_strings),
                          self.canonical)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None
                 ) -> None:
        words = [values] if isinstance(values, str) else list(values or [])
        current = getattr(namespace, self.dest, None)  # given before: added to
        earlier = current if isinstance(current, list) and current is not self.default \
            else []
        try:
            setattr(namespace, self.dest, self.parse_items([*earlier, *words]))
        except ValueError as exc:
            raise argparse.ArgumentError(self, str(exc).split(": ", 1)[1]) from None


def add_list_option(p: argparse.ArgumentParser, flag: str, choices: Sequence[str], *,
                    default: list[str] | None, help: str, metavar: str = "TASK") -> None:
    """Add ``flag`` (e.g. ``--tasks``) to ``p``, read by the module's rule; ``default``
    when absent. The help text gets the choices and both spellings appended."""
    p.add_argument(flag, action=ListOption, list_choices=tuple(choices), default=default,
                   metavar=metavar,
                   help=f"{help}. Choices: {', '.join(choices)}; several as 'a,b' or 'a b'")
