"""One rule for every numeric option: a finite number of the right kind, inside its range.

Every numeric command-line option (timeouts, concurrency, retries, backoff, token and
image limits, temperature, ``--limit``, Ray workers, …) is read by :func:`parse_number`
with its own :class:`NumberRange`, so ``inf``, ``-inf``, ``nan``, ``1e999``, a negative, a
zero where zero means nothing, a value past the range's upper end and non-numeric text are
all refused *before* anything runs, with a message that says what is accepted. The CLI
wraps :class:`OptionValueError` into its usage error (exit 2, the option named); the
Python API and suite files pass through the same parser and get the same message.

The rule (written out in docs/reference/conventions.md, "Option values"):

- ASCII without ``_`` (``int()`` / ``float()`` would also read other scripts' digits
  and ``1_000``); surrounding spaces are ignored;
- integers: decimal digits with an optional sign (``8.0`` / ``1e3`` are not integers);
  at most :data:`MAX_DIGITS` digits;
- numbers: anything ``float()`` reads that is **finite** (``inf``, ``nan`` and overflowing
  literals such as ``1e999`` are refused);
- then the range: ``low`` (inclusive, or exclusive when ``low_open``) and ``high``
  (inclusive). Each option states its own bounds; :data:`INT_MAX` bounds every integer
  option that has no tighter one (a value a C ``int`` holds: OpenCV, SQLite and asyncio
  take these numbers).

This module never imports ``argparse`` (``core`` stays free of the CLI).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

#: Largest value of any integer option without a tighter bound (2**31 - 1).
INT_MAX = 2**31 - 1
#: Most digits read in an integer option (longer text is refused before conversion).
MAX_DIGITS = 30


class OptionValueError(ValueError):
    """A value outside the option's rule; the message says what is accepted and echoes
    the value given (at most 40 characters of it)."""


@dataclass(frozen=True)
class NumberRange:
    """What one option accepts: ``integer`` or real, ``low`` (``None``: no lower bound;
    exclusive when ``low_open``) and ``high`` (``None``: no upper bound; inclusive).
    ``unit`` is named in messages (e.g. ``"seconds"``)."""

    integer: bool
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    unit: str = ""

    def describe(self) -> str:
        """The accepted values in words, e.g. ``"an integer >= 1 and <= 4096"`` or ``"a
        finite number > 0 and <= 86400 (seconds)"``."""
        kind = "an integer" if self.integer else "a finite number"
        low, high = _fmt(self.low), _fmt(self.high)
        if self.low is not None and self.high is not None:
            text = f"{kind} {'>' if self.low_open else '>='} {low} and <= {high}"
        elif self.low is not None:
            text = f"{kind} {'>' if self.low_open else '>='} {low}"
        elif self.high is not None:
            text = f"{kind} <= {high}"
        else:
            text = kind
        return f"{text} ({self.unit})" if self.unit else text

    def contains(self, value: float) -> bool:
        """Whether a finite ``value`` lies in the range."""
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or value <= self.high


def _fmt(bound: float | None) -> str:
    if bound is None:
        return ""
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def parse_number(text: str | int | float, rule: NumberRange) -> int | float:
    """``text`` read under ``rule`` (see the module docstring): an ``int`` for an integer
    rule, else a finite ``float``. Raises :class:`OptionValueError` otherwise (never
    ``OverflowError`` or another exception). Booleans are refused (``True`` is not 1)."""
    if isinstance(text, bool):
        raise OptionValueError(f"must be {rule.describe()}, got {text!r}")
    raw = text if isinstance(text, str) else repr(text)
    if not raw.isascii() or "_" in raw:  # '٣', '1_0': int() / float() would read them
        raise OptionValueError(f"must be {rule.describe()} in ASCII digits, got {_shown(raw)}")
    value: int | float
    if rule.integer:
        if isinstance(text, float) and not text.is_integer():
            raise OptionValueError(f"must be {rule.describe()}, got {_shown(raw)}")
        stripped = raw.strip().lstrip("+-")
        if isinstance(text, str) and len(stripped) > MAX_DIGITS:
            raise OptionValueError(f"must be {rule.describe()}, got {_shown(raw)}")
        try:
            value = int(text)
        except (ValueError, OverflowError, TypeError):
            raise OptionValueError(f"not an integer: {_shown(raw)} (must be "
                                   f"{rule.describe()})") from None
    else:
        try:
            value = float(text)
        except (ValueError, OverflowError, TypeError):
            raise OptionValueError(f"not a number: {_shown(raw)} (must be "
                                   f"{rule.describe()})") from None
        if not math.isfinite(value):
            raise OptionValueError(f"must be {rule.describe()}, got {_shown(raw)}")
    if not rule.contains(value):
        raise OptionValueError(f"must be {rule.describe()}, got {_shown(raw)}")
    return value


# -- the ranges of the shared options (one place; the CLI and the API read them) ---------

#: Per-request timeout, seconds: above 0, at most a day.
TIMEOUT_S = NumberRange(integer=False, low=0, high=86_400, low_open=True, unit="seconds")
#: Retries of one request.
RETRIES = NumberRange(integer=True, low=0, high=100)
#: Conversations (or requests) in flight at once.
CONCURRENCY = NumberRange(integer=True, low=1, high=4096)
#: Sampling temperature (the OpenAI API's range).
TEMPERATURE = NumberRange(integer=False, low=0, high=2)
#: New tokens per answer.
MAX_TOKENS = NumberRange(integer=True, low=1, high=1_000_000)
#: Longest image side, pixels.
MAX_SIDE = NumberRange(integer=True, low=1, high=100_000, unit="pixels")
#: Pixels (width x height) of one image.
MAX_PIXELS = NumberRange(integer=True, low=1, high=1_000_000_000)
#: Samples / items per unit (``--limit``) and other counts of inputs.
COUNT = NumberRange(integer=True, low=1, high=INT_MAX)
#: Ray backend replicas.
RAY_WORKERS = NumberRange(integer=True, low=1, high=10_000)
#: Wait between retries, seconds (0: none).
BACKOFF_S = NumberRange(integer=False, low=0, high=3_600, unit="seconds")
#: A request seed (a signed 64-bit integer, as the OpenAI API takes).
SEED = NumberRange(integer=True, low=-(2**63), high=2**63 - 1)
#: A seed of a sampling or data split (what NumPy's generators take: 0 to 2**32 - 1).
DATA_SEED = NumberRange(integer=True, low=0, high=2**32 - 1)
#: A TCP port (0: any free port).
PORT = NumberRange(integer=True, low=0, high=65_535)


def check_path_text(name: str, value: object) -> None:
    """Raise ``ValueError`` naming option ``name`` when ``value`` is a path that is not
    UTF-8 text (a byte such as 0x80 in a folder name: ``os.fsdecode`` gives a lone
    surrogate), which ``run.json`` and the run's fingerprint cannot record; the path is
    shown with the byte escaped. Anything else passes."""
    if not isinstance(value, os.PathLike):
        return
    text = os.fspath(value)
    if not isinstance(text, str):
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start].encode("utf-8", "surrogateescape")
        shown = os.fsencode(text).decode("utf-8", "backslashreplace")
        raise ValueError(f"{name}: the path {shown} holds the byte 0x{bad.hex()} (not UTF-8 "
                         "text), which a run folder cannot record: rename that folder or "
                         "file") from None
