"""How a typed configuration field becomes a command-line option: one declaration gives
the Python API's keyword, the option's flag, its default, its check and its help.

A configuration (:mod:`heritage_eval.core.config`, a benchmark's ``Options``) is a
pydantic model whose fields are annotated with :func:`opt`::

    class Options(BenchmarkOptions):
        data: Annotated[Path, opt("release root: <category>/conv.jsonl + images")]
        k: Annotated[int, opt("candidates per question", rule=COUNT, metavar="K")] = 4

The command line generates ``--data`` and ``--k`` from it (:mod:`heritage_eval.cliargs`);
the Python API passes ``data=…, k=…``; both are validated by the same model, so names,
defaults, checks and messages have one source. This module never imports argparse.

Value rules: ``rule`` reads a number by :func:`~heritage_eval.core.option_checks.parse_number`
(finite, ASCII, in range); ``choices`` restricts a string (``Literal`` annotations do the
same); ``list_choices`` reads a list by :func:`split_list` (``a,b`` and ``a b`` alike);
a ``bool`` field is a switch (``--x``; ``--x/--no-x`` when ``negatable``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_core import core_schema

from heritage_eval.core.option_checks import NumberRange, OptionValueError, parse_number


@dataclass(frozen=True)
class OptionInfo:
    """Command-line facts of one configuration field (see the module docstring).

    ``help``: the help line (the default is appended by the CLI). ``flag``: the long
    option (default ``--`` + the field name with ``-``). ``aliases``: other spellings
    accepted (e.g. ``--refusals``). ``metavar``: the value's placeholder. ``group``: the
    help section. ``rule``: numeric rule. ``choices``: accepted strings. ``list_choices``:
    a list option's accepted pieces. ``repeat``: the option may be given several times
    (values collected in order). ``negatable``: a switch with a ``--no-`` form.
    ``nargs_plus``: a list option that takes one or more words after the flag.
    ``cli``: ``False`` for a field set only from Python (not an option).
    """

    help: str
    flag: str | None = None
    aliases: tuple[str, ...] = ()
    metavar: str | None = None
    group: str | None = None
    rule: NumberRange | None = None
    choices: tuple[str, ...] | None = None
    list_choices: tuple[str, ...] | None = None
    repeat: bool = False
    negatable: bool = False
    nargs_plus: bool = False
    cli: bool = True

    def flag_of(self, name: str) -> str:
        """The option's flag for field ``name``."""
        return self.flag or "--" + name.replace("_", "-")


def _close(bad: Sequence[str], choices: Sequence[str]) -> str:
    """`` (did you mean 'a' or 'b'?)``: the closest choice to each refused piece (difflib,
    cutoff 0.6, as the command line's suggestions), or ``""`` when none is close."""
    import difflib

    near = list(dict.fromkeys(m for b in bad for m in difflib.get_close_matches(
        b, list(choices), n=1, cutoff=0.6)))
    return f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""


def split_list(values: Iterable[object], choices: Sequence[str], option: str) -> list[str]:
    """The pieces of ``values``: every value split on commas, spaces around a piece and
    empty pieces dropped; each piece must be one of ``choices``; at least one is needed.
    Returned in the order of ``choices``, each once: a list option is a selection, so
    ``b,a``, ``a b a`` and ``a,b`` are one configuration (one fingerprint, one output
    order). Raises ``ValueError`` naming
    ``option`` (when not empty), the refused piece(s) with the closest choice to each
    (when one is close) and the choices."""
    pieces = [p.strip() for v in values for p in str(v).split(",")]
    items = list(dict.fromkeys(p for p in pieces if p))
    bad = [p for p in items if p not in choices]
    if bad or not items:
        what = (f"invalid choice(s) {', '.join(map(repr, bad))}{_close(bad, choices)}"
                if bad else "needs at least one value")
        text = (f"{what} (choose from {', '.join(choices)}; separate several with commas "
                "or spaces)")
        raise ValueError(f"{option}: {text}" if option else text)
    return [c for c in choices if c in items]


def _number(rule: NumberRange) -> Any:
    def check(value: Any) -> Any:
        if value is None:
            return None
        try:
            return parse_number(value, rule)
        except OptionValueError as exc:
            raise ValueError(str(exc)) from None
    return check


def _pieces(choices: tuple[str, ...], flag: str) -> Any:
    def check(value: Any) -> Any:
        if value is None:
            return None
        words = [value] if isinstance(value, str | int | float) else list(value)
        return split_list(words, choices, flag)
    return check


def _choice(choices: tuple[str, ...]) -> Any:
    def check(value: Any) -> Any:
        if value is not None and value not in choices:
            raise ValueError(f"{value!r} is not one of {', '.join(choices)}")
        return value
    return check


def opt(help: str, **facts: Any) -> Any:
    """The ``Annotated`` metadata of a configuration field: an :class:`OptionInfo` (for
    the CLI) plus the validator its ``rule`` / ``choices`` / ``list_choices`` imply (for
    every route in). Keyword arguments are :class:`OptionInfo`'s fields."""
    info = OptionInfo(help=help, **facts)
    validators: list[Any] = []
    if info.rule is not None:
        validators.append(_number(info.rule))
    if info.list_choices is not None:
        validators.append(_pieces(info.list_choices, ""))
    if info.choices is not None:
        validators.append(_choice(info.choices))
    return _Marked(info, tuple(validators))


@dataclass(frozen=True)
class _Marked:
    """:func:`opt`'s result: pydantic reads the validators through
    ``__get_pydantic_core_schema__``; the CLI finds :attr:`info` in the field's
    metadata."""

    info: OptionInfo
    validators: tuple[Any, ...]

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema = handler(source)
        for check in reversed(self.validators):  # the first runs first
            schema = core_schema.no_info_before_validator_function(check, schema)
        return schema


def option_info(metadata: Sequence[Any]) -> OptionInfo | None:
    """The :class:`OptionInfo` in a pydantic field's ``metadata`` list, or ``None``."""
    for item in metadata:
        if isinstance(item, _Marked):
            return item.info
        if isinstance(item, OptionInfo):
            return item
    return None
