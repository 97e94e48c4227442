"""``heritage-eval muse generate`` end to end: bad input is reported and skipped, knobs
are recorded, task selection works."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from heritage_eval.benchmarks.muse.questions import read_questions
from heritage_eval.cli.main import main

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "realdata" / "muse"


def _export_with_problems(tmp_path: Path) -> tuple[Path, Path]:
    """Copy of the sample: task 2's emotion made invalid, task 6's image removed."""
    tasks = json.loads((REAL / "annotations.json").read_text(encoding="utf-8"))
    for item in tasks[1]["annotations"][0]["result"]:
        if item["id"] == "p2" and item["from_name"] == "emotion":
            item["value"]["choices"] = ["Elation"]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks), encoding="utf-8")
    images = tmp_path / "images"
    shutil.copytree(REAL / "images", images)
    (images / "gauguin_woman_holding_a_fruit_1893.jpg").unlink()
    return export, images


def test_bad_image_reported_and_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    export, images = _export_with_problems(tmp_path)
    out = tmp_path / "out" / "q.jsonl"
    code = main(["muse", "generate", "--annotations", str(export), "--images", str(images),
                 "--out", str(out), "--tasks", "object_count", "scene_classification",
                 "--no-progress"])
    assert code == 0
    header, questions = read_questions(out)
    errors = header.source["errors"]
    assert len(errors) == 2
    assert errors[0].startswith("export.json: task 2, region p2, field emotion: ")
    assert errors[1].startswith("export.json: task 6, field data.image: image file not found")
    assert {q.image_id for q in questions} == {
        "utamaro_hour_of_the_dragon", "giotto_st_francis_gives_his_mantle_1299",
        "waldmuller_mothers_joy_1860", "anker_leapfrog_1866", "vibert_the_duet_1897"}
    # object counts of those 5 images: 2 + 2 + 2 + 2 + 2 (SCHEMA.md count_* names)
    assert header.source["turns_per_task"] == {"object_count": 10, "scene_classification": 5}
    printed = capsys.readouterr()
    assert "skipped image: export.json: task 2, region p2, field emotion" in printed.err
    assert "object_count" in printed.out and "10" in printed.out


def test_knobs_recorded_and_task_selection(tmp_path: Path) -> None:
    out = tmp_path / "q.jsonl"
    code = main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL), "--out", str(out), "--seed", "3",
                 "--tasks", "emotion_detection", "activity_description", "jigsaw_puzzle",
                 "--jigsaw-grid", "4x5", "--set", "activity_description.n_options=3",
                 "--set", 'activity_description.distractor_types=["neg", "oa"]',
                 "--set", "emotion_detection.n_options=4", "--draw-boxes", "--no-progress",
                 "--set", "object_classification.max_per_image=1"])
    assert code == 0
    header, questions = read_questions(out)
    # emotion detection needs the object-classification turn before it
    assert header.tasks == ["object_classification", "emotion_detection",
                            "activity_description", "jigsaw_puzzle"]
    assert header.seed == 3
    assert header.params["jigsaw_puzzle"]["grids"] == [[4, 5]]
    for q in questions:
        for t in q.turns:
            if t.task == "activity_description":
                assert len(t.options) <= 3 and t.params["n_options"] == 3
                assert {o.distractor_type for o in t.options} <= {"correct", "neg", "oa"}
                # drawn box copy is sent after the artwork and exists on disk
                assert len(t.images) == 2 and (tmp_path / t.images[1]).is_file()
            if t.task == "emotion_detection":
                assert len(t.options) == 4
            if t.task == "jigsaw_puzzle":
                assert t.params["grid"] == [4, 5]
    assert not any(t.task == "visual_clue_identification" for q in questions for t in q.turns)
    # max_per_image=1 on the dialogue: one of each image's people (7 images)
    dialogues = [q for q in questions if q.turns[0].task == "object_classification"]
    assert len(dialogues) == 7 and len({q.image_id for q in dialogues}) == 7


def test_bad_knob_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL / "images"), "--out", str(tmp_path / "q.jsonl"),
                 "--set", "jigsaw_puzzle.n_options=9", "--no-progress"])
    assert code == 2
    assert "n_options" in capsys.readouterr().err
    assert not (tmp_path / "q.jsonl").exists()
