"""``heritage-eval muse generate`` end to end: bad input is reported and skipped, knobs
are recorded, task selection works."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from heritage_eval.benchmarks.muse.questions import read_questions
from heritage_eval.cli.main import main
from tests.conftest import realdata

REAL = realdata("muse")


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
    # the bad emotion value drops only that region (issue 10, item 15: one bad region must
    # not drop the whole image); only the missing image is an error
    assert len(errors) == 1
    assert errors[0].startswith("export.json: task 6, field data.image: image file not found")
    assert {q.image_id for q in questions} == {
        "utamaro_hour_of_the_dragon", "giotto_st_francis_gives_his_mantle_1299",
        "waldmuller_mothers_joy_1860", "anker_leapfrog_1866", "vibert_the_duet_1897",
        "durer_peasant_couple_dancing_1514"}
    # object counts: the 5 images above 2 each, Dürer 1 (SCHEMA.md count_* names)
    assert header.source["turns_per_task"] == {"object_count": 11, "scene_classification": 6}
    printed = capsys.readouterr()
    assert ("warning: export.json: task 2, region p2, field emotion" in printed.err
            and "dropped, the rest of the image is kept" in printed.err)
    assert "object_count" in printed.out and "11" in printed.out


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


def _gen(tmp_path: Path, *extra: str, images: Path | None = None,
         annotations: Path | None = None) -> int:
    return main(["muse", "generate", "--annotations", str(annotations or REAL / "annotations.json"),
                 "--images", str(images or REAL / "images"), "--out", str(tmp_path / "q.jsonl"),
                 "--no-progress", *extra])


def test_nothing_generated_is_exit_1_and_no_file(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # every image missing: 7 "image file not found" problems, no question -> exit 1 (was 0
    # with a 0-question file)
    assert _gen(tmp_path, "--tasks", "object_count", images=tmp_path / "nonexist") == 1
    err = capsys.readouterr().err
    assert "no question could be generated (0 usable of 7 annotated images" in err
    assert "nothing written" in err
    assert not (tmp_path / "q.jsonl").exists() and not (tmp_path / "q_assets").exists()
    assert not list(tmp_path.glob(".q_assets*"))  # temporary assets folder cleaned up
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    assert _gen(tmp_path, annotations=empty) == 1
    assert not (tmp_path / "q.jsonl").exists()


def test_partial_skip_warns_and_strict_fails(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    export, images = _export_with_problems(tmp_path)  # 1 bad region, 1 missing image
    assert _gen(tmp_path, "--tasks", "object_count", annotations=export, images=images) == 0
    err = capsys.readouterr().err
    assert "warning: 1 problem(s); 6 of 7 annotated images used" in err  # region dropped
    (tmp_path / "q.jsonl").unlink()
    assert _gen(tmp_path, "--tasks", "object_count", "--strict", annotations=export,
                images=images) == 1
    err = capsys.readouterr().err
    assert "--strict: 2 problem(s)" in err and "task 2, region p2, field emotion" in err
    assert not (tmp_path / "q.jsonl").exists()
    # the clean sample passes --strict
    assert _gen(tmp_path, "--tasks", "object_count", "--strict") == 0


def test_copy_images_makes_a_portable_package(tmp_path: Path) -> None:
    from heritage_eval.benchmarks.muse.questions import resolve_image_path

    src = tmp_path / "made"
    src.mkdir()
    assert _gen(src, "--tasks", "object_count", "jigsaw_puzzle", "--copy-images") == 0
    # move the question file + assets somewhere else: every image still resolves
    moved = tmp_path / "elsewhere" / "deeper"
    moved.mkdir(parents=True)
    shutil.move(str(src / "q.jsonl"), moved / "q.jsonl")
    shutil.move(str(src / "q_assets"), moved / "q_assets")
    header, questions = read_questions(moved / "q.jsonl")
    assert header.source["images_dir_relative"] == "q_assets/images"
    assert header.source["images_copied"] is True
    refs = {r for q in questions for t in q.turns for r in t.images}
    assert "@images/utamaro_hour_of_the_dragon.jpg" in refs
    for ref in refs:
        path = resolve_image_path(moved / "q.jsonl", header, ref)
        assert path.is_file(), ref
        assert moved in path.parents
    copied = moved / "q_assets" / "images" / "vibert_the_duet_1897.jpg"
    assert copied.read_bytes() == (REAL / "images" / "vibert_the_duet_1897.jpg").read_bytes()


def test_list_knobs_and_draw_boxes_subject_label(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["muse", "generate", "--list-knobs"]) == 0
    out = capsys.readouterr().out
    assert "jigsaw_puzzle.grids = [[3, 4], [4, 4], [3, 6], [4, 5], [3, 7]]" in out
    assert main(["muse", "generate", "--out", str(tmp_path / "q.jsonl")]) == 2
    assert "required: --annotations, --images" in capsys.readouterr().err
    assert _gen(tmp_path, "--jigsaw-grid", "1x1") == 2
    assert "jigsaw grid 1x1: rows and columns must be 2-50" in capsys.readouterr().err
    assert _gen(tmp_path, "--tasks", "remote_interaction", "--draw-boxes") == 0
    _, questions = read_questions(tmp_path / "q.jsonl")
    entity = questions[0].turns[0]
    # the subject's box is labelled S in the drawn copy, not A like option A
    assert "The given entity's box is labelled S." in entity.prompt
    assert len(entity.images) == 2 and (tmp_path / entity.images[1]).is_file()


def test_existing_question_file_needs_overwrite(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "q.jsonl"
    assert _gen(tmp_path, "--tasks", "object_count") == 0
    frozen = out.read_bytes()
    capsys.readouterr()
    # another seed into the same file: refused, naming --overwrite; nothing changed
    assert _gen(tmp_path, "--tasks", "object_count", "--seed", "7") == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and str(out) in err and "nothing was changed" in err
    assert out.read_bytes() == frozen
    assert _gen(tmp_path, "--tasks", "object_count", "--seed", "7", "--overwrite") == 0
    assert read_questions(out)[0].seed == 7


def test_usage_or_failed_generation_leaves_no_folder(tmp_path: Path) -> None:
    nested = tmp_path / "new" / "deeper" / "q.jsonl"
    base = ["muse", "generate", "--annotations", str(REAL / "annotations.json"),
            "--out", str(nested), "--no-progress"]
    assert main([*base, "--images", str(REAL / "images"), "--set", "nope.knob=1"]) == 2
    assert main([*base, "--images", str(tmp_path / "nonexist")]) == 1  # nothing generated
    assert not (tmp_path / "new").exists()


def test_a_question_file_moved_without_its_assets_names_them(tmp_path: Path) -> None:
    # the jigsaw pieces live in q_assets/ beside q.jsonl: moved alone, a jigsaw turn's
    # missing image says to keep q_assets/ beside the file
    from heritage_eval.benchmarks.muse.run import load_question_set, missing_image

    src = tmp_path / "made"
    src.mkdir()
    assert _gen(src, "--tasks", "jigsaw_puzzle") == 0
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(str(src / "q.jsonl"), moved / "q.jsonl")
    qs = load_question_set(moved / "q.jsonl")
    reason = missing_image(qs.questions[0], qs)
    assert reason is not None and "not found" in reason
    assert reason.endswith("generated images travel with the question file: keep q_assets/ "
                           "beside it")
