"""The light modules split out for the command line's start-up (issue 23) say the same
as the modules they stand in for, and the command line's error handling is unchanged.

``option_names`` (Ancient-Bench's words, no imports) must match the models and tables it
names; ``run_folder_options`` must be what ``OutputConfig`` declares; a
``ModelSpecError`` from a command's handler is still a one-line error (exit 2) though
``heritage_eval.core.backends`` is no longer imported to recognise it.
"""

from __future__ import annotations

import argparse
import typing

import pytest

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.ancient_bench import option_names
from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
from heritage_eval.benchmarks.ancient_bench.envelope import BENCHMARK as ENVELOPE_NAME
from heritage_eval.benchmarks.ancient_bench.normalize import PROTOCOLS, NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.options import RunOptions
from heritage_eval.benchmarks.ancient_bench.predictions import MissingPolicy
from heritage_eval.benchmarks.ancient_bench.report import BENCHMARK as REPORT_NAME
from heritage_eval.cli.main import main
from heritage_eval.core import run_folder_options
from heritage_eval.core.backends import ModelSpecError
from heritage_eval.core.config import OutputConfig, fields_of


def test_ancient_bench_words_match_what_they_name() -> None:
    # the presets of normalize.PROTOCOLS, the switches of NormalizationFlags, the
    # MissingPolicy literal and the name every module writes into records and summaries
    assert option_names.PROTOCOL_NAMES == tuple(sorted(PROTOCOLS)) == ("official", "paper")
    assert list(option_names.FLAG_HELP) == list(NormalizationFlags.model_fields)
    assert option_names.MISSING_POLICIES == typing.get_args(MissingPolicy) == (
        "empty", "skip", "error")
    assert option_names.BENCHMARK == AncientBench.name == REPORT_NAME == ENVELOPE_NAME
    assert RunOptions.model_fields["protocol"].default == "official"


def test_run_folder_help_is_output_configs() -> None:
    infos = fields_of(OutputConfig)
    assert infos["resume"].help == run_folder_options.RESUME_HELP
    assert infos["overwrite"].help == run_folder_options.OVERWRITE_HELP


def _group(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """A throw-away command ``zz-test boom`` whose handler raises ``error``."""
    def handler(args: argparse.Namespace) -> int:
        raise error

    cmd = registry.Command(name="boom", help="raise", add_args=lambda p: None,
                           handler=handler)
    monkeypatch.setitem(registry.GROUPS, "zz-test", ("test group", {"boom": cmd}))


def test_model_spec_error_from_a_handler_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    _group(monkeypatch, ModelSpecError("no such model 'x:y'"))
    assert main(["zz-test", "boom"]) == 2
    assert capsys.readouterr().err == "error: no such model 'x:y'\n"


def test_other_value_errors_still_propagate(monkeypatch: pytest.MonkeyPatch) -> None:
    _group(monkeypatch, ValueError("a bug"))
    with pytest.raises(ValueError, match="a bug"):
        main(["zz-test", "boom"])


def test_version_is_the_parsers(capsys: pytest.CaptureFixture[str]) -> None:
    # main answers a lone --version without building the parser: the same text and exit
    from heritage_eval.cli.parser import build_parser

    with pytest.raises(SystemExit) as parsed:
        build_parser().parse_args(["--version"])
    expected = capsys.readouterr().out
    with pytest.raises(SystemExit) as answered:
        main(["--version"])
    assert (answered.value.code, capsys.readouterr().out) == (parsed.value.code, expected)
    assert expected.startswith("heritage-eval ") and expected.endswith("\n")
