"""The typed run configuration (core/config.py): one RunConfig from the command line and
from the Python API, the platform rules the engine applies to any benchmark (a plug-in
does nothing for ``--limit``), and metric labels that follow the run's options."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Annotated, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.api import run_config
from heritage_eval.cliargs.run_options import add_run_options, run_config_from_args
from heritage_eval.core import plugins
from heritage_eval.core.benchmark import MetricSpec, UsageError
from heritage_eval.core.config import BenchmarkOptions, OptionsError, build_run_config
from heritage_eval.core.engine import labelled_metrics
from heritage_eval.core.option_spec import opt
from tests.core.toy_benchmark import Capitals
from tests.fake_server import FakeServer

NUMERIC = {"max_side": (1, 100_000), "max_tokens": (1, 1_000_000), "retries": (0, 100),
           "concurrency": (1, 4096), "limit": (1, 2**31 - 1)}
FLAG = {k: "--" + k.replace("_", "-") for k in NUMERIC}


def _both(values: dict[str, object]) -> tuple[object, object]:
    """(CLI result, API result): a RunConfig or the error message."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_run_options(parser, BenchmarkOptions)
    argv = ["--model", "rapidocr", "--out", "o"]
    for key, value in values.items():
        argv += [FLAG[key], str(value)]
    try:
        cli: object = run_config_from_args(parser.parse_args(argv), "x", BenchmarkOptions)
    except (argparse.ArgumentError, SystemExit) as exc:
        cli = f"refused: {exc}"
    try:
        api: object = build_run_config("x", BenchmarkOptions,
                                       {"model": "rapidocr", "out": "o", **values})
    except OptionsError as exc:
        api = f"refused: {exc}"
    return cli, api


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(sorted(NUMERIC)), value=st.integers(-10, 2_000_000))
def test_cli_and_api_accept_and_refuse_the_same_values(key: str, value: int) -> None:
    # the rule (core/option_checks): an integer inside the option's range, on both routes
    low, high = NUMERIC[key]
    cli, api = _both({key: value})
    if low <= value <= high:
        assert cli == api and api.flat()[key] == value
    else:
        assert str(cli).startswith("refused") and str(api).startswith("refused")
        assert FLAG[key] in str(cli) and key in str(api)  # each names the option


def test_unknown_keyword_suggests_the_closest() -> None:
    with pytest.raises(OptionsError, match="'max_tokns' \\(did you mean 'max_tokens'\\?\\)"):
        run_config("ancient-bench", data=".", out="o", max_tokns=5)


def test_benchmark_defaults_apply_on_both_routes() -> None:
    # Ancient-Bench's protocol: 8192 new tokens, side 4096, model rapidocr (benchmark.py)
    config = run_config("ancient-bench", data=".", out="o")
    assert (config.generation.max_tokens, config.model.max_side, config.model.model) == \
        (8192, 4096, "rapidocr")
    assert config.output.mode == "refuse" and config.executor.executor == "local"


class _TopK(BenchmarkOptions):
    k: Annotated[int, opt("candidates")] = 5


class _Labelled(Capitals):
    Options: ClassVar[type[BenchmarkOptions]] = _TopK
    metrics = (MetricSpec("accuracy", "Acc@{k}"), MetricSpec("x", "Plain"),
               MetricSpec("y", "Bad@{nope}"))


def test_metric_labels_follow_the_options() -> None:
    bench = _Labelled()
    config = build_run_config("toy", _TopK, {"k": 8, "out": "o"})
    bench.metrics = bench.metrics[:2]  # type: ignore[misc]
    assert [m.label for m in labelled_metrics(bench, config)] == ["Acc@8", "Plain"]
    bench.metrics = _Labelled.metrics  # type: ignore[misc]
    with pytest.raises(UsageError, match="Bad@\\{nope\\}"):
        labelled_metrics(bench, config)


@pytest.mark.usefixtures("toy_registered")
def test_the_engine_applies_limit_to_a_benchmark_that_ignores_it(
        tmp_path: Path, server: FakeServer) -> None:
    # the toy benchmark reads every line; --limit 2 keeps the first two samples (its
    # limit_key is the default: one group) and marks the run PARTIAL
    from heritage_eval.cli.main import main

    data = tmp_path / "c.jsonl"
    rows = [("fr", "France", "Europe", "Paris"), ("it", "Italy", "Europe", "Rome"),
            ("jp", "Japan", "Asia", "Tokyo")]
    data.write_text("".join(json.dumps({"id": i, "country": c, "continent": k,
                                        "capital": cap}) + "\n" for i, c, k, cap in rows))
    out = tmp_path / "run"
    assert main(["run", "toy-capitals", "--data", str(data), "--model", "openai:b",
                 "--base-url", server.base_url, "--out", str(out), "--limit", "2"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["fr", "it"]
    # a limit that leaves nothing out is not PARTIAL
    out2 = tmp_path / "run2"
    assert main(["run", "toy-capitals", "--data", str(data), "--model", "openai:b",
                 "--base-url", server.base_url, "--out", str(out2), "--limit", "3"]) == 0
    assert json.loads((out2 / "summary.json").read_text())["partial"] is False


def test_the_plugin_registry_lists_the_built_ins() -> None:
    # the built-ins register through the same entry-point group as any plug-in
    names = plugins.benchmark_names()
    assert {"ancient-bench", "muse"} <= set(names)
    assert plugins.scorer("ancient-bench") is not None


def test_aliases_work_in_python_as_on_the_command_line() -> None:
    # --refusals is the old name of --model-failures; its value 'error' means 'exclude'
    config = run_config("ancient-bench", data=".", out="o", refusals="error")
    assert config.output.model_failures == "exclude"
    with pytest.raises(OptionsError, match="given twice \\(as 'refusals' and 'model_failures'"):
        run_config("ancient-bench", data=".", out="o", refusals="error",
                   model_failures="wrong")


@pytest.mark.parametrize("value", ["seals,bronze_rubbings", "seals, bronze_rubbings,",
                                   ["seals,bronze_rubbings"], ["seals", "bronze_rubbings",
                                                               "seals"],
                                   "Bronze,Seal", ["SEALS", "bronze"]])
def test_categories_follow_the_list_rule(value: object) -> None:
    # docs/reference/conventions.md, "List options": commas and spaces both separate, a
    # name counts once, folder or paper names in any case; the media in the paper's
    # order (Bronze is 2nd of the nine, Seal 5th), whatever order they were given in
    config = run_config("ancient-bench", data=".", out="o", categories=value)
    assert config.options.categories == ("bronze_rubbings", "seals")  # type: ignore[attr-defined]
