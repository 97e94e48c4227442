"""Issue 10, items 15 and 16 (Label Studio part): box geometry and duplicate tasks.

Exports are built here from the issue's exact inputs; each expected box was computed by
hand (comments). Kinds guarded against: a misleading message for pixel values in percent
fields; a rounding overshoot rejected; a negative size rejected; a rotated box converted
in percent space (wrong on a non-square image) or refused; one bad region dropping the
whole image; a task listed twice doubling its artwork.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.benchmarks.muse.labelstudio import load_labelstudio
from heritage_eval.benchmarks.muse.labelstudio_rules import BoxGeometryError, box_from_percent


def _box(rid: str, value: dict[str, Any], size: tuple[int, int] | None = (1000, 500),
         label: str = "jug") -> dict[str, Any]:
    item: dict[str, Any] = {"id": rid, "from_name": "object", "to_name": "image",
                            "type": "rectanglelabels",
                            "value": {**value, "rectanglelabels": [label]}}
    if size:
        item |= {"original_width": size[0], "original_height": size[1]}
    return item


def _export(tmp_path: Path, *results: list[dict[str, Any]], image: str = "images/a.jpg",
            tasks: list[dict[str, Any]] | None = None) -> Path:
    tasks = tasks or [{"id": i + 1, "data": {"image": image if i == 0 else f"images/{i}.jpg"},
                       "annotations": [{"id": 1, "result": r}]} for i, r in enumerate(results)]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def _only(path: Path) -> Any:
    result = load_labelstudio(path)
    assert result.issues == [] and len(result.annotations) == 1
    return result, result.annotations[0]


GOOD = _box("o1", {"x": 10, "y": 10, "width": 20, "height": 20})


def test_a_pixel_values_in_percent_fields(tmp_path: Path) -> None:
    # kind: pixel units in percent fields reported as a misleading "<= 1" message; and the
    # whole image dropped for one bad region
    bad = _box("o2", {"x": 2691.55, "y": 40, "width": 10, "height": 10}, size=(3072, 2048))
    result, ann = _only(_export(tmp_path, [GOOD, bad]))
    assert [r.id for r in ann.regions()] == ["o1"]  # the good region is kept
    (issue,) = result.dropped
    assert str(issue) == (
        "export.json: task 1, region o2, field object: x=2691.55 on a 3072 x 2048 px image "
        "looks like pixel units: Label Studio box values are percent (0–100) of the image "
        "size")


def test_b_tiny_overshoot_is_clamped_with_a_warning(tmp_path: Path) -> None:
    # kind: a rounding overshoot (0.0003 percentage points) rejected
    box = _box("o1", {"x": -0.0003, "y": 5, "width": 100.0005, "height": 10})
    result, ann = _only(_export(tmp_path, [box]))
    # left edge -0.0003 -> 0; right edge -0.0003 + 100.0005 = 100.0002 -> 100
    assert ann.region("o1").box.coco() == [0.0, 0.05, 1.0, 0.1]
    assert result.warnings == ["export.json: task 1, region o1, field object: clamped to the "
                               "image (overshoot 0.0003 %)"]
    # a larger overshoot (1 percentage point) is refused, not clamped
    with pytest.raises(BoxGeometryError, match="1 % beyond the image edge"):
        box_from_percent({"x": 50, "y": 5, "width": 51, "height": 10})


def test_c_negative_width_is_normalised(tmp_path: Path) -> None:
    # kind: a box drawn right-to-left (negative width) rejected
    box = _box("o1", {"x": 60, "y": 10, "width": -20, "height": 30})
    result, ann = _only(_export(tmp_path, [box]))
    # x 60 + (-20) = 40 -> 0.4, width 20 -> 0.2
    assert ann.region("o1").box.coco() == [0.4, 0.1, 0.2, 0.3]
    assert result.warnings == ["export.json: task 1, region o1, field object: negative width "
                               "normalised (width=-20, height=30)"]


# (d) by hand: 1000 x 500 px; x 20 % = 200 px, y 20 % = 100 px, width 30 % = 300 px,
# height 20 % = 100 px. Rotating 90 degrees clockwise (screen axes, y down) about the
# top-left corner (200, 100) maps a corner offset (dx, dy) to (-dy, dx): (0, 0), (300, 0),
# (300, 100), (0, 100) -> (0, 0), (0, 300), (-100, 300), (-100, 0). Bounding box x 100–200
# px, y 100–400 px -> [100/1000, 100/500, 100/1000, 300/500] = [0.1, 0.2, 0.1, 0.6]
# (in percent space it would be [0.0, 0.2, 0.2, 0.3], which is wrong on a 2:1 image).
ROTATED = {"x": 20, "y": 20, "width": 30, "height": 20, "rotation": 90}


def test_d_rotated_box_in_pixel_space(tmp_path: Path) -> None:
    # kind: rotated boxes refused, or rotated in percent space
    _, ann = _only(_export(tmp_path, [_box("o1", ROTATED)]))
    assert ann.region("o1").box.coco() == [0.1, 0.2, 0.1, 0.6]
    assert box_from_percent(ROTATED, (1000, 500))[0] == [0.1, 0.2, 0.1, 0.6]


def test_e_empty_result_and_sizes(tmp_path: Path) -> None:
    # kind: an empty task dropped; a plain box needing the pixel size
    result = load_labelstudio(_export(tmp_path, [], [_box("o1", {
        "x": 10, "y": 10, "width": 20, "height": 20}, size=None)]))
    assert result.issues == [] and result.dropped == []
    empty, plain = result.annotations
    assert empty.regions() == [] and (empty.width, empty.height) == (0, 0)
    assert plain.region("o1").box.coco() == [0.1, 0.1, 0.2, 0.2]


def test_e_rotated_box_reads_the_image_size_after_exif(tmp_path: Path) -> None:
    # kind: a rotated box without a stored size: the file is stored 500 x 1000 px with EXIF
    # orientation 6 (rotate 90 on display), so its displayed size is 1000 x 500: as in (d)
    (tmp_path / "images").mkdir()
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.new("RGB", (500, 1000), "white").save(tmp_path / "images" / "a.jpg", exif=exif)
    result, ann = _only(_export(tmp_path, [_box("o1", ROTATED, size=None)]))
    assert ann.region("o1").box.coco() == [0.1, 0.2, 0.1, 0.6]
    assert (ann.width, ann.height) == (1000, 500)
    # without the file: only that region is dropped, naming the task and the file
    plain = _box("o1", {"x": 10, "y": 10, "width": 20, "height": 20}, size=None)
    result = load_labelstudio(_export(tmp_path, [plain, _box("o2", ROTATED, size=None)],
                                      image="images/missing.jpg"))
    (ann,) = result.annotations
    assert [r.id for r in ann.regions()] == ["o1"]
    assert str(result.dropped[0]) == (
        "export.json: task 1, region o2, field object: rotated box (rotation=90) needs the "
        "image size: the item stores no original_width/original_height and the image file "
        f"'images/missing.jpg' was not found under {tmp_path}")


def test_bad_region_takes_its_attributes_and_relations_only(tmp_path: Path) -> None:
    # kind: one bad person box dropping the whole image with its other people
    def person(rid: str, label: str, x: float) -> dict[str, Any]:
        return {**_box(rid, {"x": x, "y": 10, "width": 20, "height": 50}, label=label),
                "from_name": "character"}
    items = [person("p1", "Woman", 10), person("p2", "Alien", 50), person("p3", "Man", 70),
             {"id": "p2", "from_name": "emotion", "type": "choices",
              "value": {"choices": ["Joy"]}},
             {"id": "rel", "from_name": "relative_position", "type": "textarea",
              "value": {"text": ["A=p2;B=p1;lateral=left;depth=none;vertical=none"]}},
             {"id": "rel2", "from_name": "relative_position", "type": "textarea",
              "value": {"text": ["A=p3;B=p1;lateral=left;depth=none;vertical=none"]}}]
    result, ann = _only(_export(tmp_path, items))
    assert [c.id for c in ann.characters] == ["p1", "p3"]
    assert [(r.a, r.b) for r in ann.relative_positions] == [("p3", "p1")]
    # one report, for the box itself (its emotion and relation go with it silently)
    assert [(i.region, i.field) for i in result.dropped] == [("p2", "character")]


def test_task_listed_twice_is_kept_once(tmp_path: Path) -> None:
    # kind: a duplicated task doubling its artwork silently
    task = {"id": 7, "data": {"image": "images/a.jpg"},
            "annotations": [{"id": 1, "result": [GOOD]}]}
    other = {"id": 8, "data": {"image": "images/a.jpg"},
             "annotations": [{"id": 2, "result": []}]}
    result = load_labelstudio(_export(tmp_path, tasks=[task, dict(task), other]))
    assert len(result.annotations) == 1 and result.n_tasks == 3
    assert result.annotations[0].source == "export.json#task=7"
    assert result.warnings == [
        "export.json: task 7 is listed twice (entries 1 and 2, identical); kept the first",
        "export.json: task 8 annotates the same image 'images/a.jpg' as task 7; kept task 7 "
        "(the first)"]
