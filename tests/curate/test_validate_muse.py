"""``validate muse``: the real Label Studio export passes; one synthetic bad export per
check, each asserting the exact code, task (index and id), region and line; JSON-MIN
exports are refused by the validator and by the importer."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from heritage_eval.benchmarks.muse.labelstudio import LabelStudioFormatError, load_labelstudio
from heritage_eval.cli.main import main
from heritage_eval.curate.validate.muse import validate_export
from heritage_eval.curate.validate.report import Finding
from tests.conftest import realdata

REAL = realdata("muse")


def _box(rid: str, name: str, label: str, x: float = 10, y: float = 10, w: float = 30,
         h: float = 40) -> dict[str, Any]:
    return {"id": rid, "from_name": name, "to_name": "image", "type": "rectanglelabels",
            "original_width": 100, "original_height": 80,
            "value": {"x": x, "y": y, "width": w, "height": h, "rotation": 0,
                      "rectanglelabels": [label]}}


def _attr(rid: str, name: str, kind: str, values: list[str]) -> dict[str, Any]:
    key = "choices" if kind == "choices" else "text"
    return {"id": rid, "from_name": name, "to_name": "image", "type": kind,
            "value": {"x": 10, "y": 10, "width": 30, "height": 40, "rotation": 0,
                      key: values}}


def _image_level(rid: str, name: str, kind: str, value: Any) -> dict[str, Any]:
    key = {"choices": "choices", "textarea": "text", "number": "number"}[kind]
    return {"id": rid, "from_name": name, "to_name": "image", "type": kind,
            "value": {key: value}}


def _good_task() -> dict[str, Any]:
    """One task with every part of the schema, valid."""
    result = [
        _box("p1", "character", "Woman"), _attr("p1", "emotion", "choices", ["Joy"]),
        _attr("p1", "visual_clues", "textarea", ["smiling"]),
        _attr("p1", "emotion_cause", "textarea", ["her child plays"]),
        _box("p2", "character", "Boy", x=50), _attr("p2", "emotion", "choices", ["Neutral"]),
        _attr("p2", "visual_clues", "textarea", ["calm face"]),
        _box("a1", "activity", "playing", x=5, w=60),
        _attr("a1", "activity_description", "textarea", ["A boy plays near a woman."]),
        _attr("a1", "negative_description", "textarea", ["A boy sleeps."]),
        _box("o1", "object", "jug", x=70, w=10, h=10),
        _box("c1", "culture", "Dutch (Golden Age)", x=0, y=0, w=100, h=100),
        _image_level("s", "scene", "choices", ["kitchen"]),
        _image_level("n", "count_jug", "number", 1),
        _image_level("r", "relative_position", "textarea",
                     ["A=p1;B=p2;lateral=right;depth=front;vertical=none"]),
        _image_level("i", "remote_interaction", "textarea", ["A=p2;B=p1;evidence=looks at"]),
    ]
    return {"id": 7, "data": {"image": "images/scene.png"},
            "annotations": [{"id": 1, "result": result}]}


def _export(root: Path, tasks: list[Any]) -> Path:
    """Write the export with indent=1 (task i begins on line 2 + its offset) and the one
    image it names (100 x 80 px)."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (80, 100), dtype=np.uint8)).save(
        root / "images" / "scene.png")
    path = root / "export.json"
    path.write_text(json.dumps(tasks, indent=1), encoding="utf-8")
    return path


def _found(findings: list[Finding]) -> list[tuple[int | None, str, str]]:
    return [(f.line, f.level, f.code) for f in findings]


def _without(task: dict[str, Any], rid: str, name: str) -> dict[str, Any]:
    task = copy.deepcopy(task)
    result = task["annotations"][0]["result"]
    task["annotations"][0]["result"] = [r for r in result
                                        if not (r["id"] == rid and r["from_name"] == name)]
    return task


def test_real_export_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "muse", "--export", str(REAL / "annotations.json"),
                 "--no-progress"]) == 0
    # 184 result items: per from_name counts of the export (character 23, emotion 23,
    # visual_clues 23, emotion_cause 13, activity 16, activity_description 16,
    # negative_description 7, object 24, culture 8, 13 count_*, scene 7,
    # relative_position 7, remote_interaction 4)
    assert capsys.readouterr().out.splitlines() == [
        f"muse {REAL / 'annotations.json'}: 0 errors, 0 warnings (checked 1 file, 7 tasks, "
        "7 images, 184 regions)"]


def test_synthetic_good_export_passes(tmp_path: Path) -> None:
    report = validate_export(_export(tmp_path, [_good_task()]), progress=False)
    assert report.findings == []
    assert report.checked == {"files": 1, "tasks": 1, "images": 1, "regions": 16}


def test_region_missing_attribute(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _export(tmp_path, [_good_task(), _without(_good_task(), "p2", "emotion")])
    assert main(["validate", "muse", "--export", str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out.splitlines()
    # task #1 begins after task #0's lines: find its line in the written file
    line = path.read_text(encoding="utf-8").splitlines().index(" },") + 2
    # one line's findings keep the order they were found in: task, image, then regions
    assert out[:3] == [
        f"{path}:{line}: warning[duplicate-task]: task #1 (id 7): task id also used by "
        "task #0",
        f"{path}:{line}: warning[duplicate-image]: task #1 (id 7): image "
        "'images/scene.png' is also annotated by task #0",
        f"{path}:{line}: error[attribute-missing]: task #1 (id 7), region p2: character box "
        "lacks emotion"]


def test_box_at_120_percent(tmp_path: Path) -> None:
    task = _good_task()
    task["annotations"][0]["result"][10]["value"]["x"] = 120  # o1, the jug box
    report = validate_export(_export(tmp_path, [task]), progress=False)
    assert _found(report.findings) == [(2, "error", "box-out-of-range"),
                                       # the jug box is gone, its count now disagrees
                                       (2, "warning", "count-mismatch")]
    assert report.findings[0].message == (
        "task #0 (id 7), region o1: object box x=120, x+width=130: Label Studio boxes are "
        "percent of the image, 0–100")


def test_wrong_type_orphan_attribute_bad_emotion_and_relation(tmp_path: Path) -> None:
    task = _good_task()
    result = task["annotations"][0]["result"]
    result[1]["value"]["choices"] = ["Happy"]                    # p1 emotion not in the 11
    result[8]["type"] = "choices"                                # activity_description
    result.append(_attr("zz", "visual_clues", "textarea", ["?"]))  # no box zz
    result[14]["value"]["text"] = ["A=p1;B=o9;lateral=right;depth=front;vertical=none"]
    report = validate_export(_export(tmp_path, [task]), progress=False)
    assert [(f.code, f.message.split(": ", 1)[0]) for f in report.findings] == [
        ("type-mismatch", "task #0 (id 7), region a1"),     # items, in result order
        ("choice-unknown", "task #0 (id 7), region p1"),    # attributes, by region
        ("attribute-orphan", "task #0 (id 7), region zz"),
        ("attribute-missing", "task #0 (id 7), region a1"),  # the mistyped item is gone
        ("relation-end", "task #0 (id 7), region r")]       # image-level parts last


def test_missing_and_corrupt_image(tmp_path: Path) -> None:
    task = _good_task()
    other = copy.deepcopy(task)
    other["id"], other["data"]["image"] = 8, "images/absent.png"
    path = _export(tmp_path, [task, other])
    (tmp_path / "images" / "scene.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    report = validate_export(path, progress=False)
    assert [f.code for f in report.findings if f.level == "error"] == [
        "image-unreadable", "image-missing"]
    assert report.findings[1].message == (f"task #1 (id 8): image 'images/absent.png' not "
                                          f"found under {tmp_path} (as given, or by file "
                                          "name)")


JSON_MIN = [{"image": "/data/upload/1/scene.png", "id": 7,
             "character": [{"x": 10, "y": 10, "width": 30, "height": 40, "rotation": 0,
                            "rectanglelabels": ["Woman"], "original_width": 100,
                            "original_height": 80}],
             "emotion": "Joy", "annotator": 1, "annotation_id": 3, "lead_time": 12.5}]


def test_json_min_export_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "min.json"
    path.write_text(json.dumps(JSON_MIN), encoding="utf-8")
    assert main(["validate", "muse", "--export", str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}: error[json-min]: this is a Label Studio JSON-MIN "
                             "export (one flat object per task with keys such as "
                             "annotation_id, character, emotion; no annotations[].result[] "
                             "list). JSON-MIN drops the region ids")
    assert out[0].endswith("Export the project again with Export -> 'JSON' (not "
                           "'JSON-MIN')")
    with pytest.raises(LabelStudioFormatError, match="JSON-MIN drops the region ids"):
        load_labelstudio(path)
    # muse generate refuses it the same way (usage error), writing nothing
    out = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(path), "--images", str(tmp_path),
                 "--out", str(out), "--no-progress"]) == 2
    assert "Label Studio JSON-MIN export" in capsys.readouterr().err
    assert not out.exists()


def test_full_json_with_flat_looking_keys_is_not_json_min(tmp_path: Path) -> None:
    # a normal export whose tasks carry "data" is never taken for JSON-MIN
    task = _good_task()
    task["emotion"] = "Joy"
    result = load_labelstudio(_export(tmp_path, [task]))
    assert len(result.annotations) == 1


def test_malformed_export_and_usage_errors(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[\n {"id": 1,\n  "data": }\n]', encoding="utf-8")
    assert main(["validate", "muse", "--export", str(path), "--no-progress"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{path}:3: error[json-malformed]: malformed JSON (Expecting value: column 11)")
    assert main(["validate", "muse", "--export", str(tmp_path / "nope.json")]) == 2
    assert "Label Studio export not found" in capsys.readouterr().err
    assert main(["validate", "muse", "--export", str(path), "--images",
                 str(tmp_path / "nodir")]) == 2
