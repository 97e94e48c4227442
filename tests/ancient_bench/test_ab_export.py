"""``score ancient-bench`` on the platform with the official demo predictions: the
summary envelope per model, the run folder (resume / refuse / overwrite), the Python-side
``score_predictions``, and export to the official layout and back (same numbers)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from tests.ancient_bench.checks import check_envelope
from tests.conftest import realdata

from heritage_eval.benchmarks.ancient_bench.export import (
    official_predictions,
    write_official_predictions,
)
from heritage_eval.benchmarks.ancient_bench.score import add_score_args, score_predictions
from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.store import read_jsonl

DEMO = realdata("ancient_bench_official_demo")
MODELS = ["demo-model-a", "demo-model-b"]

pytestmark = pytest.mark.skipif(not DEMO.is_dir(), reason="shared real data not present")


def _opts(out: Path, predictions: Path = DEMO / "predictions", *extra: str
          ) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_score_args(p)
    return p.parse_args(["--data", str(DEMO / "gt"), "--predictions", str(predictions),
                         "--out", str(out), *extra])


def _numbers(summary: dict[str, Any]) -> list[Any]:
    return [(r["model"], r["per_category"], r["overall"], r["states"],
             len(r["missing_predictions"]), r["analysis"]) for r in summary["results"]]


@pytest.mark.parametrize("missing", ["skip", "empty"])
def test_export_then_rescore_gives_the_same_numbers(tmp_path: Path, missing: str) -> None:
    first = score_predictions(_opts(tmp_path / "first", DEMO / "predictions",
                                    "--missing", missing))
    assert first.status == 0 and [r["model"] for r in first.summary["results"]] == MODELS
    records = [SampleRecord.model_validate(r)
               for r in read_jsonl(tmp_path / "first" / "samples.jsonl")]
    files = dict(official_predictions(records))
    # Missing predictions are not written (so that re-scoring finds them missing again).
    assert len(files) == 292  # 2 models x 146 lines with a prediction file
    assert "demo-model-a/seals/results/seals_000001.json" in files
    exported = tmp_path / "exported"
    assert write_official_predictions(records, exported) == len(files)
    again = score_predictions(_opts(tmp_path / "again", exported, "--missing", missing))
    assert _numbers(again.summary) == _numbers(first.summary)
    assert again.summary["models"] == first.summary["models"]


def test_score_summary_envelope_per_model(tmp_path: Path) -> None:
    out = score_predictions(_opts(tmp_path / "s", DEMO / "predictions", "--missing", "skip"))
    assert out.summary["schema"] == "heritage-eval/summary/1"
    assert sorted(out.summary["models"]) == MODELS
    assert len(out.records) == 292
    check_envelope(out.summary)
    rec = out.records[0]
    assert rec.benchmark == "ancient-bench" and rec.model == "demo-model-a"
    assert rec.reference and rec.details["prediction_file"].endswith(".json")


def test_score_run_folder_resume_refuse_overwrite(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "scored"
    argv = ["score", "ancient-bench", "--data", str(DEMO / "gt"), "--predictions",
            str(DEMO / "predictions"), "--out", str(out), "--missing", "skip"]
    assert main(argv) == 0
    assert json.loads((out / "run.json").read_text("utf-8"))["status"] == "complete"
    assert main(argv) == 0  # same configuration: accepted
    capsys.readouterr()
    assert main([*argv[:-1], "empty"]) == 2  # another missing policy: refused
    err = capsys.readouterr().err
    assert "another configuration" in err and "--resume" in err and "--overwrite" in err
    assert main([*argv[:-1], "empty", "--overwrite"]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["provenance"]["missing_policy"] == "empty"
    assert summary["results"][0]["states"]["scored"] == 173
