"""argparse options generated from typed configuration models, and back.

:func:`add_model_options` adds one option per field of a pydantic model declared with
:func:`~heritage_eval.core.option_spec.opt` (flag, aliases, metavar, help section, the
default shown in the help); every option's argparse default is ``SUPPRESS``, so the
namespace holds only what the user typed and the model's own defaults (or a benchmark's
overrides) apply — the same defaults the Python API gets. :func:`given_values` reads the
namespace back as the keyword dict that
:func:`~heritage_eval.core.config.build_run_config` validates.
"""

from __future__ import annotations

import argparse
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from heritage_eval.cliargs.list_option import ListOption
from heritage_eval.cliargs.option_types import number_type
from heritage_eval.core.config import fields_of
from heritage_eval.core.option_spec import OptionInfo


def _shown(value: Any) -> str | None:
    if value is None or value is False or value == () or value == []:
        return None
    if isinstance(value, tuple | list):
        return " ".join(map(str, value))
    if isinstance(value, Path):
        return str(value)
    return str(value)


def _is_bool(annotation: Any) -> bool:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return annotation is bool or (bool(args) and all(a is bool for a in args))


def _is_sequence(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_is_sequence(a) for a in typing.get_args(annotation))
    return origin in (tuple, list)


def _choices(info: OptionInfo, annotation: Any) -> tuple[str, ...] | None:
    if info.choices is not None:
        return info.choices
    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) is typing.Literal:
            return tuple(str(a) for a in typing.get_args(arg))
    return None


def add_model_options(parser: argparse.ArgumentParser, model: type[BaseModel], *,
                      defaults: Mapping[str, Any] | None = None,
                      helps: Mapping[str, str] | None = None,
                      required: Iterable[str] = (), skip: Iterable[str] = (),
                      groups: dict[str, argparse._ArgumentGroup] | None = None,
                      default_group: str = "options") -> list[str]:
    """Add an option for every field of ``model`` to ``parser``; returns their keywords.

    ``defaults`` / ``helps``: a benchmark's own default or help text of a field (shown in
    ``--help``). ``required``: fields the command needs (shown as required). ``skip``:
    fields left out. ``groups``: help sections already made, by title (shared between
    calls so one section collects the fields of several models). ``default_group``: the
    section of fields that name none."""
    groups = {} if groups is None else groups
    skipped, needed = set(skip), set(required)
    added = []
    for name, info in fields_of(model).items():
        if name in skipped or not info.cli:
            continue
        field = model.model_fields[name]
        default = (defaults or {}).get(name, field.default)
        if default is PydanticUndefined:
            default = None
        title = info.group or default_group
        target: Any = groups.get(title)
        if target is None:
            target = groups[title] = parser.add_argument_group(title)
        help_text = (helps or {}).get(name, info.help)
        if info.list_choices is not None and "choices:" not in help_text.lower():
            help_text += f". Choices: {', '.join(info.list_choices)}"
        shown = _shown(default)
        if shown is not None and "(default" not in help_text:
            help_text += f" (default: {shown})"
        flags = [info.flag_of(name), *info.aliases]
        kwargs: dict[str, Any] = {"dest": name, "default": argparse.SUPPRESS,
                                  "help": help_text}
        annotation = field.annotation
        if _is_bool(annotation):
            kwargs["action"] = (argparse.BooleanOptionalAction if info.negatable
                                else "store_true")
        else:
            kwargs["metavar"] = info.metavar or name.upper()
            choices = _choices(info, annotation)
            if info.list_choices is not None:
                kwargs.update(action=ListOption, list_choices=info.list_choices,
                              canonical=info.canonical)
            elif info.repeat:
                kwargs["action"] = "append"
            elif info.nargs_plus or _is_sequence(annotation):
                kwargs.update(nargs="+", action="extend")  # a repeated flag adds up
            if info.rule is not None:  # refused while parsing: usage line, exit 2
                kwargs["type"] = number_type(info.rule, name)
            if choices is not None and info.list_choices is None:
                kwargs["choices"] = choices
                if info.metavar is None:
                    kwargs.pop("metavar")
        if (name in needed or field.is_required()) and default is None:
            kwargs["required"] = True
        target.add_argument(*flags, **kwargs)
        added.append(name)
    return added


def given_values(args: argparse.Namespace, keys: Iterable[str]) -> dict[str, Any]:
    """The values the user typed for ``keys`` (generated options left at ``SUPPRESS``
    are absent, so the configuration's defaults apply)."""
    values = vars(args)
    return {k: values[k] for k in keys if k in values}
