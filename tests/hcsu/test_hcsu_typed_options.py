"""HCSU's typed options: the study grids' rule, the defaults the CLI and the Python API
share, the checks both routes get, and the fingerprint a study records (the keys of the
argparse commands it replaced, so older run folders resume)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heritage_eval.api import run_config
from heritage_eval.benchmarks.hcsu.cli_args import (
    ABLATION_OPTIONS,
    K_SWEEP_OPTIONS,
    ROBUSTNESS_OPTIONS,
    WRITE_OPTIONS,
)
from heritage_eval.benchmarks.hcsu.option_models import int_list
from heritage_eval.benchmarks.hcsu.options import description_config, discrimination_config
from heritage_eval.core.config import OptionsError


@pytest.mark.parametrize(("given_value", "expected"), [
    # written out by hand from the rule: ranges inclusive, pieces in the order first
    # given, each number once, commas and whitespace alike (as every list option)
    ("2-10", [2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ("2 4", [2, 4]),
    ("8,2", [8, 2]),
    ("2,2", [2]),
    ("2-4 3,9 2", [2, 3, 4, 9]),
    ("2,", [2]),
    ("1,2,4", [1, 2, 4]),
    (" 3 , 5-6", [3, 5, 6]),
    (["2-3", "8"], [2, 3, 8]),  # --ks 2-3 8 (several words after the flag)
    (4, [4]),
    ((1, 2), [1, 2]),  # the Python API's list or tuple
])
def test_grid_rule(given_value: object, expected: list[int]) -> None:
    assert int_list(given_value) == expected


@pytest.mark.parametrize(("bad", "message"), [
    ("0", "expected positive numbers, got '0'"),
    ("5-3", "the range '5-3' runs downwards: write '3-5'"),
    ("2,9-4", "the range '9-4' runs downwards: write '4-9'"),
    ("2--4", "(ASCII digits), got '2--4'"),  # not a range down to -4
    ("\u0663", "(ASCII digits), got '\u0663'"),  # ARABIC-INDIC DIGIT THREE
    ("\uff13", "(ASCII digits), got '\uff13'"),  # FULLWIDTH DIGIT THREE
    ("+3", "(ASCII digits), got '+3'"),
    ("x", "expected numbers like '2-10' or '1,2,4' (ASCII digits), got 'x'"),
    ("", "expected numbers like '2-10' or '1,2,4' (ASCII digits), got ''"),
    (" , ", "expected numbers like '2-10' or '1,2,4' (ASCII digits), got ' , '"),
    ("2 - 4", "expected numbers like '2-10' or '1,2,4' (ASCII digits), got '2 - 4'"),
    ([], "got none"),
    (True, "got True"),
    (2.5, "got 2.5"),
])
def test_grid_rule_refusals(bad: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        int_list(bad)


@given(st.lists(st.tuples(st.integers(1, 50), st.integers(0, 5)), min_size=1, max_size=6))
def test_grid_rule_expands_every_range(pieces: list[tuple[int, int]]) -> None:
    # "lo-hi" pieces joined by commas expand to the concatenation of the ranges, each
    # number kept at its first place
    text = ",".join(f"{lo}-{lo + span}" if span else str(lo) for lo, span in pieces)
    expanded = [n for lo, span in pieces for n in range(lo, lo + span + 1)]
    assert int_list(text) == list(dict.fromkeys(expanded))
    assert int_list(text.replace(",", " ")) == int_list(text)


def test_run_defaults_and_checks_through_the_api(tmp_path: Path) -> None:
    base = {"data": tmp_path, "model": "baseline:random", "out": tmp_path / "o"}
    disc = run_config("hcsu-discrimination", **base)
    # the paper's temperature (§4.2), the K-way token room, K = 8 (§3.2), per class 90
    assert (disc.generation.temperature, disc.generation.max_tokens) == (0.1, 4096)
    task = discrimination_config(disc.options)
    assert (task.k, task.per_class, task.pool, task.descriptions, task.seed,
            task.avoid_target_char) == (8, 90, "domain", "expert", 0, True)
    desc = run_config("hcsu-description", **base)
    assert desc.generation.max_tokens == 256
    dtask = description_config(desc.options)
    assert (dtask.shots, dtask.max_words, dtask.pool) == (2, 50, "domain")
    with pytest.raises(OptionsError, match=r"'k'.*>= 2 and <= 26"):
        run_config("hcsu-discrimination", **base, k=27)
    with pytest.raises(OptionsError, match=r"'per_class'.*>= 1"):
        run_config("hcsu-discrimination", **base, per_class=0)
    with pytest.raises(OptionsError, match="did you mean 'shots'"):
        run_config("hcsu-description", **base, shot=3)  # a misspelt option is refused


def _parsed(cmd: object, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(allow_abbrev=False)
    cmd.add_args(parser)  # type: ignore[attr-defined]
    return parser.parse_args(argv)


def test_study_fingerprint_keeps_the_old_keys(tmp_path: Path) -> None:
    argv = ["--data", str(tmp_path), "--model", "baseline:random", "--out",
            str(tmp_path / "o"), "--ks", "2-4", "--limit", "3"]
    config = K_SWEEP_OPTIONS.config(_parsed(K_SWEEP_OPTIONS, argv))
    assert config.options.ks == (2, 3, 4)  # type: ignore[attr-defined]
    assert (config.generation.temperature, config.generation.max_tokens) == (0.1, 4096)
    recorded = K_SWEEP_OPTIONS.fingerprint(config)
    # the keys the argparse k-sweep recorded: no --k (the sweep sets it), none of the run
    # command's options it never had; how the run proceeds (--out, --limit) is left out
    assert "k" not in recorded and "model_failures" not in recorded
    assert not {"executor", "warn_downscale", "out", "limit"} & set(recorded)
    assert recorded["ks"] == [2, 3, 4] and recorded["temperature"] == 0.1
    defaults = K_SWEEP_OPTIONS.default_fingerprint()
    assert defaults["ks"] == list(range(2, 11)) and "data" not in defaults
    # the ablation runs every description variant: no --descriptions
    abl = ABLATION_OPTIONS.config(_parsed(ABLATION_OPTIONS, argv[:6]))
    assert "descriptions" not in ABLATION_OPTIONS.fingerprint(abl)


def test_robustness_and_write_descriptions_options(tmp_path: Path) -> None:
    base = ["--data", str(tmp_path), "--model", "m", "--out", str(tmp_path / "o")]
    rob = ROBUSTNESS_OPTIONS.config(_parsed(ROBUSTNESS_OPTIONS, [*base, "--tasks",
                                                                  "description"]))
    assert rob.options.tasks == ("description",)  # type: ignore[attr-defined]
    assert rob.generation.max_tokens == 256
    write = WRITE_OPTIONS.config(_parsed(WRITE_OPTIONS, [*base, "--limit", "2"]))
    assert write.options.max_words == 50 and write.output.limit == 2  # type: ignore[attr-defined]
    with pytest.raises(SystemExit):  # write-descriptions writes no run folder: no --resume
        _parsed(WRITE_OPTIONS, [*base, "--resume"])
