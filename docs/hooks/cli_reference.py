"""MkDocs hook: the command-line reference, generated from the parsers at build time.

``heritage-eval``'s argument parser is built in-process with every registered command
resolved (:func:`heritage_eval.cli.main.build_parser` with ``argv=None`` loads the whole
lazy registry: benchmark packages, plug-ins, curator and paper commands, platform
commands). Each parser and sub-parser, walked depth first in the order ``--help`` lists
them, contributes one section holding its ``--help`` text verbatim. The page is added to
the site as a generated file (:data:`PAGE`); nothing is written into ``docs/``.

The help text is formatted at a fixed width (:data:`WIDTH` columns), so the page does not
depend on the terminal that runs ``mkdocs build``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

#: where the generated page lives in the site (the nav names this path)
PAGE = "reference/cli.md"
#: columns the help text is wrapped at
WIDTH = 100
_SRC = Path(__file__).resolve().parents[2] / "src"

INTRO = """# Command-line reference

This page is generated when the site is built: every section below is the `--help` text of
one `heritage-eval` command, taken from the same parser the command line uses, so it cannot
drift from the code. Commands are listed in the order `heritage-eval --help` gives them;
a command group (such as `hcsu` or `paper`) is followed by each of its sub-commands.

The rules every command shares (option values, list options, exit statuses, signals) are
in [Conventions](conventions.md); the model specs accepted by `--model` are in
[Models](models.md).
"""


def walk(parser: argparse.ArgumentParser,
         words: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                        argparse.ArgumentParser]]:
    """Every parser under ``parser`` (itself first), with the words after
    ``heritage-eval`` that reach it, depth first in listing order."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*words, name))


def full_parser() -> argparse.ArgumentParser:
    """The complete ``heritage-eval`` parser: every command of the registry, resolved."""
    if str(_SRC) not in sys.path:
        sys.path.insert(0, str(_SRC))
    from heritage_eval.cli.main import build_parser

    return build_parser(None)


def help_text(parser: argparse.ArgumentParser) -> str:
    """``parser``'s ``--help`` text at :data:`WIDTH` columns."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)
    try:
        return parser.format_help().rstrip() + "\n"
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _anchor(words: tuple[str, ...]) -> str:
    return "-".join(("heritage-eval", *words))


def render(parser: argparse.ArgumentParser) -> str:
    """The whole Markdown page: :data:`INTRO`, a contents list, then one section per
    command (heading ``heritage-eval WORDS``, a ``text`` block with its help)."""
    parsers = list(walk(parser))
    lines = [INTRO, "## Commands", ""]
    for words, _ in parsers[1:]:
        indent = "    " * (len(words) - 1)
        lines.append(f"{indent}- [`{' '.join(words)}`](#{_anchor(words)})")
    lines.append("")
    for words, sub in parsers:
        title = " ".join(("heritage-eval", *words))
        level = "#" * min(2 + len(words), 4) if words else "##"
        lines += [f"{level} `{title}` {{#{_anchor(words)}}}", "", "```text",
                  help_text(sub).replace("```", "'''"), "```", ""]
    return "\n".join(lines)


def on_files(files: Files, config: Any) -> Files:
    """Add the generated :data:`PAGE` to the site's files."""
    files.append(File.generated(config, PAGE, content=render(full_parser())))
    return files
