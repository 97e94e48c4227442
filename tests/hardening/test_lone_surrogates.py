"""A lone UTF-16 surrogate escape (``"\\ud800"``) is valid JSON but not valid Unicode text:
it used to crash ``score`` / ``run`` (nothing could be written). In an answer it is
replaced by U+FFFD and scored as the official evaluator scores the surrogate (one
unmatched token); in a ground truth it is that sample's data error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from tests.fake_server import Scripted, chat_reply, fake_openai_server

GT = "長樂未央"


def _score_layout(root: Path, answer_json: str, gt: str = GT) -> tuple[Path, Path]:
    (root / "gt" / "seals").mkdir(parents=True)
    (root / "gt" / "seals" / "conv.jsonl").write_text(
        json.dumps({"image": "a.png", "human_gt": gt}) + "\n", encoding="utf-8")
    res = root / "pred" / "m" / "seals" / "results"
    res.mkdir(parents=True)
    (res / "a.json").write_text('{"answer": "' + answer_json + '"}', encoding="utf-8")
    return root / "gt", root / "pred"


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "samples.jsonl").read_text("utf-8").splitlines()]


def test_score_replaces_a_lone_surrogate_in_an_answer(tmp_path: Path) -> None:
    gt, pred = _score_layout(tmp_path, "長樂\\ud800央")
    out = tmp_path / "out"
    assert main(["score", "ancient-bench", "--data", str(gt), "--predictions", str(pred),
                 "--out", str(out)]) == 0
    (row,) = _rows(out)
    # by hand: 長樂?央 vs 長樂未央, one substitution in 4 tokens: NED 0.75, F1 3/4
    assert row["scores"]["ned_score"] == 0.75 and row["scores"]["f1"] == 0.75
    assert "\ufffd" in json.dumps(row, ensure_ascii=False)


def test_a_lone_surrogate_in_a_ground_truth_is_that_samples_error(tmp_path: Path) -> None:
    gt, pred = _score_layout(tmp_path, GT, gt="長\ud800")
    out = tmp_path / "out"
    assert main(["score", "ancient-bench", "--data", str(gt), "--predictions", str(pred),
                 "--out", str(out)]) == 0  # a data error is reported, as any other
    (row,) = _rows(out)
    assert row["state"] == "error"
    assert "holds a lone surrogate (U+D800) at character 1" in row["error"]


def test_run_scores_a_completion_holding_a_lone_surrogate(tmp_path: Path) -> None:
    data = tmp_path / "data" / "seals"
    (data / "images").mkdir(parents=True)
    from PIL import Image

    Image.new("RGB", (20, 20), "white").save(data / "images" / "a.png")
    (data / "conv.jsonl").write_text(json.dumps({"image": "a.png", "human_gt": GT}) + "\n",
                                     encoding="utf-8")

    def respond(body: dict[str, Any]) -> Scripted:
        return chat_reply("<res>長樂\ud800央</res>")

    out = tmp_path / "run"
    with fake_openai_server() as srv:
        srv.responder = respond
        args = ["run", "ancient-bench", "--data", str(tmp_path / "data"), "--model",
                "openai:vlm", "--base-url", srv.base_url, "--out", str(out)]
        assert main(args) == 0
        sent = len(srv.requests)
        assert main(args) == 0  # finished: the re-run answers from the cache
        assert len(srv.requests) == sent
    (row,) = _rows(out)
    assert row["state"] == "scored" and row["scores"]["ned_score"] == 0.75


def test_an_image_name_with_a_nul_or_a_lone_surrogate_is_that_samples_error(
        tmp_path: Path) -> None:
    # "x\u0000y.png" and "\udcff.png" cannot name a file (os.stat raises ValueError, the
    # name cannot be encoded): each line is a data error naming the reason and its
    # line; the good line (a.png) is scored.
    (tmp_path / "gt" / "seals").mkdir(parents=True)
    lines = [json.dumps({"image": "a.png", "human_gt": GT}),
             '{"image": "x\\u0000y.png", "human_gt": "長樂"}',
             '{"image": "\\udcff.png", "human_gt": "長樂"}']
    (tmp_path / "gt" / "seals" / "conv.jsonl").write_text("\n".join(lines) + "\n",
                                                          encoding="utf-8")
    res = tmp_path / "pred" / "m" / "seals" / "results"
    res.mkdir(parents=True)
    (res / "a.json").write_text(json.dumps({"answer": GT}), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["score", "ancient-bench", "--data", str(tmp_path / "gt"), "--predictions",
                 str(tmp_path / "pred"), "--out", str(out)]) == 0
    rows = {r["id"]: r for r in _rows(out)}
    assert rows["seals/a"]["scores"]["ned_score"] == 1.0
    assert rows["seals/line2"]["state"] == "error"
    assert "conv.jsonl:2: 'image' holds a NUL character" in rows["seals/line2"]["error"]
    assert "conv.jsonl:3: 'image' holds a lone surrogate (U+DCFF)" in \
        rows["seals/line3"]["error"]


def test_character_f1_counts_a_lone_surrogate_in_a_long_text() -> None:
    # texts of 64+ characters are counted by code point (numpy); a lone surrogate is one
    # code point, as Counter counts it: 63 x 甲 + U+D800 against 64 x 甲 -> overlap 63,
    # P = R = 63/64 -> F1 = 63/64.
    from heritage_eval.metrics.text import char_f1

    assert char_f1("甲" * 63 + "\ud800", "甲" * 64) == 63 / 64


def _hcsu_with_bad_names(tmp_path: Path) -> Path:
    import shutil

    data = tmp_path / "hcsu"
    shutil.copytree(Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu", data)
    ann = data / "bei_annotations.json"
    records = json.loads(ann.read_text("utf-8"))
    records[0]["filename"] = "cwTeX圆体字库-圆体/不\u0000_1.png"
    records[1]["filename"] = "cwTeX圆体字库-圆体/\udcff.png"
    ann.write_text(json.dumps(records, ensure_ascii=True), encoding="utf-8")
    return data


def test_hcsu_annotation_filenames_with_nul_or_a_lone_surrogate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # each such record is a problem named by its record index and skipped (run, load);
    # validate reports it as an error; canonicalize copies the annotations (the record
    # with the surrogate written escaped, as it was read) instead of crashing
    from heritage_eval.benchmarks.hcsu.loader import load_hcsu

    data = _hcsu_with_bad_names(tmp_path)
    dataset = load_hcsu(data)
    assert "bei_annotations.json record 0: filename holds a NUL character: not a usable " \
        "file name, record skipped" in dataset.problems
    assert "bei_annotations.json record 1: filename holds a lone surrogate (U+DCFF): not a " \
        "usable file name, record skipped" in dataset.problems
    assert main(["run", "hcsu-discrimination", "--data", str(data), "--model",
                 "baseline:random", "--k", "5", "--out", str(tmp_path / "run")]) == 0
    assert main(["validate", "hcsu", "--data", str(data), "--k", "5"]) == 1
    err = capsys.readouterr()
    assert "error[filename-unusable]: filename holds a NUL character" in err.out + err.err
    assert main(["hcsu", "canonicalize", str(data), str(tmp_path / "canon")]) == 0
    copied = (tmp_path / "canon" / "bei_annotations.json").read_text("utf-8")
    assert "\\udcff" in copied and len(json.loads(copied)) == len(
        json.loads((data / "bei_annotations.json").read_text("utf-8")))
