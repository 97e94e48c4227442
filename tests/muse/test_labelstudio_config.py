"""The shipped Label Studio configuration against the importer and the real export.

Parsed with lxml: every ``from_name`` / ``to_name`` / ``type`` of the real export
(``shared/realdata/muse/annotations.json``) is declared with the same control type and
choice values, per-region items come from ``perRegion`` controls, and the config declares
nothing the importer ignores. Then ``muse generate`` runs on the real export and on a
synthetic export built from the config (one region per control)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lxml import etree
from PIL import Image

from heritage_eval.benchmarks.muse.annotation import EMOTIONS, PERSON_CATEGORIES
from heritage_eval.benchmarks.muse.labelstudio import (
    BOX_KINDS,
    COUNT_PREFIX,
    IMAGE_LEVEL,
    REGION_ATTRIBUTES,
    load_labelstudio,
)
from heritage_eval.benchmarks.muse.questions import read_questions
from heritage_eval.cli.main import main
from heritage_eval.curate.validate.muse import validate_export
from tests.conftest import realdata

REAL = realdata("muse")
CONFIG = (Path(__file__).resolve().parents[2] / "src" / "heritage_eval" / "benchmarks"
          / "muse" / "data" / "labelstudio_config.xml")
#: Label Studio control tag -> the ``type`` of its result items.
RESULT_TYPE = {"RectangleLabels": "rectanglelabels", "Choices": "choices",
               "TextArea": "textarea", "Number": "number"}
#: Schema counts (realdata SCHEMA.md, "count_<name> names used").
#: Box id prefixes of the schema (people, activities, objects, culture regions).
PREFIX = {"character": "p", "activity": "a", "object": "o", "culture": "c"}
SCHEMA_COUNTS = {"count_letter_scroll", "count_lacquer_box", "count_purse", "count_horse",
                 "count_halo", "count_jug", "count_bottle", "count_straw_hat",
                 "count_column", "count_hut", "count_fruit", "count_violin", "count_organ"}


def _controls() -> dict[str, dict[str, Any]]:
    """name -> {type, to_name, per_region, values} of every control tag."""
    root = etree.parse(str(CONFIG)).getroot()
    out: dict[str, dict[str, Any]] = {}
    for el in root.iter():
        if not isinstance(el.tag, str) or el.tag not in RESULT_TYPE:
            continue
        name = el.get("name")
        assert name not in out, f"control {name} declared twice"
        out[name] = {"type": RESULT_TYPE[el.tag], "to_name": el.get("toName"),
                     "per_region": el.get("perRegion") == "true",
                     "values": [c.get("value") for c in el if c.tag in ("Label", "Choice")]}
    return out


def _objects() -> set[str]:
    root = etree.parse(str(CONFIG)).getroot()
    return {el.get("name") for el in root.iter() if el.tag == "Image"}


def test_config_declares_every_item_of_the_real_export() -> None:
    controls = _controls()
    used: dict[str, set[tuple[str, str, bool]]] = defaultdict(set)
    values: dict[str, set[str]] = defaultdict(set)
    for task in json.loads((REAL / "annotations.json").read_text(encoding="utf-8")):
        for item in task["annotations"][0]["result"]:
            name, v = item["from_name"], item["value"]
            per_region = item["type"] != "rectanglelabels" and "x" in v
            used[name].add((item["to_name"], item["type"], per_region))
            values[name].update(v.get("rectanglelabels", []) + v.get("choices", []))
    for name, kinds in sorted(used.items()):
        assert name in controls, f"{name} is in the export but not in the config"
        c = controls[name]
        assert kinds == {(c["to_name"], c["type"], c["per_region"])}, name
        assert values[name] <= set(c["values"]), (name, values[name] - set(c["values"]))
    assert _objects() == {"image"} == {c["to_name"] for c in controls.values()}


def test_config_declares_only_what_the_importer_reads() -> None:
    controls = _controls()
    read = set(BOX_KINDS) | set(REGION_ATTRIBUTES) | set(IMAGE_LEVEL)
    for name, c in controls.items():
        assert name in read or name.startswith(COUNT_PREFIX), name
        if name.startswith(COUNT_PREFIX):
            assert c["type"] == "number"
            # every counted object can be boxed: its name is an object label
            assert name[len(COUNT_PREFIX):].replace("_", " ") in controls["object"]["values"]
        elif name in BOX_KINDS:
            assert c["type"] == "rectanglelabels" and not c["per_region"]
        elif name in REGION_ATTRIBUTES:
            assert c["per_region"] and c["type"] in ("choices", "textarea")
        else:
            assert not c["per_region"]
    assert read <= set(controls)  # and the importer reads nothing the config lacks
    assert set(controls) >= SCHEMA_COUNTS
    assert controls["character"]["values"] == list(PERSON_CATEGORIES)
    assert controls["emotion"]["values"] == list(EMOTIONS)


def test_generate_on_the_real_export(tmp_path: Path) -> None:
    out = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL / "images"), "--out", str(out), "--no-progress",
                 "--tasks", "object_classification", "emotion_detection"]) == 0
    _, questions = read_questions(out)
    turns = [t.task for q in questions for t in q.turns]
    # 23 person boxes in the export: one question each for both tasks
    assert turns.count("object_classification") == 23
    assert turns.count("emotion_detection") == 23


def _from_config() -> list[dict[str, Any]]:
    """One task built from the config: a box per RectangleLabels control (two people, for
    relations; the object boxes are one per ``count_<name>`` control, so every count is
    1 and matches), each per-region attribute on a box of its kind, every image-level
    control once."""
    controls = _controls()
    result: list[dict[str, Any]] = []
    boxes: dict[str, list[str]] = defaultdict(list)

    def box(kind: str, label: str) -> None:
        rid = f"{PREFIX[kind]}{len(boxes[kind]) + 1}"
        n = sum(len(v) for v in boxes.values())
        geometry = {"x": 2.0 * n, "y": 5.0, "width": 10.0, "height": 20.0, "rotation": 0}
        result.append({"id": rid, "from_name": kind, "to_name": "image",
                       "type": "rectanglelabels", "original_width": 120,
                       "original_height": 90, "value": {**geometry,
                                                        "rectanglelabels": [label]}})
        boxes[kind].append(rid)

    for kind in BOX_KINDS:
        if kind != "object":  # object boxes: one per count below
            box(kind, controls[kind]["values"][0])
    box("character", controls["character"]["values"][1])
    for name in controls:
        if name.startswith(COUNT_PREFIX):
            box("object", name[len(COUNT_PREFIX):].replace("_", " "))
    for name, c in controls.items():
        if c["type"] == "rectanglelabels":
            continue
        key = {"choices": "choices", "textarea": "text", "number": "number"}[c["type"]]
        if name in REGION_ATTRIBUTES:
            for rid in boxes[REGION_ATTRIBUTES[name]]:
                text = c["values"][0] if c["values"] else f"{name} of {rid}"
                result.append({"id": rid, "from_name": name, "to_name": "image",
                               "type": c["type"], "value": {"x": 0, "y": 0, "width": 1,
                                                            "height": 1, key: [text]}})
        elif name in IMAGE_LEVEL or name.startswith(COUNT_PREFIX):
            value: Any = {"scene": [c["values"][0] if c["values"] else ""],
                          "relative_position": ["A=p1;B=p2;lateral=left;depth=front;"
                                                "vertical=none"],
                          "remote_interaction": ["A=p2;B=p1;evidence=looks at her"]
                          }.get(name, 1)
            result.append({"id": f"img-{name}", "from_name": name, "to_name": "image",
                           "type": c["type"], "value": {key: value}})
    return [{"id": 1, "data": {"image": "images/synthetic.png"},
             "annotations": [{"id": 1, "result": result}]}]


def test_synthetic_export_from_the_config_generates(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    rng = np.random.default_rng(1)
    Image.fromarray(rng.integers(0, 256, (90, 120, 3), dtype=np.uint8)).save(
        tmp_path / "images" / "synthetic.png")
    export = tmp_path / "export.json"
    tasks = _from_config()
    export.write_text(json.dumps(tasks, indent=1), encoding="utf-8")
    report = validate_export(export, progress=False)
    assert report.findings == []
    imported = load_labelstudio(export)
    assert imported.issues == [] and imported.dropped == []
    ann = imported.annotations[0]
    n_counts = sum(1 for c in _controls() if c.startswith(COUNT_PREFIX))
    assert (len(ann.characters), len(ann.activities), len(ann.objects),
            len(ann.cultural_elements)) == (2, 1, n_counts, 1)
    out = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(export), "--images",
                 str(tmp_path / "images"), "--out", str(out), "--no-progress", "--tasks",
                 "object_classification", "emotion_detection", "relative_position",
                 "object_count"]) == 0
    _, questions = read_questions(out)
    turns = sorted({t.task for q in questions for t in q.turns})
    assert turns == ["emotion_detection", "object_classification", "object_count",
                     "relative_position"]


@pytest.mark.parametrize("name", ["emotion", "visual_clues", "activity_description"])
def test_every_required_attribute_has_a_per_region_control(name: str) -> None:
    assert _controls()[name]["per_region"]
