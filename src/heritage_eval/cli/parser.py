"""The argument parser of ``heritage-eval``: every registered command is listed, and only
the command named on the command line gets its options (:func:`build_parser`), so that
``--help``, ``--version`` and ``list`` import nothing heavy. The tables of ``run NAME``
and ``score NAME`` come from the plug-ins' declarations
(:mod:`heritage_eval.core.plugins`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from heritage_eval import __version__
from heritage_eval.benchmarks import registry
from heritage_eval.core import plugins

_FMT = argparse.RawDescriptionHelpFormatter


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser. Every registered command is listed; only the command named
    in ``argv`` (all of them when ``argv`` is ``None``) gets its options, so that
    nothing heavy is imported for ``--help``, ``--version`` or ``list``. Only the
    plug-ins' declarations are loaded (:func:`heritage_eval.core.plugins.load_declarations`),
    not the model backends."""
    plugins.load_declarations()
    _register_platform_groups()
    chosen = None if argv is None else _command_words(argv)
    parser = argparse.ArgumentParser(
        prog="heritage-eval", formatter_class=_FMT,
        description="Evaluate vision-language models and OCR systems on cultural-heritage "
                    "benchmarks (Ancient-Bench, HCSU, MUSE; Chronicles-OCR and other "
                    "plug-ins when installed: 'heritage-eval list' shows them), and build "
                    "those benchmarks.",
        epilog="Examples:\n"
               "  heritage-eval run ancient-bench --data data/demo/ancient_bench "
               "--model rapidocr --out runs/demo\n"
               "  heritage-eval score ancient-bench --data GT_DIR --predictions PRED_DIR "
               "--out runs/scored\n"
               "  heritage-eval list")
    parser.add_argument("--version", action="version", version=f"heritage-eval {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run a model on a benchmark and score it",
                         description="Run a model on a benchmark and score it; or, with "
                                     "--config, every model x benchmark of a suite file.",
                         formatter_class=_FMT, epilog=SUITE_EPILOG)
    run.add_argument("--config", type=Path, default=None, metavar="FILE.yaml",
                     help="run a suite: models x benchmarks with their options (YAML or "
                          "JSON; see below); one run folder per (benchmark, model) and "
                          "OUT/suite.md; re-running resumes")
    _add_table(run, run_table(), "benchmark", _pick(chosen, "run"))
    score = sub.add_parser("score", help="score predictions made elsewhere",
                           description="Score predictions produced by another tool.")
    _add_table(score, score_table(), "benchmark", _pick(chosen, "score"))
    sub.add_parser("list", help="list benchmarks, commands and model backends",
                   description="List benchmarks, commands and model backends.")
    for group, (group_help, table) in sorted(registry.GROUPS.items()):
        gp = sub.add_parser(group, help=group_help, description=group_help)
        _add_table(gp, table, "subcommand", _pick(chosen, group))
    for name, target in sorted(PLATFORM_COMMANDS.items()):
        entry = registry.LazyCommand(name, PLATFORM_HELP[name], target)
        full = chosen is None or (len(chosen) >= 1 and chosen[0] == name)
        cmd = entry.resolve() if full else None
        p = sub.add_parser(name, help=entry.help, formatter_class=_FMT, allow_abbrev=False,
                           description=cmd.description if cmd else entry.help)
        if cmd is not None:
            cmd.add_args(p)
            p.set_defaults(_handler=cmd.handler)
    return parser


#: top-level platform commands (any benchmark): name -> "module:Command attribute"
PLATFORM_COMMANDS = {"compare": "heritage_eval.cli.compare_cmd:COMPARE",
                     "view": "heritage_eval.cli.view_cmd:VIEW"}
PLATFORM_HELP = {"compare": "compare runs of one benchmark: models table with intervals, "
                            "paired differences, samples where models disagree",
                 "view": "browse every sample of one or more runs: a static HTML site "
                         "(opens from disk; --serve for very large runs)"}

SUITE_EPILOG = """suite file (run --config FILE.yaml):
  out: runs/suite                  # each run in OUT/<benchmark>/<model>
  options: {limit: 5}              # any run option, for every run
  models: [rapidocr, {model: "openai:NAME", base_url: "http://localhost:8000/v1"}]
  benchmarks:
    - ancient-bench: {data: data/demo/ancient_bench}
"""


class _RunEntry(registry.LazyCommand):
    """``run NAME`` of a registered benchmark, built when chosen
    (:func:`heritage_eval.cli.run_cmd.benchmark_command`)."""

    def resolve(self) -> registry.Command:
        from heritage_eval.cli.run_cmd import benchmark_command

        try:
            bench = plugins.benchmark(self.name)
        except plugins.PluginError as exc:  # a broken plug-in: one line, exit 2
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        return benchmark_command(bench)


def run_table() -> dict[str, registry.Entry]:
    """``run NAME`` of every registered benchmark (plug-ins included)."""
    return {name: _RunEntry(name, plugins.benchmark_help(name), name)
            for name in plugins.benchmark_names()}


class _ScoreEntry(registry.LazyCommand):
    """``score NAME`` of a plug-in with typed score options, built when chosen."""

    def resolve(self) -> registry.Command:
        from heritage_eval.cli.score_cmd import typed_score_command

        return typed_score_command(self.name)


def score_table() -> dict[str, registry.Entry]:
    """``score NAME``: the registered score commands and the typed ones of plug-ins."""
    table: dict[str, registry.Entry] = dict(registry.SCORE)
    for name, (_, help_text) in plugins.typed_scorers().items():
        table.setdefault(name, _ScoreEntry(name, help_text, name))
    return table


def _register_platform_groups() -> None:
    """The platform's own group commands (``export predictions``), once."""
    group = registry.GROUPS.get("export", ("", {}))[1]
    if "predictions" not in group:
        registry.register_group_command(
            "export", "export a run or a benchmark in other formats", registry.LazyCommand(
                "predictions", "write an Ancient-Bench run's answers in the official "
                "predictions layout", "heritage_eval.cli.export_cmd:EXPORT_PREDICTIONS"))


def _command_words(argv: Sequence[str]) -> tuple[str, ...]:
    """The first two words of ``argv`` that are not options (command, sub-command)."""
    words = [a for a in argv if not a.startswith("-")]
    return tuple(words[:2])


def _pick(chosen: tuple[str, ...] | None, command: str) -> str | bool | None:
    """Which sub-command of ``command`` gets its options: ``True`` every one (full
    parser), a name, or ``None`` (none: the command was not chosen)."""
    if chosen is None:
        return True
    if len(chosen) >= 2 and chosen[0] == command:
        return chosen[1]
    return None


def _add_table(parent: argparse.ArgumentParser, table: dict[str, registry.Entry],
               dest: str, build: str | bool | None) -> None:
    sp = parent.add_subparsers(dest=dest, metavar=dest.upper())
    for name, entry in sorted(table.items()):
        full = build is True or build == name
        cmd = registry.resolve(entry) if full else None
        description = cmd.description if cmd is not None and cmd.description else entry.help
        # No prefix matching of long options: '--k 8' must not silently mean '--ks 8'.
        p = sp.add_parser(name, help=entry.help, description=description,
                          formatter_class=_FMT, allow_abbrev=False)
        if cmd is not None:
            cmd.add_args(p)
            p.add_argument("-v", "--verbose", action="store_true",
                           default=argparse.SUPPRESS, help="log debug messages")
            p.set_defaults(_handler=cmd.handler)
