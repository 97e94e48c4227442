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

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
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
    ``cli``: ``False`` for a field set only from Python (not an option). ``canonical``:
    for a ``list_choices`` option whose choices hold aliases (an id and its Chinese
    key), the id of a choice (``None``: the choice itself). ``selection``: the option
    selects a subset, so the recorded values of older run folders are read again by
    today's rules (:func:`selection_reader`); every ``list_choices`` option is one.
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
    canonical: Callable[[str], str | None] | None = None
    selection: bool = False

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


def split_list(values: Iterable[object], choices: Sequence[str], option: str,
               canonical: Callable[[str], str | None] | None = None) -> list[str]:
    """The pieces of ``values``: every value split on commas and white space, empty
    pieces dropped; each piece must be one of ``choices``; at least one is needed.
    A list option is a selection: the pieces are returned as ``canonical`` names them
    (aliases to their id; default: as given), each once, in the order of ``choices`` —
    so ``b,a``, ``a b a`` and ``a,b`` are one configuration (one fingerprint, one output
    order). Raises ``ValueError`` naming ``option`` (when not empty), the refused
    piece(s) with the closest choice to each (when one is close) and the choices."""
    pieces = [p for v in values for p in _SEPARATORS.split(str(v))]
    items = list(dict.fromkeys(p for p in pieces if p))
    bad = [p for p in items if p not in choices]
    if bad or not items:
        what = (f"invalid choice(s) {', '.join(map(repr, bad))}{_close(bad, choices)}"
                if bad else "needs at least one value")
        text = (f"{what} (choose from {', '.join(choices)}; separate several with commas "
                "or spaces)")
        raise ValueError(f"{option}: {text}" if option else text)
    chosen = {(canonical(p) or p) if canonical else p for p in items}
    return [c for c in choices if c in chosen]


#: What separates the pieces of a list option's value.
_SEPARATORS = re.compile(r"[,\s]+")


def _number(rule: NumberRange) -> Any:
    def check(value: Any) -> Any:
        if value is None:
            return None
        try:
            return parse_number(value, rule)
        except OptionValueError as exc:
            raise ValueError(str(exc)) from None
    return check


def _pieces(choices: tuple[str, ...], flag: str,
            canonical: Callable[[str], str | None] | None) -> Any:
    def check(value: Any) -> Any:
        if value is None:
            return None
        words = [value] if isinstance(value, str | int | float) else list(value)
        return split_list(words, choices, flag, canonical)
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
        validators.append(_pieces(info.list_choices, "", info.canonical))
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


def selection_reader(model: type[BaseModel]) -> Callable[[str, Any], Any]:
    """``(key, value) -> value`` as ``model``'s selection options read it today (each
    field whose :class:`OptionInfo` has ``list_choices`` or ``selection``), as a list;
    other keys, ``None`` and values today's rules refuse are returned unchanged. Used to
    compare a run folder's recorded configuration with a new one
    (:func:`heritage_eval.core.rundir.check_folder`): a selection recorded in another
    order or spelling (``['Seal', 'Bronze']``) reads as today's
    (``['bronze_rubbings', 'seals']``)."""
    adapters: dict[str, TypeAdapter[Any]] = {}
    for name, field in model.model_fields.items():
        info = option_info(field.metadata)
        if info is not None and (info.selection or info.list_choices is not None):
            adapters[name] = TypeAdapter(field.rebuild_annotation())

    def read(key: str, value: Any) -> Any:
        adapter = adapters.get(key)
        if adapter is None or value is None:
            return value
        try:
            out = adapter.validate_python(value)
        except ValidationError:
            return value
        return list(out) if isinstance(out, tuple | list) else out
    return read
