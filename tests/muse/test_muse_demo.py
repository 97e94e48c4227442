"""The bundled MUSE demo set (data/demo/muse, made by scripts/make_muse_demo.py):
regeneration, annotation consistency, and the generate -> run -> analyze chain on it."""

from __future__ import annotations

import csv
import importlib
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from PIL import Image

from heritage_eval.benchmarks.muse.questions import read_questions
from heritage_eval.cli.main import main

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo" / "muse"

#: Turns per task expected from the script's own annotation (counted by hand from
#: make_muse_demo.py): 11 people (2+2+2+2+3) -> one 4-turn dialogue each (tasks 1-4);
#: 2 activities per image -> 10 (tasks 5, 6); one culture region, one jigsaw, one
#: relative position, one scene per image -> 5; counted object names fruit, window,
#: violin, boat, kite, jug, stove, cradle, tree, flag -> 10; one remote interaction per
#: image, two turns each (entity, evidence) -> 10.
TURNS = {"object_classification": 11, "emotion_detection": 11,
         "visual_clue_identification": 11, "emotion_cause_inference": 11,
         "activity_localization": 10, "activity_description": 10,
         "cultural_identification": 5, "jigsaw_puzzle": 5, "object_count": 10,
         "relative_position": 5, "remote_interaction": 10, "scene_classification": 5}


@pytest.fixture(scope="module")
def script() -> ModuleType:
    scripts = str(REPO / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    return importlib.import_module("make_muse_demo")


def _manifest() -> dict[str, Any]:
    return json.loads((DEMO / "MANIFEST.json").read_text(encoding="utf-8"))


def test_regenerates_same_annotation_and_pixels(script: ModuleType, tmp_path: Path) -> None:
    script.generate(tmp_path, seed=0)
    files = sorted(_manifest()["files"])
    assert files == ["annotations.json", "images/beach.png", "images/fair.png",
                     "images/kitchen.png", "images/market.png", "images/music_room.png"]
    # the annotation is plain JSON from the script's own numbers: byte-identical anywhere
    assert (tmp_path / "annotations.json").read_bytes() == \
        (DEMO / "annotations.json").read_bytes()
    for rel in files[1:]:  # PNG bytes depend on zlib; the decoded pixels must not differ
        fresh = np.asarray(Image.open(tmp_path / rel).convert("RGB"))
        committed = np.asarray(Image.open(DEMO / rel).convert("RGB"))
        assert fresh.shape == (360, 480, 3) and np.array_equal(fresh, committed), rel


def test_regenerates_same_bytes_in_the_recorded_environment(script: ModuleType,
                                                            tmp_path: Path) -> None:
    import _render_common as rc

    recorded = _manifest()["environment"]
    now = rc.environment_fingerprint([])
    if now != recorded:
        pytest.skip(f"library versions differ from MANIFEST.json: now {now}, "
                    f"recorded {recorded}")
    script.generate(tmp_path, seed=0)
    for rel in _manifest()["files"]:
        assert (tmp_path / rel).read_bytes() == (DEMO / rel).read_bytes(), rel
    assert sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file()) < 1_000_000


def test_annotation_is_consistent() -> None:
    tasks = json.loads((DEMO / "annotations.json").read_text(encoding="utf-8"))
    assert len(tasks) == 5
    for task in tasks:
        items = task["annotations"][0]["result"]
        boxes = Counter(i["value"]["rectanglelabels"][0] for i in items
                        if i["from_name"] == "object")
        counts = {i["from_name"][6:]: i["value"]["number"] for i in items
                  if i["from_name"].startswith("count_")}
        assert counts == dict(boxes), task["data"]["image"]  # one box per counted instance
        people = {i["id"] for i in items if i["from_name"] == "character"}
        for field in ("emotion", "visual_clues", "emotion_cause"):
            assert {i["id"] for i in items if i["from_name"] == field} == people
        assert sum(i["from_name"] == "negative_description" for i in items) == 1
        for i in items:
            v = i["value"]
            if "x" in v:  # inside the picture, percent of its size
                assert v["x"] >= 0 and v["x"] + v["width"] <= 100.0001
                assert v["y"] >= 0 and v["y"] + v["height"] <= 100.0001


@pytest.mark.slow
def test_generate_run_analyze_chain(tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    assert main(["muse", "generate", "--annotations", str(DEMO / "annotations.json"),
                 "--images", str(DEMO), "--out", str(questions), "--no-progress"]) == 0
    header, qs = read_questions(questions)
    assert header.source["turns_per_task"] == TURNS
    assert header.source["errors"] == [] and header.source["skipped"] == {}
    assert len(qs) == 66  # 11 dialogues + the 55 single questions of tasks 5-12

    run = tmp_path / "random"
    assert main(["run", "muse", "--questions", str(questions), "--model", "baseline:random",
                 "--out", str(run)]) == 0
    rows = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
    assert Counter(r["groups"]["task"] for r in rows) == TURNS

    analysis = tmp_path / "analysis"
    assert main(["muse", "analyze", str(run), "--out", str(analysis)]) == 0
    with (analysis / "table2_tasks.csv").open(encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert [r["model"] for r in table] == ["baseline:random"]
    assert (analysis / "radar_top_models.png").is_file()
