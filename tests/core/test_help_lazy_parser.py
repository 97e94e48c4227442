"""The parser built for one command line (only the chosen command gets its options,
heritage_eval/cli/parser.py) prints, for that command, the same help as the whole parser
(every command built, what docs/hooks/cli_reference.py renders)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from heritage_eval.cli.main import build_parser


def _walk(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
          ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*words, name))


def _reach(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> argparse.ArgumentParser:
    for word in words:
        (subs,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = subs.choices[word]
    return parser


def test_every_command_help_is_the_full_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # one layout for both
    full = {words: p.format_help() for words, p in _walk(build_parser())}
    assert len(full) > 30  # top level, run, score, the groups and their commands
    differ = [" ".join(words) for words, text in full.items()
              if _reach(build_parser([*words, "--help"]), words).format_help() != text]
    assert differ == []
