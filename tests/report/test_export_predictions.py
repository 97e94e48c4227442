"""heritage_eval.report.export_predictions: a run's answers in the official Ancient-Bench
predictions layout, and the round trip through ``score ancient-bench``. Expected paths
and contents are written out by hand."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

from heritage_eval.cli.export_cmd import EXPORT_PREDICTIONS
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.summary import envelope
from heritage_eval.report.export_predictions import (
    ExportError,
    export_official_predictions,
    export_predictions,
    model_folder,
)
from heritage_eval.report.runs import RunReadError
from tests.conftest import realdata

DEMO = realdata("ancient_bench_official_demo")
NED = MetricSpec("ned_score", "NED", macro_over="medium", by=("medium",))


def ab(model: str, category: str, image: str, text: str | None, *, state: str = "scored",
       missing: bool = False, benchmark: str = "ancient-bench") -> SampleRecord:
    return SampleRecord.model_validate(dict(
        id=f"{category}/{image.rsplit('.', 1)[0]}", benchmark=benchmark, model=model,
        groups={"medium": category.title(), "category": category}, state=state,
        scores={"ned_score": None if state == "error" else 0.5},
        error="HTTP 500" if state == "error" else None,
        details={"image_name": image, "missing_prediction": missing},
        turns=[TurnRecord(prompt="transcribe", response=ResponseRecord(text=text))]))


def write_run(path: Path, records: list[SampleRecord], benchmark: str = "ancient-bench"
              ) -> Path:
    path.mkdir(parents=True)
    (path / "samples.jsonl").write_text("".join(r.to_json_line() + "\n" for r in records),
                                        encoding="utf-8")
    summary = envelope(benchmark, records, [NED], ("medium",))
    (path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return path


def test_model_folder_replaces_unsafe_characters() -> None:
    assert model_folder("openai:Qwen/Qwen2.5-VL 7B") == "openai_Qwen_Qwen2.5-VL_7B"
    assert model_folder('a\\b*c?d"e<f>g|h') == "a_b_c_d_e_f_g_h"
    assert model_folder("rapidocr") == "rapidocr" and model_folder("..") == "_"


def test_records_to_files(tmp_path: Path) -> None:
    records = [
        ab("openai:org/m", "seals", "seals_000001.png", "<res>未能\n抛得</res>"),
        ab("openai:org/m", "bronze_rubbings", "bronze_rubbings_000002.jpg", "<res>王</res>"),
        ab("openai:org/m", "seals", "seals_000003.png", None, state="error"),
        ab("openai:org/m", "seals", "seals_000004.png", None, missing=True),
        ab("rapidocr", "seals", "seals_000001.png", "翦"),
    ]
    run = write_run(tmp_path / "run", records)
    out = tmp_path / "pred"
    with pytest.warns(UserWarning) as caught:
        paths = export_official_predictions(run, out)
    # by hand: model folder "openai_org_m" (":" and "/" -> "_"), stem of image_name
    expected = {
        out / "openai_org_m/bronze_rubbings/results/bronze_rubbings_000002.json":
            {"answer": "<res>王</res>"},
        out / "openai_org_m/seals/results/seals_000001.json": {"answer": "<res>未能\n抛得</res>"},
        out / "rapidocr/seals/results/seals_000001.json": {"answer": "翦"},
    }
    assert paths == sorted(expected)
    for path, content in expected.items():
        text = path.read_text(encoding="utf-8")
        assert json.loads(text) == content
        assert content["answer"] in text.replace("\\n", "\n")  # ensure_ascii=False
    assert sorted(p for p in out.rglob("*") if p.is_file()) == sorted(expected)
    messages = [str(w.message) for w in caught]
    assert any("seals/seals_000003: not exported (error: HTTP 500)" in m for m in messages)
    assert any("seals/seals_000004: not exported (the prediction was missing" in m
               for m in messages)
    result = export_predictions(run, tmp_path / "pred2")
    assert [(m, i) for m, i, _ in result.skipped] == [
        ("openai:org/m", "seals/seals_000003"), ("openai:org/m", "seals/seals_000004")]


def test_refuses_other_benchmarks_and_non_runs(tmp_path: Path) -> None:
    other = write_run(tmp_path / "muse", [ab("m", "seals", "seals_1.png", "x",
                                             benchmark="muse")], benchmark="muse")
    with pytest.raises(ExportError, match="is a muse run; only Ancient-Bench runs"):
        export_predictions(other, tmp_path / "out")
    with pytest.raises(RunReadError, match="does not exist"):
        export_predictions(tmp_path / "absent", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _cli(*argv: str) -> int:
    p = argparse.ArgumentParser()
    EXPORT_PREDICTIONS.add_args(p)
    return EXPORT_PREDICTIONS.handler(p.parse_args(list(argv)))


def test_cli_refuses_non_empty_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", [ab("m", "seals", "seals_000001.png", "<res>a</res>")])
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert _cli(str(run), "--out", str(out)) == 2
    assert "is not empty; nothing was written" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    assert _cli(str(run), "--out", str(out), "--overwrite") == 0
    assert json.loads((out / "m/seals/results/seals_000001.json").read_text()) == {
        "answer": "<res>a</res>"}
    assert (out / "keep.txt").read_text() == "mine"
    assert _cli(str(tmp_path / "nope"), "--out", str(tmp_path / "o2")) == 2


@pytest.mark.skipif(not DEMO.is_dir(), reason=f"shared real data missing: {DEMO}")
@pytest.mark.skipif(importlib.util.find_spec("heritage_eval.benchmarks.ancient_bench.export")
                    is None, reason="the Ancient-Bench port (ancient_bench.export) is absent")
def test_round_trip_through_score_ancient_bench(tmp_path: Path) -> None:
    from heritage_eval.cli.main import main

    gt, first, again = DEMO / "gt", tmp_path / "first", tmp_path / "again"
    assert main(["score", "ancient-bench", "--data", str(gt), "--predictions",
                 str(DEMO / "predictions"), "--out", str(first)]) == 0
    pred = tmp_path / "exported"
    with pytest.warns(UserWarning, match="not exported"):
        paths = export_official_predictions(first, pred)
    # by hand (README of the demo set): 146 lines with predictions x 2 models; the 27
    # lines without one stay missing (recorded as missing_prediction, not exported)
    assert len(paths) == 292
    assert main(["score", "ancient-bench", "--data", str(gt), "--predictions", str(pred),
                 "--out", str(again)]) == 0
    before = json.loads((first / "summary.json").read_text(encoding="utf-8"))["models"]
    after = json.loads((again / "summary.json").read_text(encoding="utf-8"))["models"]
    assert sorted(before) == sorted(after) == ["demo-model-a", "demo-model-b"]
    for model in before:
        for metric in ("ned_score", "f1"):
            assert after[model]["metrics"][metric] == before[model]["metrics"][metric]
        assert after[model]["groups"] == before[model]["groups"]
