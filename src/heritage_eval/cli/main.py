"""``heritage-eval`` command line: run, score, list and per-benchmark command groups."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from heritage_eval import __version__
from heritage_eval.benchmarks import registry
from heritage_eval.cli import suggest
from heritage_eval.core import plugins
from heritage_eval.core.backends import ModelSpecError, registered_backends

_FMT = argparse.RawDescriptionHelpFormatter


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser. Every registered command is listed; only the command named
    in ``argv`` (all of them when ``argv`` is ``None``) gets its options, so that
    nothing heavy is imported for ``--help``, ``--version`` or ``list``."""
    registry.load_all()
    _register_platform_groups()
    chosen = None if argv is None else _command_words(argv)
    parser = argparse.ArgumentParser(
        prog="heritage-eval", formatter_class=_FMT,
        description="Evaluate vision-language models and OCR systems on cultural-heritage "
                    "benchmarks (Ancient-Bench, HCSU, MUSE), and build those benchmarks.",
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


def _list() -> int:
    print("run (model evaluations):")
    for name, cmd in sorted(run_table().items()):
        print(f"  {name:26s} {cmd.help}")
    print("score (predictions made elsewhere):")
    for name, cmd in sorted(score_table().items()):
        print(f"  {name:26s} {cmd.help}")
    for group, (_, table) in sorted(registry.GROUPS.items()):
        print(f"{group}:")
        for name, cmd in sorted(table.items()):
            print(f"  {name:26s} {cmd.help}")
    print("runs of any benchmark:")
    for name, text in sorted(PLATFORM_HELP.items()):
        print(f"  {name:26s} {text}")
    print(f"  {'run --config FILE':26s} a suite: models x benchmarks from one YAML file")
    print("model backends (--model):")
    for prefix, entry in registered_backends().items():
        print(f"  {prefix:26s} {entry.help}")
        for key, meaning in sorted(entry.option_keys.items()):
            print(f"  {'':26s}   --model-option {key}=…  {meaning}")
    return 0


def _suite(config: Path) -> int:
    from heritage_eval.core.config import OptionsError
    from heritage_eval.suite import SuiteConfigError, run_suite, suite_ok

    try:
        entries = run_suite(config)
    except (SuiteConfigError, OptionsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for e in entries:
        print(f"{e.status:16s} {e.benchmark:22s} {e.model}")
    root = entries[0].out.parent.parent if entries else config.parent
    print(f"suite summary: {root / 'suite.md'}", file=sys.stderr)
    return 0 if suite_ok(entries) else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code.

    Everything the command prints — errors, warnings, log lines, tables — passes through
    the process-wide secret redactor (:mod:`heritage_eval.core.redact`): API keys, zip
    passwords and URL credentials appear as ``***``. SIGTERM acts as Ctrl-C, and either
    ends the process within seconds (:mod:`heritage_eval.cli.interrupts`; exit status
    ``128 + signal``)."""
    from heritage_eval.cli.interrupts import stop_on_signals
    from heritage_eval.core.paths import set_outside_allowed
    from heritage_eval.core.redact import redacting_std_streams

    try:
        with redacting_std_streams(), stop_on_signals():
            try:
                code = _main(argv)
            except SystemExit:  # --help, usage errors: flush what argparse printed
                sys.stdout.flush()
                raise
            else:
                sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
                return code
            finally:
                set_outside_allowed(None)  # the next in-process call starts from the default
    except BrokenPipeError:
        return _closed_pipe()


#: How ``pathlib`` (Python < 3.13) words a symbolic-link loop it met in ``resolve()``.
SYMLINK_LOOP = "Symlink loop from "

#: Exit status when the reader of stdout went away (``| head``): 128 + SIGPIPE, as a
#: shell reports a process that SIGPIPE ended.
EXIT_BROKEN_PIPE = 141


def _closed_pipe() -> int:
    """The reader of stdout closed the pipe (``heritage-eval list | head -1``): no
    traceback; stdout is pointed at the null device so that the interpreter's final
    flush cannot fail again (the Python documentation's advice for SIGPIPE, library
    ``signal`` module, "Note on SIGPIPE"). Returns :data:`EXIT_BROKEN_PIPE`."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor
        pass
    return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    from heritage_eval.cliargs.common import configure_from_options
    from heritage_eval.core import redact

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = suggest.install(build_parser(argv), argv)  # did-you-mean on usage errors
    args = parser.parse_args(argv)
    redact.register_options(vars(args))  # every key, password and URL credential in use
    configure_from_options(args)  # --allow-outside-paths, where a command has it
    verbose = bool(getattr(args, "verbose", False))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    redact.install_log_filter()
    if not verbose:  # one INFO line per HTTP request would flood the progress bar;
        # torch prints its FakeTensor cache statistics at INFO when the process exits
        for noisy in ("httpx", "httpcore", "torch"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "list":
        return _list()
    if args.command == "run" and getattr(args, "config", None) is not None \
            and getattr(args, "_handler", None) is None:
        return _suite(args.config)
    handler = getattr(args, "_handler", None)
    if handler is None:  # e.g. 'heritage-eval run' without a benchmark
        print(f"error: '{args.command}' needs a sub-command; see 'heritage-eval "
              f"{args.command} --help'", file=sys.stderr)
        return 2
    try:
        return int(handler(args))
    except ModelSpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise  # the reader of stdout went away: main() ends quietly
    except OSError as exc:  # unwritable --out, unreadable input outside a sample, …
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        if not str(exc).startswith(SYMLINK_LOOP):
            raise
        # Python < 3.13: Path.resolve() reports a symbolic-link loop (ELOOP, an OSError
        # in os.stat and open) as RuntimeError("Symlink loop from '…'")
        print(f"error: {exc}: a symbolic link that leads back to itself", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        from heritage_eval.cli.interrupts import received_signal

        print("interrupted: responses received so far are cached; re-run the same command "
              "to resume", file=sys.stderr)
        return 128 + (received_signal() or 2)  # 130 for Ctrl-C, 143 for SIGTERM


if __name__ == "__main__":
    sys.exit(main())
