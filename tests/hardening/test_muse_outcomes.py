"""Issue 10, items 8, 9 and 20 on MUSE: content-filter refusals and truncated answers
(per task), the bundled OCR engine refused, and a Label Studio export given as
``--questions``.

A three-question file written here (two scene-classification questions and one count)
and a local OpenAI-compatible server that answers by the prompt's first word.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
    write_questions,
)
from heritage_eval.cli.main import main
from tests.fake_server import Scripted, chat_reply, fake_openai_server

FILTERED = {"id": "x", "object": "chat.completion", "choices": [],
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {
                "sexual": {"filtered": True, "severity": "medium"}}}]}


def _questions(root: Path) -> Path:
    Image.new("RGB", (64, 48), (200, 30, 30)).save(root / "art1.png")
    options = [OptionRecord(label="A", text="harbour", distractor_type="correct"),
               OptionRecord(label="B", text="market", distractor_type="distractor")]
    qs = [Question(id=f"art1:scene_classification:{i}", image_id="art1", turns=[
        QuestionTurn(task="scene_classification", images=["art1.png"], tag="option",
                     prompt=f"SCENE{i} which scene?", answer_format="choice",
                     options=options, answer="A")]) for i in (1, 2)]
    qs.append(Question(id="art1:object_count:0", image_id="art1", turns=[
        QuestionTurn(task="object_count", images=["art1.png"], tag="count",
                     prompt="COUNT people", answer_format="number", answer=3)]))
    path = root / "q.jsonl"
    write_questions(path, QuestionFileHeader(generator_version="test", seed=0,
                                             tasks=["object_count", "scene_classification"]),
                    qs)
    return path


def _reply(body: dict[str, Any]) -> Scripted:
    content = body["messages"][-1]["content"]
    text = " ".join(p.get("text", "") for p in content if isinstance(p, dict)) \
        if isinstance(content, list) else str(content)
    if "SCENE1" in text:
        return Scripted(body=FILTERED)
    if "SCENE2" in text:  # cut at max tokens before any option letter
        return chat_reply("Looking at the boats and the water, the scene is",
                          finish_reason="length")
    return chat_reply("[count] 3")


@pytest.mark.parametrize("policy", ["error", "wrong"])
def test_refusal_and_truncation_per_task(tmp_path: Path, policy: str) -> None:
    # kinds: a content filter shown as a generic malformed-body error (or scored); a
    # multiple-choice answer cut before any letter not flagged; no per-task rate
    q = _questions(tmp_path)
    with fake_openai_server() as srv:
        srv.responder = _reply
        extra = ["--refusals", policy]  # "error" = the old name of --model-failures exclude
        assert main(["run", "muse", "--questions", str(q), "--model", "openai:vlm",
                     "--base-url", srv.base_url, "--retries", "0",
                     "--out", str(tmp_path / "run"), *extra]) == 0
    lines = (tmp_path / "run" / "samples.jsonl").read_text("utf-8").splitlines()
    recs = {r["id"]: r for r in map(json.loads, lines)}
    refused = recs["art1:scene_classification:1#0"]
    cut = recs["art1:scene_classification:2#0"]
    assert refused["turns"][0]["response"]["failure"] == "content_filter"
    assert refused["details"]["refused"] is True
    if policy == "error":
        assert (refused["state"], refused["error"]) == ("error", "refused: content filter")
        assert refused["scores"]["score"] is None
    else:
        assert (refused["state"], refused["scores"]["score"]) == ("unparsed", 0.0)
    # cut before any letter: unparsed (wrong, in the invalid rate) and truncated
    assert (cut["state"], cut["scores"]["score"]) == ("unparsed", 0.0)
    assert cut["details"]["truncated"] is True
    assert cut["turns"][0]["response"]["finish_reason"] == "length"
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    trunc = summary["truncation"]["openai:vlm"]
    # scene_classification: 1 of its 1 (error policy: the refusal has no text) or 2
    # ('wrong': the refusal is an empty answer) responses truncated; object_count 0 of 1
    n_scene = 1 if policy == "error" else 2
    assert trunc["by"] == "task"
    assert trunc["groups"]["scene_classification"] == {
        "n_responses": n_scene, "n_truncated": 1, "rate": 1 / n_scene}
    assert trunc["groups"]["object_count"] == {"n_responses": 1, "n_truncated": 0,
                                               "rate": 0.0}
    assert summary["models"]["openai:vlm"]["response_outcomes"]["failure:content_filter"] == 1
    md = (tmp_path / "run" / "summary.md").read_text("utf-8")
    assert "Refused: 1 (content filter 1, model refusal 0)" in md
    rate = "100.00" if policy == "error" else "50.00"
    assert f"| scene_classification | {n_scene} | 1 | {rate} |" in md


def test_ocr_engine_is_refused_on_muse(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    # kind: the bundled OCR engine ran MUSE to 100 % invalid instead of being refused
    q = _questions(tmp_path)
    assert main(["run", "muse", "--questions", str(q), "--model", "rapidocr",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "--model 'rapidocr' is an OCR engine" in err
    assert "'openai:NAME'" in err and "'baseline:random'" in err
    assert not (tmp_path / "run").exists()


def test_labelstudio_export_as_questions_suggests_generate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # kind: a Label Studio export passed to --questions gave only "no valid header"
    export = tmp_path / "export.json"
    export.write_text(json.dumps([{"id": 1, "data": {"image": "/data/upload/a.jpg"},
                                   "annotations": [{"result": []}]}], indent=2),
                      encoding="utf-8")
    assert main(["run", "muse", "--questions", str(export), "--model", "baseline:random",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"{export} looks like a Label Studio export" in err
    assert f"heritage-eval muse generate --annotations {export}" in err
