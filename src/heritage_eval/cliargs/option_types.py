"""argparse types for numeric options, all read by one rule
(:func:`heritage_eval.core.option_checks.parse_number`): a refused value is a usage error
(exit 2) naming the option and its accepted range. Light at import (argparse and
``core.option_checks`` only), so the commands that keep their import light can use it."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from heritage_eval.core import option_checks as checks
from heritage_eval.core.option_checks import NumberRange, OptionValueError, parse_number


def number_type(rule: NumberRange, name: str = "") -> Callable[[str], int | float]:
    """An argparse ``type=`` for a numeric option read by
    :func:`heritage_eval.core.option_checks.parse_number` under ``rule``: a value the rule
    refuses (``inf``, ``nan``, out of range, not a number) is a usage error (exit 2) whose
    message names the option and the accepted range. ``name`` is the type's name in
    argparse's own messages."""
    def convert(text: str) -> int | float:
        try:
            return parse_number(text, rule)
        except OptionValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name or ("int" if rule.integer else "float")
    setattr(convert, "rule", rule)  # noqa: B010  (read by the option-value tests)
    return convert


def int_option(rule: NumberRange, name: str = "int") -> Callable[[str], int]:
    """:func:`number_type` of an integer ``rule``, typed ``int``."""
    conv = number_type(rule, name)

    def convert(text: str) -> int:
        return int(conv(text))

    convert.__name__ = name
    setattr(convert, "rule", rule)  # noqa: B010
    return convert


def float_option(rule: NumberRange, name: str = "float") -> Callable[[str], float]:
    """:func:`number_type` of a real ``rule``, typed ``float``."""
    conv = number_type(rule, name)

    def convert(text: str) -> float:
        return float(conv(text))

    convert.__name__ = name
    setattr(convert, "rule", rule)  # noqa: B010
    return convert


#: argparse type: an integer from 1 to 2**31 - 1.
positive_int = int_option(checks.COUNT, "positive_int")
#: argparse type: an integer from 0 to 2**31 - 1.
non_negative_int = int_option(checks.NumberRange(integer=True, low=0, high=checks.INT_MAX),
                              "non_negative_int")
#: argparse type: a finite number > 0.
positive_float = float_option(checks.NumberRange(integer=False, low=0, low_open=True),
                              "positive_float")
#: argparse type: a sampling temperature in [0, 2].
temperature_value = float_option(checks.TEMPERATURE, "temperature_value")
