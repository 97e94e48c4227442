"""Did-you-mean suggestions for mistyped sub-command names and options.

Python 3.11's :mod:`argparse` has no ``suggest_on_error`` (added in 3.14), so a typo such
as ``heritage-eval run ancient-bnch`` or ``--catgories`` only says "invalid choice" /
"unrecognized arguments". :func:`install` wraps the ``error`` method of a parser and of
every sub-parser below it so that such a message ends with the closest names
(:mod:`difflib`, cutoff :data:`CUTOFF`)::

    error: argument benchmark: invalid choice: 'ancient-bnch' (choose from …)
           (did you mean 'ancient-bench'?)
    error: unrecognized arguments: --catgories seals (did you mean '--categories'?)
    error: the following arguments are required: --data (did you mean '--data'?)  # --dat

:func:`hint` computes the suffix alone (``""`` when nothing is close), for callers that
format their own messages.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Iterator
from typing import NoReturn

#: ``difflib.get_close_matches`` cutoff (0–1, higher = stricter).
CUTOFF = 0.6

_CHOICE = re.compile(r"invalid choice: '([^']*)'")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (.*)$")


def walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and every sub-parser below it (depth first)."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from walk(sub)


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    out: list[str] = []
    for action in parser._actions:
        if action.choices is not None:
            out.extend(str(c) for c in action.choices)
    return out


def _options(parsers: Iterable[argparse.ArgumentParser]) -> list[str]:
    return sorted({o for p in parsers for a in p._actions for o in a.option_strings
                   if o.startswith("--")})


def _did_you_mean(words: list[str]) -> str:
    return " (did you mean " + " or ".join(repr(w) for w in words) + "?)" if words else ""


def _option_matches(tokens: Iterable[str], options: list[str]) -> list[str]:
    """The closest known option of each unknown ``--token`` (``--x=1`` counts as ``--x``)."""
    found: list[str] = []
    for token in tokens:
        name = token.split("=", 1)[0]
        if not name.startswith("--") or name == "--" or name in options:
            continue
        found += [c for c in difflib.get_close_matches(name, options, n=1, cutoff=CUTOFF)
                  if c not in found]
    return found


def hint(parser: argparse.ArgumentParser, message: str,
         argv: Iterable[str] | None = None) -> str:
    """The ``" (did you mean …?)"`` suffix for an argparse error ``message`` raised by
    ``parser``: the closest choice for an invalid choice; the closest long option (of
    ``parser`` and its sub-parsers) for each unrecognized ``--option``; with ``argv``,
    also for a mistyped option behind a "required" error (``--modle`` makes ``--model``
    "required"). ``""`` when nothing is close, when the message already holds a
    suggestion, and for a bad value of a known option."""
    if "did you mean" in message:  # the message names its suggestion already
        return ""
    m = _CHOICE.search(message)
    if m:
        return _did_you_mean(difflib.get_close_matches(m[1], _choices(parser), n=1,
                                                       cutoff=CUTOFF))
    m = _UNRECOGNIZED.search(message)
    if m is None and "required" not in message:
        return ""  # a bad value of a known option: no option name to suggest
    tokens = m[1].split() if m else list(argv or ())
    return _did_you_mean(_option_matches(tokens, _options(walk(parser))))


def install(parser: argparse.ArgumentParser,
            argv: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """Make ``parser`` and every sub-parser append :func:`hint` to their usage errors
    (exit status 2 as before). ``argv``: the command line about to be parsed (lets a
    mistyped option be named behind a "required" error). Returns ``parser``. Call it on
    the parser built for the command line, before ``parse_args``."""
    words = list(argv) if argv is not None else None
    for p in list(walk(parser)):

        def error(message: str, _p: argparse.ArgumentParser = p) -> NoReturn:
            argparse.ArgumentParser.error(_p, message + hint(_p, message, words))

        setattr(p, "error", error)  # noqa: B010 (an instance attribute over the method)
    return parser
