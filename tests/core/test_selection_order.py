"""A selection option (``--tasks``, ``--categories``) names a set: the same names in
another order are the same configuration — one fingerprint, and a folder written while
the order given was kept still resumes (``core/rundir.py``, ``SELECTION_OPTIONS``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heritage_eval.api import run_config
from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
from heritage_eval.cli.main import main
from heritage_eval.core.rundir import SELECTION_OPTIONS, _same_config

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"
NAMES = ["a", "b", "c", "d"]


@given(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True),
       st.randoms(use_true_random=False))
def test_a_selection_in_another_order_is_the_same_config(names: list[str],
                                                        rnd: object) -> None:
    shuffled = list(names)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    for key in SELECTION_OPTIONS:
        assert _same_config({key: names, "m": 1}, {key: shuffled, "m": 1}, {})
        # another set of names is another configuration
        assert not _same_config({key: names}, {key: [*names, "e"]}, {})
        assert not _same_config({key: names}, {key: names[1:] or ["z"]}, {})
    # any other list keeps its order (a model option given later overrides)
    if shuffled != names:
        assert not _same_config({"model_option": names}, {"model_option": shuffled}, {})


def test_a_repeated_name_in_an_old_folder_is_not_read_as_a_set() -> None:
    assert not _same_config({"tasks": ["a", "a", "b"]}, {"tasks": ["b", "a", "a"]}, {})


def test_one_fingerprint_for_the_same_media_in_any_order_or_name() -> None:
    bench = AncientBench()
    prints = {json.dumps(bench.fingerprint(run_config(
        "ancient-bench", data=str(DEMO), out="o", model="rapidocr", categories=value)),
        sort_keys=True)
        for value in ("seals,bronze_rubbings", "Bronze,seals", ["SEAL", "bronze_rubbings"])}
    assert len(prints) == 1


@pytest.mark.skipif(not DEMO.is_dir(), reason=f"bundled demo data not found at {DEMO}")
def test_the_same_media_in_another_order_resumes_the_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "ancient-bench", "--data", str(DEMO), "--model", "rapidocr",
            "--limit", "1", "--out", str(tmp_path / "run")]
    assert main([*base, "--categories", "seals,bronze_rubbings"]) == 0
    capsys.readouterr()
    assert main([*base, "--categories", "Bronze", "seals"]) == 0
    err = capsys.readouterr().err
    assert "another configuration" not in err
    # both answers came from the cache: the second command is the same run
    assert "answers from the cache (cache.sqlite): 2 of 2" in err
