"""The command line: every command and option documented, clear errors, list output."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from heritage_eval.cli.main import build_parser, main


def _walk(parser: argparse.ArgumentParser, path: str = "heritage-eval"
          ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{path} {name}")


def test_every_option_of_every_command_has_help_text() -> None:
    undocumented = []
    commands = 0
    for path, parser in _walk(build_parser()):
        commands += 1
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                undocumented.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert commands >= 4  # top level, run, score, list at the very least
    assert undocumented == []


def test_list_names_backends_and_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("openai", "rapidocr", "baseline:random"):
        assert name in out


def test_unknown_model_is_a_clear_error(tmp_path: object,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from heritage_eval.models.base import UnknownModelError, create_backend

    with pytest.raises(UnknownModelError, match="unknown model 'nosuch:x'; known backends"):
        create_backend("nosuch:x")


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: heritage-eval" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [["--limit", "0"], ["--max-side", "0"], ["--max-pixels", "-5"],
                                 ["--concurrency", "0"], ["--retries", "-1"], ["--timeout", "0"],
                                 ["--max-tokens", "0"], ["--temperature", "-1"],
                                 ["--limit", "abc"]])
def test_out_of_range_numbers_are_refused(bad: list[str], tmp_path: object,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "ancient-bench", "--data", ".", "--out", str(tmp_path), *bad]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert bad[0] in capsys.readouterr().err


def test_group_without_subcommand_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run"]) == 2
    assert "needs a sub-command" in capsys.readouterr().err


def test_bad_model_spec_is_a_clean_error(tmp_path: object,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    data = Path(str(tmp_path)) / "data" / "seals"
    data.mkdir(parents=True)
    (data / "conv.jsonl").write_text('{"image": "a.png", "human_gt": "長樂"}\n', encoding="utf-8")
    argv = ["run", "ancient-bench", "--data", str(data.parent), "--out",
            str(Path(str(tmp_path)) / "out"), "--model", "openai"]
    assert main(argv) == 2
    assert "needs a model name" in capsys.readouterr().err


def test_long_options_are_not_abbreviated(capsys: pytest.CaptureFixture[str]) -> None:
    # '--dat' would otherwise be taken as '--data'.
    with pytest.raises(SystemExit) as exc:
        main(["score", "ancient-bench", "--dat", "x", "--predictions", "y", "--out", "z"])
    assert exc.value.code == 2
    assert "the following arguments are required: --data" in capsys.readouterr().err


def test_library_loggers_are_quiet_unless_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    # at INFO, httpx logs one line per request and torch its FakeTensor cache statistics
    # when the process exits (seen after Ctrl-C of hcsu-description): WARNING for them
    import logging

    for name in ("httpx", "httpcore", "torch"):
        logging.getLogger(name).setLevel(logging.NOTSET)
    assert main(["list"]) == 0
    capsys.readouterr()
    assert all(logging.getLogger(n).level == logging.WARNING
               for n in ("httpx", "httpcore", "torch"))


def test_the_cache_line_counts_cached_answers_over_every_model() -> None:
    # model a: 3 of 5 records answered from the cache, model b: 0 of 2 -> 3 of 7
    from heritage_eval.core.engine import cache_line

    summary = {"models": {"a": {"n_records": 5, "response_outcomes": {"cached": 3}},
                          "b": {"n_records": 2, "response_outcomes": {"finish:stop": 2}}}}
    assert cache_line(summary) == "answers from the cache (cache.sqlite): 3 of 7 record(s)"
    assert cache_line({"models": {}}) is None
