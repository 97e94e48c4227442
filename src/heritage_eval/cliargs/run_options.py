"""The options of a ``run``-like command, generated from the typed configuration: the
benchmark's own (its ``Options`` model) and the platform's sections (model, decoding,
caching and output, run folder, execution), with the benchmark's defaults shown.

:func:`add_run_options` builds the parser; :func:`run_config_from_args` reads the parsed
namespace back into a :class:`~heritage_eval.core.config.RunConfig` through
:func:`~heritage_eval.core.config.build_run_config` — the same function the Python API
calls, so a value is accepted or refused alike on both routes.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from typing import Any

from heritage_eval.cliargs.generate import add_model_options, given_values
from heritage_eval.core.config import (
    SECTIONS,
    BenchmarkOptions,
    OptionsError,
    RunConfig,
    build_run_config,
)

#: The help sections of a run command, in order (the benchmark's own come first).
SECTION_TITLES = ("benchmark options", "model", "caching and output", "run folder", "execution")


def run_option_keys(options_type: type[BenchmarkOptions],
                    skip: Iterable[str] = ()) -> list[str]:
    """Every option keyword of a run command with ``options_type``."""
    skipped = set(skip)
    keys = [k for k in options_type.model_fields if k not in skipped]
    for model in SECTIONS.values():
        keys += [k for k in model.model_fields if k not in skipped]
    return keys


def add_run_options(parser: argparse.ArgumentParser, options_type: type[BenchmarkOptions],
                    *, defaults: Mapping[str, Any] | None = None,
                    helps: Mapping[str, str] | None = None,
                    required: Iterable[str] = ("out", "model"),
                    skip: Iterable[str] = (), title: str = "benchmark options") -> None:
    """Add the benchmark's options then the platform's to ``parser``.

    ``defaults``: the benchmark's defaults of platform options (shown in the help and
    applied when the option is not given). ``helps``: a field's help worded for this
    benchmark (e.g. ``limit``). ``required``: platform options the command needs.
    ``skip``: options this command does not have. ``title``: the help section of the
    benchmark's own options."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    need = set(required) - set((defaults or {}).keys())
    add_model_options(parser, options_type, defaults=defaults, helps=helps, required=need,
                      skip=skip, groups=groups, default_group=title)
    for model in SECTIONS.values():
        add_model_options(parser, model, defaults=defaults, helps=helps, required=need,
                          skip=skip, groups=groups)


def run_config_from_args(args: argparse.Namespace, benchmark: str,
                         options_type: type[BenchmarkOptions], *,
                         defaults: Mapping[str, Any] | None = None,
                         required: tuple[str, ...] = ("out", "model"),
                         skip: Iterable[str] = ()) -> RunConfig:
    """The :class:`RunConfig` of a parsed run command. Raises
    :class:`~heritage_eval.core.config.OptionsError` (a usage error, exit 2) naming the
    option by its flag."""
    values = given_values(args, run_option_keys(options_type, skip))
    return build_run_config(benchmark, options_type, values, defaults=defaults,
                            required=required, cli=True)


__all__ = ["OptionsError", "add_run_options", "run_config_from_args", "run_option_keys"]
