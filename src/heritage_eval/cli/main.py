"""``heritage-eval`` command line: run, score, list and per-benchmark command groups.

The parser is built by :mod:`heritage_eval.cli.parser`; a plain ``--help`` request may be
answered from :mod:`heritage_eval.cli.help_cache` without building it."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from heritage_eval.cli import help_cache

if TYPE_CHECKING:
    import argparse
    from pathlib import Path


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser (:func:`heritage_eval.cli.parser.build_parser`): every
    registered command is listed; only the command named in ``argv`` (all of them when
    ``argv`` is ``None``) gets its options."""
    from heritage_eval.cli.parser import build_parser as build

    return build(argv)


def _list() -> int:
    from heritage_eval.benchmarks import registry
    from heritage_eval.cli.parser import PLATFORM_HELP, run_table, score_table
    from heritage_eval.core.backends import registered_backends

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
    ends the process within seconds (:mod:`heritage_eval.cli.interrupts`). Once a stop
    signal came during the command, the exit status is ``128 + signal`` (130, 143) of the
    first one, whatever the command returned (:func:`_stopped_status`); a later
    ``KeyboardInterrupt`` (a second signal in the command's clean-up) ends it quietly."""
    from heritage_eval.cli.interrupts import received_signal, stop_on_signals
    from heritage_eval.core.redact_streams import redacting_std_streams

    opened_before = _caches_opened()
    code: int | None = None
    try:
        with redacting_std_streams(), stop_on_signals():
            try:
                code = _main(argv)
            except SystemExit:  # --help, usage errors: flush what argparse printed
                sys.stdout.flush()
                raise
            except KeyboardInterrupt:  # before the command's handler ran (parsing,
                # importing), or a second signal in its own report of the first
                _said_interrupted(opened_before, "interrupted before the command started: "
                                                 "nothing was written")
                code = 128 + (received_signal() or 2)  # 130 Ctrl-C, 143 SIGTERM
            else:
                sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
            finally:
                _reset_outside_allowed()  # the next in-process call starts from the default
    except BrokenPipeError:
        return _closed_pipe()
    except KeyboardInterrupt:  # a stop signal in the block's own exit (cli/interrupts.py)
        code = None
    except SystemExit:
        if received_signal() is None:
            raise
        code = None
    return _stopped_status(code, opened_before)


def _stopped_status(code: int | None, opened_before: int) -> int:
    """``code``, or ``128 + signal`` when a stop signal came during the command (then,
    unless the command returned that status itself and so reported the interruption,
    one ``interrupted`` line on stderr). ``None``: the command was cut without a status
    (a signal in its exit): ``128 + signal``, or 130 when no signal was recorded."""
    from heritage_eval.cli.interrupts import received_signal

    sig = received_signal()
    if sig is None and code is not None:
        return code
    sig = sig or 2  # (a KeyboardInterrupt that no signal sent: as Ctrl-C)
    if code != 128 + sig:
        ending = "interrupted: the stop signal came as the command was ending"
        with contextlib.suppress(Exception):  # a closed or broken stderr: the status stands
            if code is None:  # cut in its exit: what was received is cached, if anything
                _said_interrupted(opened_before, f"{ending}; what it wrote is kept")
            else:  # it returned: its work is done, nothing to resume
                print(f"\n{ending} (it returned {code}); what it wrote is kept",
                      file=sys.stderr)
    return 128 + sig


def _said_interrupted(opened_before: int, otherwise: str) -> None:
    """Print the line for an interruption that the command did not report itself: the
    cached responses when a response cache was opened since ``opened_before``, else
    ``otherwise``."""
    if _caches_opened() > opened_before:
        print("interrupted: responses received so far are cached; re-run the same "
              "command to resume", file=sys.stderr)
    else:
        print(otherwise, file=sys.stderr)


def _reset_outside_allowed() -> None:
    """Forget ``--allow-outside-paths`` (:func:`heritage_eval.core.paths.set_outside_allowed`);
    nothing to forget when that module was never imported (a help served from the
    cache)."""
    paths = sys.modules.get("heritage_eval.core.paths")
    if paths is not None:
        paths.set_outside_allowed(None)


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
    own = argv is None  # the process's own command line: its help may come from the cache
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # what the parser's version action (cli/parser.py) prints,
        # without building the parser
        from heritage_eval import __version__

        sys.stdout.write(f"heritage-eval {__version__}\n")
        raise SystemExit(0)
    words = help_cache.help_words(argv) if own else None
    recorder = None
    if words is not None:
        text = help_cache.cached_help(words)
        if text is not None:  # what argparse's --help would print, then exit 0
            sys.stdout.write(text)
            raise SystemExit(0)
        recorder = help_cache.Recorder().start()
    try:
        return _run(argv, recorder, words or ())
    finally:
        if recorder is not None:
            recorder.stop()


def _caches_opened() -> int:
    """Response caches this process has opened (0 when the cache module was never
    imported: no command used one)."""
    cache = sys.modules.get("heritage_eval.core.cache")
    return 0 if cache is None else int(cache.caches_opened())


def _run(argv: list[str], recorder: help_cache.Recorder | None,
         words: tuple[str, ...]) -> int:
    import logging

    from heritage_eval.cli import suggest
    from heritage_eval.cli.log_format import console_handler
    from heritage_eval.cliargs.common import configure_from_options
    from heritage_eval.core import redact
    from heritage_eval.core.redact_streams import install_log_filter

    opened_before = _caches_opened()  # response caches opened before this command
    parser = suggest.install(build_parser(argv), argv)  # did-you-mean on usage errors
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        if recorder is not None and exc.code == 0:
            help_cache.store(recorder, words, parser)  # the help just printed
        raise
    redact.register_options(vars(args))  # every key, password and URL credential in use
    configure_from_options(args)  # --allow-outside-paths, where a command has it
    verbose = bool(getattr(args, "verbose", False))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        handlers=[console_handler()])  # "warning: …", as other messages
    install_log_filter()
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

        if _caches_opened() > opened_before:
            print("interrupted: responses received so far are cached; re-run the same "
                  "command to resume", file=sys.stderr)
        elif getattr(args, "no_cache", False):
            print("interrupted: nothing was cached (--no-cache); a re-run of the same "
                  "command starts again", file=sys.stderr)
        else:  # no response cache opened (yet): nothing to resume from
            print("interrupted: the command stopped before it finished", file=sys.stderr)
        return 128 + (received_signal() or 2)  # 130 for Ctrl-C, 143 for SIGTERM
    except ValueError as exc:
        if not _is_model_spec_error(exc):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _is_model_spec_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a :class:`~heritage_eval.core.backends.ModelSpecError` (a
    ``ValueError``: neither an ``OSError`` nor a ``RuntimeError``, so testing it after
    those clauses changes nothing). Looked up in ``sys.modules``: when the model backends
    were never imported, none of their errors was raised, and a command's start-up does
    not import them for this test."""
    backends = sys.modules.get("heritage_eval.core.backends")
    return backends is not None and isinstance(exc, backends.ModelSpecError)


if __name__ == "__main__":
    sys.exit(main())
