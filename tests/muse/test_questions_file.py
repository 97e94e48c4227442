"""Question file round trip and read errors (file:line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.benchmarks.muse.questions import (
    SCHEMA_VERSION,
    OptionRecord,
    Question,
    QuestionFileError,
    QuestionFileHeader,
    QuestionTurn,
    read_questions,
    write_questions,
)


def _question() -> Question:
    turn = QuestionTurn(task="scene_classification", prompt="Which scene?\n[option] <A-B>",
                        images=["img/a.jpg"], answer_format="choice", tag="option",
                        options=[OptionRecord(label="A", text="church interior",
                                              distractor_type="other_scene_category"),
                                 OptionRecord(label="B", text="天井", distractor_type="correct")],
                        answer="B")
    return Question(id="a:scene_classification:0", image_id="a", turns=[turn])


def test_round_trip_is_exact(tmp_path: Path) -> None:
    header = QuestionFileHeader(generator_version="0.1.0", seed=5, tasks=["scene_classification"])
    path = tmp_path / "q.jsonl"
    write_questions(path, header, [_question()])
    text = path.read_text(encoding="utf-8")
    assert "天井" in text  # UTF-8, not escaped
    assert text.count("\n") == 2
    got_header, got = read_questions(path)
    assert got_header == header and got_header.schema_version == SCHEMA_VERSION
    assert got == [_question()]
    write_questions(path, header, [_question()])
    assert path.read_text(encoding="utf-8") == text  # sorted keys: stable bytes


def test_read_errors_name_file_and_line(tmp_path: Path) -> None:
    header = QuestionFileHeader(generator_version="0.1.0", seed=0, tasks=[])
    path = tmp_path / "q.jsonl"
    write_questions(path, header, [_question()])
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(lines[0] + "\n" + lines[1] + "\n{oops\n", encoding="utf-8")
    with pytest.raises(QuestionFileError, match=r"q\.jsonl:3: invalid JSON"):
        read_questions(path)
    path.write_text(lines[1] + "\n", encoding="utf-8")
    with pytest.raises(QuestionFileError, match=r"q\.jsonl:1: first record must be a header"):
        read_questions(path)
    path.write_text(lines[0].replace(SCHEMA_VERSION, "muse-questions/0") + "\n",
                    encoding="utf-8")
    with pytest.raises(QuestionFileError, match="unsupported schema_version"):
        read_questions(path)
    path.write_text(lines[0] + '\n{"kind": "question", "id": "x"}\n', encoding="utf-8")
    with pytest.raises(QuestionFileError, match=r"(?s)q\.jsonl:2: .*image_id"):
        read_questions(path)


def test_schema_1_files_still_read(tmp_path: Path) -> None:
    header = QuestionFileHeader(generator_version="0.1.0", seed=0, tasks=[],
                                schema_version="muse-questions/1")
    path = tmp_path / "q.jsonl"
    write_questions(path, header, [_question()])
    got, questions = read_questions(path)
    assert got.schema_version == "muse-questions/1" and questions == [_question()]
    assert SCHEMA_VERSION == "muse-questions/2"


def test_resolve_image_path(tmp_path: Path) -> None:
    from heritage_eval.benchmarks.muse.questions import resolve_image_path

    qfile = tmp_path / "bench" / "q.jsonl"
    images = tmp_path / "art"
    (images / "sub").mkdir(parents=True)
    (images / "sub" / "a.jpg").write_bytes(b"x")
    qfile.parent.mkdir()
    header = QuestionFileHeader(generator_version="0", seed=0, tasks=[], source={
        "images_dir": "art", "images_dir_relative": "../art",
        "images_dir_absolute": str(images)})
    # recorded folder, relative to the question file
    assert resolve_image_path(qfile, header, "@images/sub/a.jpg") == \
        tmp_path / "bench" / ".." / "art" / "sub" / "a.jpg"
    # an explicit folder (run muse --images DIR) wins
    assert resolve_image_path(qfile, header, "@images/sub/a.jpg", Path("/other")) == \
        Path("/other/sub/a.jpg")
    # the question file moved away from the images: the absolute folder is used
    moved = tmp_path / "x" / "y" / "q.jsonl"
    assert resolve_image_path(moved, header, "@images/sub/a.jpg") == images / "sub" / "a.jpg"
    # neither exists: the relative candidate, so an error names where it was expected
    gone = header.model_copy(update={"source": {"images_dir_relative": "../art",
                                                "images_dir_absolute": "/nowhere"}})
    assert resolve_image_path(moved, gone, "@images/b.jpg") == \
        tmp_path / "x" / "y" / ".." / "art" / "b.jpg"
    # generated assets and schema-1 paths: relative to the question file's folder
    assert resolve_image_path(qfile, header, "q_assets/p/jigsaw_0_A.png") == \
        tmp_path / "bench" / "q_assets" / "p" / "jigsaw_0_A.png"
