"""Label Studio import of the real MUSE sample and validation errors.

Expected values are read by hand from ``shared/realdata/muse/annotations.json`` (percent
values divided by 100) and ``SCHEMA.md``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from heritage_eval.benchmarks.muse.annotation import Box, ImageAnnotation
from heritage_eval.benchmarks.muse.labelstudio import LabelStudioFormatError, load_labelstudio
from tests.conftest import realdata

REAL = realdata("muse")
EXPORT = REAL / "annotations.json"


@pytest.fixture(scope="module")
def real() -> dict[str, ImageAnnotation]:
    result = load_labelstudio(EXPORT)
    assert result.issues == []
    assert result.warnings == []
    return {a.image_id: a for a in result.annotations}


def test_real_sample_imports_every_task(real: dict[str, ImageAnnotation]) -> None:
    # SCHEMA.md's per-image table lists 7 tasks.
    assert sorted(real) == sorted([
        "utamaro_hour_of_the_dragon", "durer_peasant_couple_dancing_1514",
        "giotto_st_francis_gives_his_mantle_1299", "waldmuller_mothers_joy_1860",
        "anker_leapfrog_1866", "gauguin_woman_holding_a_fruit_1893", "vibert_the_duet_1897"])
    # People per image from SCHEMA.md: 2, 2, 2, 4, 7, 4, 2.
    assert sum(len(a.characters) for a in real.values()) == 23


def test_boxes_are_normalized_coco(real: dict[str, ImageAnnotation]) -> None:
    u = real["utamaro_hour_of_the_dragon"]
    # p1: x=22.6586 y=25.0 width=77.3414 height=63.4 (percent) -> /100
    assert u.region("p1").box.coco() == [0.226586, 0.25, 0.773414, 0.634]
    # Anker o1 (straw hat): 63.6, 90.5759, 11.2, 7.0681
    a = real["anker_leapfrog_1866"]
    assert a.region("o1").box.coco() == [0.636, 0.905759, 0.112, 0.070681]
    # Vibert c2 spans the full width: 0.0, 0.0, 100.0, 30.0
    assert real["vibert_the_duet_1897"].region("c2").box.coco() == [0.0, 0.0, 1.0, 0.3]


def test_region_attributes_linked_by_id(real: dict[str, ImageAnnotation]) -> None:
    u = real["utamaro_hour_of_the_dragon"]
    p2 = u.characters[1]
    assert (p2.id, p2.category, p2.emotion) == ("p2", "Girl", "Neutral")
    assert p2.emotion_cause == "She is quietly peering at the letter the courtesan is reading."
    a1 = u.activities[0]
    assert a1.label == "reading a letter"
    assert a1.negative_descriptions == (
        "A woman writes a letter with a brush, holding the paper on a low writing desk.",)
    assert u.activities[1].negative_descriptions == ()
    # Waldmüller p3 (girl) has visual clues but no emotion cause in the export.
    p3 = real["waldmuller_mothers_joy_1860"].region("p3")
    assert p3.visual_clues is not None and p3.emotion_cause is None  # type: ignore[union-attr]


def test_image_level_items(real: dict[str, ImageAnnotation]) -> None:
    u = real["utamaro_hour_of_the_dragon"]
    assert u.scene == "courtesan's room interior"
    assert u.object_counts == {"letter scroll": 1, "lacquer box": 1}
    rel = u.relative_positions[0]
    assert (rel.a, rel.b, rel.lateral, rel.depth, rel.vertical) == ("p2", "p1", "right", "back",
                                                                    "none")
    assert u.remote_interactions == ()
    g = real["giotto_st_francis_gives_his_mantle_1299"].remote_interactions[0]
    assert (g.a, g.b) == ("p2", "p1")
    assert g.evidence.startswith("The man in red raises his face toward the haloed man")
    assert (u.width, u.height) == (331, 500)


def test_counts_match_object_boxes(real: dict[str, ImageAnnotation]) -> None:
    # SCHEMA.md: "the count equals the number of object boxes with that label".
    for ann in real.values():
        for name, n in ann.object_counts.items():
            assert n == sum(o.name == name for o in ann.objects), (ann.image_id, name)
    assert real["anker_leapfrog_1866"].object_counts == {"straw hat": 2, "column": 2}


def _broken_export(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    tasks = json.loads(EXPORT.read_text(encoding="utf-8"))
    tasks = copy.deepcopy(tasks)
    edit(tasks)
    out = tmp_path / "export.json"
    out.write_text(json.dumps(tasks), encoding="utf-8")
    return out


def _item(task: dict, rid: str, from_name: str) -> dict:  # type: ignore[type-arg]
    for item in task["annotations"][0]["result"]:
        if item["id"] == rid and item["from_name"] == from_name:
            return item  # type: ignore[no-any-return]
    raise KeyError((rid, from_name))


def test_box_outside_image_names_task_region_field(tmp_path: Path) -> None:
    def edit(tasks: list) -> None:  # type: ignore[type-arg]
        _item(tasks[2], "o4", "object")["value"]["width"] = 40.0  # x=75.4098 -> 1.154 wide
    result = load_labelstudio(_broken_export(tmp_path, edit))
    # issue 10 item 15 changed the rule: one bad region no longer drops the whole image;
    # the region is dropped (``dropped``), the task's 6 other boxes are kept
    assert len(result.annotations) == 7 and result.issues == []
    assert len(result.dropped) == 1
    issue = result.dropped[0]
    assert (issue.file, issue.task_id, issue.region, issue.field) == ("export.json", "3", "o4",
                                                                       "object")
    # x 75.4098 + width 40 = 115.4098: 15.4098 percentage points beyond the right edge
    assert "box extends 15.41 % beyond the image edge" in issue.message
    assert str(issue).startswith("export.json: task 3, region o4, field object: ")
    giotto = next(a for a in result.annotations if a.source == "export.json#task=3")
    assert "o4" not in {r.id for r in giotto.regions()}


def test_bad_emotion_and_orphan_attribute(tmp_path: Path) -> None:
    def edit(tasks: list) -> None:  # type: ignore[type-arg]
        _item(tasks[0], "p1", "emotion")["value"]["choices"] = ["Happy"]
        _item(tasks[1], "a1", "activity_description")["id"] = "a9"  # no box a9
    result = load_labelstudio(_broken_export(tmp_path, edit))
    # issue 10 item 15: the bad character (p1) and the orphan attribute are dropped, the
    # two images are kept (they were skipped whole before)
    assert len(result.annotations) == 7 and result.issues == []
    got = {(i.task_id, i.region, i.field) for i in result.dropped}
    assert got == {("1", "p1", "emotion"), ("2", "a9", "activity_description")}


def test_relation_and_count_errors(tmp_path: Path) -> None:
    def edit(tasks: list) -> None:  # type: ignore[type-arg]
        _item(tasks[3], "relative_position", "relative_position")["value"]["text"] = [
            "A=p1;B=p7;lateral=right;depth=front;vertical=none"]  # p7 not in task 4
        _item(tasks[4], "count_column", "count_column")["value"]["number"] = -2
        _item(tasks[6], "relative_position", "relative_position")["value"]["text"] = [
            "A=p1;B=p2;lateral=sideways;depth=back;vertical=none"]
    result = load_labelstudio(_broken_export(tmp_path, edit))
    got = {(i.task_id, i.region, i.field) for i in result.dropped}
    assert got == {("4", "p7", "relative_position"), ("5", "count_column", "count_column"),
                   ("7", "relative_position", "relative_position.lateral")}
    # issue 10 item 15: the relation / count is dropped, the image kept (4 before)
    assert len(result.annotations) == 7 and result.issues == []


def test_unreadable_export(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(LabelStudioFormatError, match=r"bad\.json"):
        load_labelstudio(bad)
    bad.write_text('{"id": 1}', encoding="utf-8")
    with pytest.raises(LabelStudioFormatError, match="JSON list"):
        load_labelstudio(bad)


def test_box_iou_and_validation() -> None:
    a = Box(x=0.0, y=0.0, w=0.5, h=0.5)
    b = Box(x=0.25, y=0.25, w=0.5, h=0.5)
    # intersection 0.25*0.25 = 0.0625; union 0.25 + 0.25 - 0.0625 = 0.4375
    assert a.iou(b) == pytest.approx(0.0625 / 0.4375)
    with pytest.raises(ValidationError):
        Box(x=0.8, y=0.0, w=0.5, h=0.1)
