"""The engine refuses a benchmark's output it cannot count, naming the benchmark, the
sample and the value (core/record_checks.py): duplicate sample ids from ``load`` (before
anything is written), and a score that is NaN, infinite or outside the metric's bounds."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.record_checks import BenchmarkOutputError, check_unique_ids, checked

ACC = (MetricSpec("accuracy", "Acc"), MetricSpec("free", "Free", bounds=None))


def _rec(value: float | None, metric: str = "accuracy") -> SampleRecord:
    return SampleRecord.model_validate({"id": "s1", "benchmark": "b", "model": "m",
                                        "state": "scored", "scores": {metric: value}})


def test_duplicate_ids_are_named() -> None:
    samples = [SimpleNamespace(id=i) for i in ("a", "b", "a", "c", "c")]
    with pytest.raises(BenchmarkOutputError, match=r"2 sample id\(s\).*'a', 'c'"):
        check_unique_ids("toy", samples)
    check_unique_ids("toy", samples[:2])  # distinct: fine


@pytest.mark.parametrize("value", [1.7, -0.01, math.nan, math.inf])
def test_a_score_outside_its_bounds_is_named(value: float) -> None:
    with pytest.raises(BenchmarkOutputError, match="sample 's1': score 'accuracy'"):
        list(checked("toy", [_rec(value)], ACC))


@pytest.mark.parametrize("record", [_rec(0.0), _rec(1.0), _rec(None), _rec(5.0, "free"),
                                    _rec(7.0, "undeclared")])
def test_scores_inside_their_bounds_pass(record: SampleRecord) -> None:
    assert list(checked("toy", [record], ACC)) == [record]


@pytest.mark.usefixtures("toy_registered")
def test_the_engine_refuses_duplicate_ids_before_writing(tmp_path: Path) -> None:
    from heritage_eval.cli.main import main

    data = tmp_path / "c.jsonl"
    row = {"id": "fr", "country": "France", "continent": "Europe", "capital": "Paris"}
    data.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    out = tmp_path / "run"
    assert main(["run", "toy-capitals", "--data", str(data), "--model", "baseline:random",
                 "--out", str(out)]) == 2
    assert not out.exists()
