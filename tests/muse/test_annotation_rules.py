"""Label Studio import rules added after review: which of several annotations is used, the
count-versus-boxes check, and box coverage (used to reject ambiguous distractors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.labelstudio import load_labelstudio
from heritage_eval.benchmarks.muse.labelstudio_rules import choose_annotation, count_mismatches
from heritage_eval.benchmarks.muse.options import too_close
from tests.conftest import realdata

REAL = realdata("muse")


def _export(tmp_path: Path, tasks: list[dict[str, object]]) -> Path:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def test_count_differing_from_boxes_is_a_warning(tmp_path: Path) -> None:
    tasks = json.loads((REAL / "annotations.json").read_text(encoding="utf-8"))
    # Anker (task 5) has 2 "straw hat" object boxes (o1, o2) and count_straw_hat = 2
    for item in tasks[4]["annotations"][0]["result"]:
        if item["from_name"] == "count_straw_hat":
            item["value"]["number"] = 5
    result = load_labelstudio(_export(tmp_path, tasks))
    assert len(result.annotations) == 7  # still imported, the count is the answer
    assert result.warnings == [
        "export.json: task 5, field count_straw_hat: count 5 but 2 object box(es) labelled "
        "'straw hat' (the schema has one box per counted instance)"]
    anker = next(a for a in result.annotations if a.image_id == "anker_leapfrog_1866")
    assert anker.object_counts["straw hat"] == 5


def test_several_annotations_use_the_latest_and_warn(tmp_path: Path) -> None:
    tasks = json.loads((REAL / "annotations.json").read_text(encoding="utf-8"))
    first = tasks[0]["annotations"][0]
    scene = next(i for i in first["result"] if i["from_name"] == "scene")
    older = json.loads(json.dumps(first))
    older.update(id=7, updated_at="2024-01-01T10:00:00Z")
    next(i for i in older["result"] if i["from_name"] == "scene")["value"]["choices"] = [
        "old label"]
    first.update(id=9, updated_at="2024-03-05T08:00:00Z")
    cancelled = dict(first, id=11, was_cancelled=True, updated_at="2025-01-01T00:00:00Z")
    tasks[0]["annotations"] = [older, first, cancelled]
    result = load_labelstudio(_export(tmp_path, tasks))
    utamaro = next(a for a in result.annotations if a.image_id == "utamaro_hour_of_the_dragon")
    # id 9 is the latest non-cancelled one (id 11 was cancelled)
    assert utamaro.scene == scene["value"]["choices"][0] == "courtesan's room interior"
    assert result.warnings == ["export.json: task 1: 2 annotations (7, 9); using 9 "
                               "(latest, not cancelled)"]


def test_choose_annotation_rule() -> None:
    a = {"id": 1, "updated_at": "2024-05-01", "result": []}
    b = {"id": 2, "updated_at": "2024-01-01", "ground_truth": True, "result": []}
    assert choose_annotation([a, b]) == (b, "2 annotations (1, 2); using 2 (marked "
                                            "ground_truth, not cancelled)")
    assert choose_annotation([a]) == (a, None)
    # no timestamps: the last in the list
    c, d = {"id": 3}, {"id": 4}
    assert choose_annotation([c, d])[0] is d
    assert choose_annotation([{"id": 5, "was_cancelled": True}]) == (None, None)
    assert count_mismatches({"jug": 1, "Hut": 2}, ["jug", "hut", "hut"]) == []
    assert count_mismatches({"jug": 2}, ["jug"]) == [("jug", 2, 1)]


def test_coverage_and_too_close() -> None:
    truth = Box(x=0.811321, y=0.23, w=0.188679, h=0.126)  # Dürer a2 "holding hands"
    man = Box(x=0.015723, y=0.088, w=0.977987, h=0.82)  # Dürer p1
    # overlap: x 0.811321..0.99371 (0.182389), y 0.23..0.356 (0.126) -> 0.0229810 of
    # the truth's 0.0237736 = 0.9667
    assert man.coverage(truth) == pytest.approx(0.182389 * 0.126 / (0.188679 * 0.126),
                                                rel=1e-4)
    assert man.iou(truth) < 0.05  # IoU alone would have let it through
    assert too_close(man, truth) and not too_close(truth, man)
    inner = Box(x=0.85, y=0.25, w=0.05, h=0.05)
    assert inner.coverage(truth) == pytest.approx(0.0025 / (0.188679 * 0.126))
    assert not too_close(inner, truth)  # a small part of the region is still wrong
