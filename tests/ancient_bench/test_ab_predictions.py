"""Predictions made elsewhere (official layout), including bad prediction files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.pipeline import score_prediction_folder
from heritage_eval.benchmarks.ancient_bench.predictions import (
    PredictionLayoutError,
    check_model_folders,
    discover_models,
    prediction_path,
    read_prediction,
)


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    gt = tmp_path / "gt" / "seals"
    gt.mkdir(parents=True)
    rows = [("s1.png", "王未央印"), ("s2.png", "平舆"), ("s3.png", "翦"), ("s4.png", "益都"),
            ("s5.png", "西蠡")]
    gt.joinpath("conv.jsonl").write_text(
        "".join(json.dumps({"image": i, "human_gt": g}, ensure_ascii=False) + "\n"
                for i, g in rows), encoding="utf-8")
    res = tmp_path / "pred" / "m1" / "seals" / "results"
    res.mkdir(parents=True)
    res.joinpath("s1.json").write_text(json.dumps({"answer": "<res>王未央印</res>"}),
                                       encoding="utf-8")
    res.joinpath("s2.json").write_text(json.dumps({"answer": None}), encoding="utf-8")
    res.joinpath("s3.json").write_text('{"answer": "翦"', encoding="utf-8")  # truncated
    res.joinpath("s4.json").write_text(json.dumps({"answer": 42}), encoding="utf-8")
    # s5.json is missing
    return tmp_path / "gt", tmp_path / "pred"


def test_prediction_states(tmp_path: Path) -> None:
    gt, pred = _setup(tmp_path)
    rel = load_release(gt, check_images=False)
    assert discover_models(pred) == ["m1"]
    assert prediction_path(pred, "m1", "seals", "s1.png") == \
        pred / "m1" / "seals" / "results" / "s1.json"
    out = score_prediction_folder(rel, pred, ["m1"], NormalizationFlags(), "empty")
    rows = {r.id: r for r in out.records}
    assert rows["seals/s1"].state.value == "scored" and rows["seals/s1"].ned_score == 1.0
    # A JSON null answer is an empty prediction: scored, 0 (as in the official script).
    assert rows["seals/s2"].state.value == "scored" and rows["seals/s2"].f1 == 0.0
    # Truncated JSON and a non-string answer are the model's failures, as a missing file:
    # under --missing empty scored 0 as empty answers, each listed with its reason.
    assert [(rows[i].state.value, rows[i].ned_score) for i in ("seals/s3", "seals/s4")] == [
        ("scored", 0.0), ("scored", 0.0)]
    assert [u["id"] for u in out.unusable] == ["seals/s3", "seals/s4"]
    assert "s3.json:1: malformed JSON" in out.unusable[0]["reason"]
    assert "'answer' is int" in out.unusable[1]["reason"]
    # Missing file, default policy: scored as empty and listed.
    assert rows["seals/s5"].missing_prediction and rows["seals/s5"].ned_score == 0.0
    assert [m["id"] for m in out.missing] == ["seals/s5"]
    skipped = score_prediction_folder(rel, pred, ["m1"], NormalizationFlags(), "skip")
    assert {r.id for r in skipped.records} == {"seals/s1", "seals/s2"}
    assert len(skipped.missing) == 1 and len(skipped.unusable) == 2


def test_read_prediction_never_raises(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_bytes(b'{"answer": "\xff"}')
    assert "not valid UTF-8" in str(read_prediction(bad).error)
    bad.write_text('{"image": "x.png"}', encoding="utf-8")
    assert "no 'answer' field" in str(read_prediction(bad).error)
    assert read_prediction(tmp_path / "absent.json").missing
    with pytest.raises(FileNotFoundError):
        discover_models(tmp_path / "nowhere")


def test_malformed_prediction_reason_is_whole(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"answer": "翦', encoding="utf-8")
    # Opening quote of the answer = character 12 of line 1 (counted by hand); the reason
    # keeps Python's whole message, "Unterminated string starting at", plus the column.
    assert read_prediction(bad).error == (
        f"{bad}:1: malformed JSON (Unterminated string starting at: column 12)")


def test_predictions_root_too_deep(tmp_path: Path) -> None:
    _, pred = _setup(tmp_path)
    # Correct root: nothing to say.
    check_model_folders(pred, ["m1"], ["seals"])
    # One level too deep: the "model" is the category folder 'seals' -> suggest pred.
    with pytest.raises(PredictionLayoutError, match="pass its parent") as info:
        check_model_folders(pred / "m1", discover_models(pred / "m1"), ["seals"])
    assert str(pred.resolve()) in str(info.value)
    # A folder named otherwise but holding results/ directly is caught too.
    (pred / "m1" / "murals" / "results").mkdir(parents=True)
    with pytest.raises(PredictionLayoutError, match="holds 'results/' directly"):
        check_model_folders(pred / "m1", ["murals"])
    # Two levels too deep: the only "model" is 'results' -> suggest two levels up.
    with pytest.raises(PredictionLayoutError, match="category folder") as info:
        check_model_folders(pred / "m1" / "seals", ["results"])
    assert str(pred.resolve()) in str(info.value)


def test_warning_when_every_prediction_of_a_model_is_missing(tmp_path: Path) -> None:
    gt, pred = _setup(tmp_path)
    (pred / "m2").mkdir()  # a model folder with nothing inside
    rel = load_release(gt, check_images=False)
    out = score_prediction_folder(rel, pred, ["m1", "m2"], NormalizationFlags(), "empty")
    # m1 lacks 1 of 5 files (no warning); m2 lacks all 5.
    assert out.warnings == [
        f"model 'm2': none of its 5 prediction file(s) found; expected "
        f"{pred / 'm2' / '<category>' / 'results' / '<image stem>.json'} — is "
        "--predictions the folder that holds the model folders?"]


@pytest.mark.parametrize("image", ["s1.png", "./x1.png", "sub//x3.png", "sub/./x15.png",
                                   "a b.png", "印.png", "noext"])
@pytest.mark.parametrize("root", [".", "pred", "./pred/", "pred//"])
def test_prediction_file_is_the_path_as_pathlib_writes_it(root: str, image: str) -> None:
    # Prediction paths are built as strings (no Path per pair); they must read as the
    # Path-built ones always did, e.g. root "." + "./x1.png" -> "m1/seals/results/x1.json"
    # (not "./m1/seals/results/./x1.json"), as samples.jsonl and the missing list show them.
    from heritage_eval.benchmarks.ancient_bench.predictions import prediction_file

    stem = image.rsplit(".", 1)[0] if "." in Path(image).name else image
    expected = str(Path(root) / "m1" / "seals" / "results" / f"{stem}.json")
    assert prediction_file(Path(root), "m1", "seals", image) == expected
    assert prediction_file(root, "m1", "seals", image) == expected
    assert str(prediction_path(Path(root), "m1", "seals", image)) == expected


def test_a_prediction_name_too_long_for_the_file_system_is_missing(tmp_path: Path) -> None:
    # a 300-character image name gives a 296-character prediction file name, over the
    # 255-byte limit: no such file can exist, so it is missing (listed, scored 0 under
    # --missing empty) and the other samples are scored.
    gt = tmp_path / "gt" / "seals"
    gt.mkdir(parents=True)
    long_name = "L" * 296 + ".png"
    gt.joinpath("conv.jsonl").write_text(
        json.dumps({"image": "s1.png", "human_gt": "平舆"}) + "\n"
        + json.dumps({"image": long_name, "human_gt": "翦"}) + "\n", encoding="utf-8")
    res = tmp_path / "pred" / "m1" / "seals" / "results"
    res.mkdir(parents=True)
    res.joinpath("s1.json").write_text(json.dumps({"answer": "平舆"}), encoding="utf-8")
    rel = load_release(tmp_path / "gt", check_images=False)
    out = score_prediction_folder(rel, tmp_path / "pred", ["m1"], NormalizationFlags(),
                                  "empty")
    rows = {r.id: r for r in out.records}
    assert rows["seals/s1"].ned_score == 1.0
    assert rows["seals/" + "L" * 296].missing_prediction
    assert [m["id"] for m in out.missing] == ["seals/" + "L" * 296]
