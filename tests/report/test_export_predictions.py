"""heritage_eval.report.export_predictions: a run's answers in the official Ancient-Bench
predictions layout, and the round trip through ``score ancient-bench``. Expected paths
and contents are written out by hand."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.ancient_bench.predictions import read_prediction
from heritage_eval.cli.export_cmd import EXPORT_PREDICTIONS
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.summary import envelope
from heritage_eval.report.export_predictions import (
    ERRORS_FILE,
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
    # by hand: model folder "openai_org_m" (":" and "/" -> "_"), stem of image_name; the
    # error record and the missing prediction get their file too, as an empty answer
    expected = {
        out / "openai_org_m/bronze_rubbings/results/bronze_rubbings_000002.json":
            {"answer": "<res>王</res>"},
        out / "openai_org_m/seals/results/seals_000001.json": {"answer": "<res>未能\n抛得</res>"},
        out / "openai_org_m/seals/results/seals_000003.json": {"answer": ""},
        out / "openai_org_m/seals/results/seals_000004.json": {"answer": ""},
        out / "rapidocr/seals/results/seals_000001.json": {"answer": "翦"},
    }
    assert paths == sorted(expected)
    for path, content in expected.items():
        text = path.read_text(encoding="utf-8")
        assert json.loads(text) == content
        assert content["answer"] in text.replace("\\n", "\n")  # ensure_ascii=False
    errors = out / ERRORS_FILE
    assert sorted(p for p in out.rglob("*") if p.is_file()) == sorted([*expected, errors])
    assert [json.loads(line) for line in errors.read_text(encoding="utf-8").splitlines()] == [
        {"model": "openai:org/m", "id": "seals/seals_000003", "category": "seals",
         "image": "seals_000003.png", "file": "openai_org_m/seals/results/seals_000003.json",
         "reason": "error: HTTP 500"},
        {"model": "openai:org/m", "id": "seals/seals_000004", "category": "seals",
         "image": "seals_000004.png", "file": "openai_org_m/seals/results/seals_000004.json",
         "reason": "missing: the prediction was missing when the run was scored"}]
    messages = [str(w.message) for w in caught]
    assert any("seals/seals_000003: written as an empty answer (error: HTTP 500)" in m
               for m in messages)
    assert any("seals/seals_000004: written as an empty answer (missing" in m
               for m in messages)
    result = export_predictions(run, tmp_path / "pred2")
    assert [(b.model, b.id) for b in result.blanks] == [
        ("openai:org/m", "seals/seals_000003"), ("openai:org/m", "seals/seals_000004")]
    assert result.skipped == []


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
    with pytest.warns(UserWarning, match="written as an empty answer"):
        paths = export_official_predictions(first, pred)
    # by hand (README of the demo set): 146 lines with predictions + 27 lines without one,
    # x 2 models = 346 files; the 54 missing ones are written as empty answers and listed
    assert len(paths) == 346
    assert len((pred / ERRORS_FILE).read_text(encoding="utf-8").splitlines()) == 54
    assert main(["score", "ancient-bench", "--data", str(gt), "--predictions", str(pred),
                 "--out", str(again)]) == 0
    before = json.loads((first / "summary.json").read_text(encoding="utf-8"))["models"]
    after = json.loads((again / "summary.json").read_text(encoding="utf-8"))["models"]
    assert sorted(before) == sorted(after) == ["demo-model-a", "demo-model-b"]
    for model in before:
        for metric in ("ned_score", "f1"):
            assert after[model]["metrics"][metric] == before[model]["metrics"][metric]
        assert after[model]["groups"] == before[model]["groups"]


# --- the kind: every ground-truth line gets its file, whatever the records' states ------

CATS = ["seals", "calligraphys", "bronze_rubbings"]
state_st = st.sampled_from(["scored", "unparsed", "error"])
text_st = st.one_of(st.none(), st.text(max_size=12))


@st.composite
def runs(draw: st.DrawFn) -> list[SampleRecord]:
    """1-2 models (names that are already safe folder names), each with the same random
    ground-truth lines (category, image), random states, answers and missing flags."""
    models = draw(st.lists(st.sampled_from(["m1", "m2"]), min_size=1, max_size=2,
                           unique=True))
    lines = draw(st.lists(st.tuples(st.sampled_from(CATS), st.integers(0, 30)),
                          min_size=1, max_size=12, unique=True))
    ext = draw(st.sampled_from([".png", ".jpg", ".JPG"]))
    return [ab(m, cat, f"{cat}_{i:06d}{ext}", draw(text_st), state=draw(state_st),
               missing=draw(st.booleans()))
            for m in models for cat, i in lines]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=runs())
def test_every_line_gets_a_file(records: list[SampleRecord], tmp_path_factory:
                                pytest.TempPathFactory) -> None:
    """Property: the official evaluator's loop (open every ground-truth line's file for
    every model, read ``answer``; emulated here with plain ``open``/``json``) never misses a
    file; the answer is the response text, or "" for an error record or a missing
    prediction, and exactly those are listed in the errors file."""
    base = tmp_path_factory.mktemp("kind")
    run = write_run(base / "run", records)
    out = base / "pred"
    result = export_predictions(run, out)
    blanks = []
    for r in records:
        stem = r.details["image_name"].rsplit(".", 1)[0]
        path = out / r.model / r.groups["category"] / "results" / f"{stem}.json"
        with open(path, encoding="utf-8") as fh:  # the official script's own read
            answer = json.load(fh)["answer"]
        blank = r.state.value == "error" or r.details["missing_prediction"]
        assert answer == ("" if blank else r.response_text)
        assert read_prediction(path).answer == answer  # the package's reader, too
        if blank:
            blanks.append((r.model, r.id))
    listed = [json.loads(line) for line in
              (out / ERRORS_FILE).read_text(encoding="utf-8").splitlines()]
    assert [(d["model"], d["id"]) for d in listed] == blanks
    assert len(result.paths) == len(records) and result.skipped == []


def test_run_with_errors_scores_strictly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: a run whose requests partly failed, exported, is scored by
    ``score ancient-bench --missing error`` (which, like the official script, refuses a
    missing file) with the failed lines counted as empty answers (0)."""
    from PIL import Image

    from heritage_eval.cli.main import main
    from heritage_eval.core import engine
    from heritage_eval.core.types import GenerationSettings, Message, Response
    from heritage_eval.models.base import ModelBackend

    class HalfFails(ModelBackend):
        """Lines 1 and 3 of each category fail: 4 of the 8 lines are errors."""

        backend = "halffails"
        reads_payload = True

        async def generate(self, messages: list[Message], settings: GenerationSettings,
                           payload: dict[str, object]) -> Response:
            if str(payload["sample_id"]).endswith(("/1", "/3")):
                return Response(text=None, error="HTTP 500 after 5 retries", attempts=6)
            return Response(text="<res>永和</res>")

    data = tmp_path / "data"
    for cat in ("seals", "calligraphys"):
        (data / cat / "images").mkdir(parents=True)
        for i in range(4):
            Image.new("RGB", (16, 16)).save(data / cat / "images" / f"{i}.png")
        (data / cat / "conv.jsonl").write_text("".join(
            json.dumps({"image": f"{i}.png", "human_gt": "永和"}) + "\n" for i in range(4)))
    monkeypatch.setattr(engine, "backend_from_config", lambda model: HalfFails())
    main(["run", "ancient-bench", "--data", str(data), "--out", str(tmp_path / "run")])
    capsys.readouterr()
    assert _cli(str(tmp_path / "run"), "--out", str(tmp_path / "pred")) == 0
    err = capsys.readouterr().err
    assert "4 record(s) without an answer written as" in err and ERRORS_FILE in err
    assert main(["score", "ancient-bench", "--data", str(data), "--predictions",
                 str(tmp_path / "pred"), "--missing", "error", "--out",
                 str(tmp_path / "again")]) == 0
    summary = json.loads((tmp_path / "again" / "summary.json").read_text())
    # by hand: per category 2 of 4 lines answered exactly (NED 1), 2 empty (NED 0) -> 0.5
    (block,) = summary["models"].values()
    assert block["metrics"]["ned_score"]["value"] == pytest.approx(0.5)
