"""``heritage-eval stats muse`` on the real sample, a question file and bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.benchmarks.muse.annotation import EMOTIONS
from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
    write_questions,
)
from heritage_eval.cli.main import main
from heritage_eval.curate.stats.muse import image_file
from tests.conftest import realdata

REAL = realdata("muse")


def stats(data: str | os.PathLike[str], out: Path, *extra: str) -> int:
    return main(["stats", "muse", "--data", str(data), "--out", str(out), *extra])


def load(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    return doc


def test_real_sample_people_and_regions(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert stats(REAL / "annotations.json", out, "--no-figures") == 0
    doc = load(out)
    # muse/SCHEMA.md per-image summary: 2, 2, 2, 4, 7, 4, 2 people
    assert doc["counts"]["images"] == 7 and doc["counts"]["people"] == 23
    assert doc["people_per_image"] == {"2": 4, "4": 2, "7": 1}
    # same table: Woman 1+1+1+1+4, Man 1+2+2, Girl 1+1, Boy 1+5, Baby 1+1
    assert doc["person_categories"] == {"Woman": 8, "Man": 5, "Girl": 2, "Boy": 6, "Baby": 2}
    assert sum(doc["emotions"].values()) == 23  # every person has one (SCHEMA.md)
    assert set(doc["emotions"]) == set(EMOTIONS)
    # SCHEMA.md: objects 2-4 per image, activities 1-3, culture regions 1-2
    for kind, (lo, hi) in {"object": (2, 4), "activity": (1, 3), "culture": (1, 2)}.items():
        per = {int(k) for k in doc["boxes_per_image"][kind]}
        assert lo <= min(per) and max(per) <= hi
    assert doc["cultures"]["Japanese (Edo period)"] == 1  # SCHEMA.md example label
    assert doc["scenes"]["church organ loft"] == 1
    for frac in doc["box_area_fraction"].values():
        assert 0 < frac["min"] <= frac["median"] <= frac["max"] <= 1
    assert doc["questions"] is None
    assert doc["source"]["images"] == str(Path(REAL).resolve())


def test_image_lookup_matches_muse_generate() -> None:
    from heritage_eval.benchmarks.muse.generate import resolve_image

    export = json.loads((REAL / "annotations.json").read_text(encoding="utf-8"))
    root = Path(REAL)
    for task in export:
        image = task["data"]["image"]
        assert image_file(root, image) == resolve_image(root, image) is not None
    assert image_file(root, "../muse/images/x.jpg") is None


def _turn(task: str, fmt: str, answer: Any) -> QuestionTurn:
    options = [OptionRecord(label=x, text=x, distractor_type="correct" if x == "A" else "oa")
               for x in "ABCD"] if fmt == "choice" else []
    return QuestionTurn(task=task, prompt="?", answer_format=fmt,  # type: ignore[arg-type]
                        options=options, answer=answer)


def test_question_file_counts_per_task(tmp_path: Path) -> None:
    header = QuestionFileHeader(
        generator_version="test", seed=0, tasks=["object_count"],
        source={"scene_categories": {"church organ loft": {"category": "religious sites",
                                                           "how": "curator"}},
                "culture_clusters": {"cluster_of": {"Japanese (Edo period)": 3}}})
    dialogue = [_turn("object_classification", "choice", "A"),
                _turn("emotion_detection", "choice", "A"),
                _turn("visual_clue_identification", "open", "a smile"),
                _turn("emotion_cause_inference", "open", "music")]
    questions = [
        Question(id="a:object_count:0", image_id="a", turns=[_turn("object_count", "number", 2)]),
        Question(id="a:affective_dialogue:0", image_id="a", turns=dialogue),
        Question(id="b:remote_interaction:0", image_id="b",
                 turns=[_turn("remote_interaction", "choice", "A")] * 2)]
    qfile = tmp_path / "q.jsonl"
    write_questions(qfile, header, questions)
    with qfile.open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "question", "id": \n')  # line 5: malformed
    out = tmp_path / "out"
    assert stats(REAL, out, "--questions", str(qfile), "--no-figures") == 1
    doc = load(out)
    per = doc["questions"]["per_task"]
    assert doc["questions"]["questions"] == 3 and doc["questions"]["images"] == 2
    assert per["object_count"] == {"number": 9, "questions": 1, "turns": 1}
    assert per["remote_interaction"] == {"number": 11, "questions": 1, "turns": 2}
    assert per["emotion_cause_inference"]["questions"] == 1
    assert list(per)[:4] == ["object_classification", "emotion_detection",
                             "visual_clue_identification", "emotion_cause_inference"]
    assert [p["where"] for p in doc["problems"]] == [f"{qfile}:5"]
    # theme from the header for one label; the other six match no shipped table label
    assert doc["scene_themes"] == {"(unassigned)": 6, "religious sites": 1}
    assert doc["culture_clusters"] == {"cluster 3": 1}
    md = (out / "questions_per_task.md").read_text(encoding="utf-8")
    assert "| Remote Interaction" in md and "| All" in md


def test_figures_are_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert stats(REAL, out) == 0
    for name in ("fig_scene_themes.png", "fig_emotions_cultures.png", "fig_people.png",
                 "fig_box_sizes.png"):
        with Image.open(out / name) as im:
            assert im.format == "PNG" and im.size[0] > 400
    assert set(load(out)["files"]) == {p.name for p in out.iterdir()}


def test_skipped_task_and_missing_image_are_listed(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    Image.new("RGB", (40, 30), "white").save(tmp_path / "images" / "a.jpg")
    box = {"id": "p1", "from_name": "character", "to_name": "image",
           "type": "rectanglelabels",
           "value": {"x": 10, "y": 10, "width": 50, "height": 40, "rotation": 0,
                     "rectanglelabels": ["Woman"]}}
    export = [{"id": 1, "data": {"image": "images/a.jpg"}, "annotations": [{"result": [box]}]},
              {"id": 2, "data": {}, "annotations": [{"result": []}]},
              {"id": 3, "data": {"image": "images/gone.jpg"},
               "annotations": [{"result": []}]}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    out = tmp_path / "out"
    assert stats(path, out, "--no-figures") == 1
    doc = load(out)
    assert doc["counts"]["images"] == 2 and doc["counts"]["people"] == 1
    assert doc["box_area_fraction"]["character"]["max"] == 0.2  # 0.5 x 0.4
    assert doc["width_px"]["max"] == 40  # read from the file header
    where = [p["where"] for p in doc["problems"]]
    assert "export.json: task 2" in where
    assert str(tmp_path / "images" / "gone.jpg") in where


def test_unreadable_export_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "export.json"
    bad.write_text("{not json", encoding="utf-8")
    assert stats(bad, tmp_path / "out") == 2
    assert stats(tmp_path / "none.json", tmp_path / "out") == 2
    assert not (tmp_path / "out").exists()


DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "muse"


@pytest.mark.skipif(not (DEMO / "annotations.json").is_file(),
                    reason="bundled MUSE demo (data/demo/muse) not in this checkout")
def test_bundled_demo(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert stats(DEMO / "annotations.json", out, "--no-figures") == 0
    doc = load(out)
    # data/demo/muse/README.md table: 2 people in four scenes, 3 at the fair
    assert doc["people_per_image"] == {"2": 4, "3": 1}
    # same table: Joy 1+1+1+2, Neutral 1+1+1, Surprise 1+1, Sadness 1
    assert {k: v for k, v in doc["emotions"].items() if v} == {
        "Sadness": 1, "Surprise": 2, "Joy": 5, "Neutral": 3}
    # every demo scene label is an example label of the shipped scene table
    assert "(unassigned)" not in doc["scene_themes"]
    assert sum(doc["scene_themes"].values()) == 5
