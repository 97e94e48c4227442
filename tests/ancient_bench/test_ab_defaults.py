"""Defaults that must not cut the hard cases: the token limit fits the longest ground truth
(measured in UTF-8 bytes, an upper bound on byte-level BPE tokens), the image cap keeps
the pixel budget for the paper's largest rubbing; HCSU discrimination leaves room for
reasoning models."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tests.conftest import realdata

from heritage_eval.benchmarks.ancient_bench.benchmark import (
    DEFAULT_MAX_SIDE,
    DEFAULT_MAX_TOKENS,
    AncientBench,
)
from heritage_eval.benchmarks.hcsu.benchmark import HcsuDiscrimination
from heritage_eval.benchmarks.hcsu.benchmark_description import HcsuDescription
from heritage_eval.benchmarks.hcsu.cli_args import k_sweep_args
from heritage_eval.cli.run_cmd import benchmark_command
from heritage_eval.cliargs.run_options import run_config_from_args
from heritage_eval.core.benchmark import Benchmark
from heritage_eval.core.config import RunConfig
from heritage_eval.core.sizecap import SizeCap

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"
REAL = realdata("ancient_bench")
OFFICIAL_GT = realdata("ancient_bench_official_demo", "gt")


def _parser(bench: Benchmark) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run")
    benchmark_command(bench).add_args(p)
    return p


def _config(bench: Benchmark, args: list[str]) -> RunConfig:
    """The run configuration the CLI builds from ``args`` (defaults applied)."""
    return run_config_from_args(_parser(bench).parse_args(args), bench.name, bench.Options,
                                defaults=bench.platform_defaults(),
                                required=bench.required_options())


def _longest(root: Path) -> tuple[int, int]:
    """(UTF-8 bytes of the longest ``<res>…</res>`` answer, its characters)."""
    best = (0, 0)
    for f in sorted(Path(root).glob("*/conv.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            gt = json.loads(line)["human_gt"]
            best = max(best, (len(f"<res>{gt}</res>".encode()), len(gt)))
    return best


def test_token_limit_fits_the_longest_ground_truth() -> None:
    # The measurements recorded in benchmark.py (bytes, characters of the ground truth).
    assert _longest(DEMO) == (232, 77)
    assert _longest(Path(REAL)) == (269, 90)
    assert _longest(Path(OFFICIAL_GT)) == (2241, 780)
    assert 2241 > 1024  # the old default was shorter than a measured answer's byte bound
    # The paper's longest text, 1,666 characters, all 4-byte, + tags + a line break per
    # 2 characters: 1666 * 4 + 11 + 833 = 7,508 bytes <= the default.
    assert 1666 * 4 + len("<res></res>") + 1666 // 2 == 7508 <= DEFAULT_MAX_TOKENS == 8192


def test_run_defaults_and_help() -> None:
    config = _config(AncientBench(), ["--data", "d", "--out", "o"])
    assert (config.generation.max_tokens, config.model.max_side,
            config.model.max_pixels) == (8192, 4096, 4_000_000)
    assert config.output.warn_downscale == 4.0
    text = " ".join(_parser(AncientBench()).format_help().split())  # wrapping aside
    assert "(default: 8192)" in text and "(default: 4096)" in text
    # A benchmark without its own side cap keeps the shared 2,048.
    assert _config(HcsuDescription(),
                   ["--data", "d", "--out", "o", "--model", "m"]).model.max_side == 2048


def test_side_cap_lets_the_pixel_budget_bind() -> None:
    # The paper's largest image, 5,795 x 16,745 (97 Mpx). Old cap: the side binds at
    # 2048/16745 -> 708 x 2048 (1.45 Mpx). New: the 4 Mpx budget binds, scale
    # sqrt(4e6 / 97037275) = 0.20303 -> int(1176.56) x int(3399.74).
    assert SizeCap(2048, 4_000_000).target_size(5795, 16745) == (708, 2048)
    assert SizeCap(DEFAULT_MAX_SIDE, 4_000_000).target_size(5795, 16745) == (1176, 3399)
    # A seal photo below both caps is sent unchanged either way (no upscaling).
    assert SizeCap(DEFAULT_MAX_SIDE, 4_000_000).target_size(600, 600) == (600, 600)


def test_hcsu_discrimination_token_limit() -> None:
    args = ["--data", "d", "--out", "o", "--model", "m"]
    assert _config(HcsuDiscrimination(), args).generation.max_tokens == 4096
    assert _config(HcsuDescription(), args).generation.max_tokens == 256  # unchanged
    sweep = argparse.ArgumentParser()
    k_sweep_args(sweep)
    assert sweep.parse_args(args).max_tokens == 4096
