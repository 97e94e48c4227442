"""MUSE offline baselines: the jigsaw-edges solver and the seeded random chance row."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from heritage_eval.benchmarks.muse.baselines import (
    JigsawEdgesBaseline,
    border_predictions,
    find_hole,
    fits,
    piece_costs,
    trim,
)
from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
    write_questions,
)
from heritage_eval.benchmarks.muse.run import (
    conversation_for,
    load_question_set,
    run_questions,
)
from heritage_eval.cli.main import main
from heritage_eval.core.types import GenerationSettings, Outcome, stable_hash
from heritage_eval.metrics.embeddings import Embedder, FloatArray
from heritage_eval.models.base import BackendOptions, create_backend

GRAY = (128, 128, 128)


def _texture(h: int = 120, w: int = 160) -> np.ndarray:
    """A smooth, non-repeating RGB texture (sums of low-frequency sines), uint8."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    r = 120 + 60 * np.sin(x / 17.0) + 40 * np.cos(y / 11.0)
    g = 100 + 50 * np.sin((x + y) / 23.0) + 30 * np.sin(y / 7.0)
    b = 90 + 70 * np.cos(x / 29.0 - y / 13.0)
    return np.clip(np.stack([r, g, b], axis=2), 0, 255).astype(np.uint8)


def test_linear_image_predicts_hole_exactly() -> None:
    # I = 2x + 3y is linear, so the extrapolation 2*I(q) - I(q2) equals I(p) exactly:
    # the true piece has cost 0 and a piece shifted one pixel to the right costs 2
    # (every value differs by the x slope 2).
    y, x = np.mgrid[0:30, 0:30].astype(np.float32)
    img = np.repeat((2 * x + 3 * y)[..., None], 3, axis=2)
    hole = np.zeros((30, 30), dtype=bool)
    hole[10:20, 10:20] = True
    true_piece = img[10:20, 10:20].copy()
    shifted = img[10:20, 11:21].copy()
    context = img.copy()
    context[hole] = 128
    idx, pred = border_predictions(context, hole)
    assert len(idx[0]) == 36  # the 10x10 square's border: 4*10 - 4 corners
    np.testing.assert_allclose(pred, img[idx], atol=1e-4)  # exact on a linear image
    costs = piece_costs(context, [true_piece, shifted], hole)
    assert costs[0] == pytest.approx(0.0, abs=1e-4)
    assert costs[1] == pytest.approx(2.0, abs=1e-4)


def test_find_hole_detaches_same_coloured_artwork() -> None:
    img = np.full((20, 20, 3), 10, dtype=np.float32)
    img[2:8, 2:8] = GRAY        # 36 px: the hole
    img[8:14, 4] = GRAY         # a 1-px grey stroke of the artwork touching the hole
    img[15:17, 15:17] = GRAY    # a separate 4-px grey patch elsewhere
    mask = find_hole(img, GRAY)
    # the 3x3 opening removes the stroke; the largest component is the 6x6 hole
    assert mask.sum() == 36 and mask[2:8, 2:8].all() and not mask[10, 4]


def test_trim_and_fit_use_the_piece_silhouette() -> None:
    # a 10x10 diamond-ish piece drawn on a white 14x12 canvas: trim must cut the canvas
    # back to the 10x10 silhouette box, which then fits a 10x10 hole of the same shape
    hole = np.zeros((30, 30), dtype=bool)
    yy, xx = np.mgrid[0:10, 0:10]
    diamond = (np.abs(yy - 4.5) + np.abs(xx - 4.5)) <= 5
    hole[5:15, 8:18] = diamond
    canvas = np.full((14, 12, 3), 255, dtype=np.float32)
    canvas[2:12, 1:11][diamond] = (10, 20, 30)
    piece, sil = trim(canvas, (255, 255, 255))
    assert piece.shape[:2] == (10, 10) and np.array_equal(sil, diamond)
    assert fits(sil, hole)
    # a piece twice as wide (a merged neighbour) does not fit, nor does a full square
    # (IoU of the diamond with its box: diamond.sum() / 100 < 0.9)
    assert not fits(np.ones((10, 20), dtype=bool), hole)
    assert diamond.sum() / 100 < 0.9 and not fits(np.ones((10, 10), dtype=bool), hole)


def _jigsaw_question(root: Path) -> Question:
    art = _texture()
    hole = (slice(40, 80), slice(60, 100))
    context = art.copy()
    context[hole] = GRAY
    Image.fromarray(context).save(root / "context.png")
    pieces = {
        "zoomed_region": cv2.resize(art[30:90, 50:110], (40, 40), interpolation=cv2.INTER_AREA),
        "correct": art[hole],
        "same_image_piece": art[0:40, 0:40],
        "merged_neighbor": art[40:80, 60:140],
    }
    options = []
    for i, (kind, arr) in enumerate(pieces.items()):
        Image.fromarray(np.ascontiguousarray(arr)).save(root / f"piece{i}.png")
        options.append(OptionRecord(label="ABCD"[i], image=f"piece{i}.png",
                                    distractor_type=kind))
    turn = QuestionTurn(task="jigsaw_puzzle", prompt="Which piece fills the gray gap?",
                        images=["context.png", *[o.image or "" for o in options]],
                        answer_format="choice", tag="option", options=options, answer="B",
                        params={"hole_color": list(GRAY)})
    return Question(id="art:jigsaw_puzzle:0", image_id="art", turns=[turn])


def _write(root: Path, questions: list[Question]) -> Path:
    path = root / "q.jsonl"
    write_questions(path, QuestionFileHeader(generator_version="t", seed=0,
                                             tasks=["jigsaw_puzzle"]), questions)
    return path


def test_jigsaw_edges_picks_true_piece_and_skips_other_tasks(tmp_path: Path) -> None:
    jig = _jigsaw_question(tmp_path)
    scene = Question(id="art:scene_classification:0", image_id="art", turns=[QuestionTurn(
        task="scene_classification", prompt="Scene?", images=["context.png"], tag="option",
        answer_format="choice", answer="A",
        options=[OptionRecord(label="A", text="harbour", distractor_type="correct"),
                 OptionRecord(label="B", text="market", distractor_type="distractor")])])
    qs = load_question_set(_write(tmp_path, [jig, scene]))
    backend = create_backend("baseline:jigsaw-edges")
    assert isinstance(backend, JigsawEdgesBaseline)
    out = run_questions(qs, qs.questions, backend, GenerationSettings(), None, None)
    # it declares the one task it attempts: the scene question is not sent and has no
    # row (it used to get an empty, unparsed answer: a 0 % / 100 %-invalid row)
    assert [r.task for r in out.rows] == ["jigsaw_puzzle"]
    assert out.skipped_tasks == {"scene_classification": 1}
    jr = out.rows[0]
    assert (jr.state, jr.parsed, jr.score, jr.chosen_distractor) == (
        Outcome.SCORED, "B", 1.0, "correct")
    # called directly on another task it still never guesses: an empty answer
    payload = {"sample_id": scene.id, "turn": 0, "question": scene.model_dump(mode="json"),
               "base_dir": str(tmp_path)}
    assert asyncio.run(backend.generate([], GenerationSettings(), payload)).text == ""


def test_run_muse_skips_tasks_a_baseline_does_not_attempt(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jig = _jigsaw_question(tmp_path)
    scene = Question(id="art:scene_classification:0", image_id="art", turns=[QuestionTurn(
        task="scene_classification", prompt="Scene?", images=["context.png"], tag="option",
        answer_format="choice", answer="A",
        options=[OptionRecord(label="A", text="harbour", distractor_type="correct"),
                 OptionRecord(label="B", text="market", distractor_type="distractor")])])
    qfile = _write(tmp_path, [jig, scene])
    out = tmp_path / "run"
    assert main(["run", "muse", "--questions", str(qfile), "--model",
                 "baseline:jigsaw-edges", "--out", str(out), "--no-cache"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["results"][0]["per_task"]) == ["jigsaw_puzzle"]
    assert summary["provenance"]["skipped_tasks"] == {"scene_classification": 1}
    assert "attempts only jigsaw_puzzle" in capsys.readouterr().err


def test_jigsaw_edges_costs_rank_true_piece_first(tmp_path: Path) -> None:
    jig = _jigsaw_question(tmp_path)
    backend = JigsawEdgesBaseline(BackendOptions())
    payload = {"sample_id": jig.id, "turn": 0, "question": jig.model_dump(mode="json"),
               "base_dir": str(tmp_path)}
    resp = asyncio.run(backend.generate([], GenerationSettings(), payload))
    assert resp.text == "[option] B"
    costs = resp.meta["costs"]
    assert min(costs, key=costs.get) == "B"
    assert costs["B"] < 5.0  # smooth texture: extrapolation error of a few grey levels


def _draw(qid: str, options: list[str], turn: int = 0) -> str:
    # reference: models/baselines.py draws rng.choice(options) with the generator seeded by
    # stable_hash([seed 0, sample id, turn])
    return random.Random(int(stable_hash([0, qid, turn]), 16)).choice(options)


def test_random_baseline_reads_muse_payload(tmp_path: Path) -> None:
    jig = _jigsaw_question(tmp_path)
    qs = load_question_set(_write(tmp_path, [jig]))
    rows = run_questions(qs, qs.questions, create_backend("baseline:random"),
                         GenerationSettings(), None, None).rows
    expect = _draw(jig.id, list("ABCD"))
    assert rows[0].parsed == expect and rows[0].state == Outcome.SCORED


def _open_turn(task: str, ref: str) -> QuestionTurn:
    return QuestionTurn(task=task, prompt="Why?", answer_format="open", tag="emotion cause",
                        answer=ref)


def test_random_baseline_is_a_real_chance_row_on_counts_positions_open(
        tmp_path: Path) -> None:
    Image.new("RGB", (8, 8)).save(tmp_path / "a.png")
    count = Question(id="a:object_count:0", image_id="a", turns=[QuestionTurn(
        task="object_count", prompt="How many?", images=["a.png"], tag="count",
        answer_format="number", answer=13)])
    pos = Question(id="a:relative_position:0", image_id="a", turns=[QuestionTurn(
        task="relative_position", prompt="Where?", images=["a.png"], answer_format="position",
        answer={"lateral": "left", "depth": "none", "vertical": "above"})])
    refs = ["A letter arrived.", "Her son is lost.", "The harvest failed."]
    opens = [Question(id=f"a:emotion_cause_inference:{i}", image_id="a",
                      turns=[_open_turn("emotion_cause_inference", r)])
             for i, r in enumerate(refs)]
    qs = load_question_set(_write(tmp_path, [count, pos, *opens]))
    conv = conversation_for(count, qs)
    # counts offered: 0..max(10, largest count in the file = 13) -> 14 answers, chance 1/14
    assert conv.payload["options"]["0"] == [f"[count] {k}" for k in range(14)]
    positions = conversation_for(pos, qs).payload["options"]["0"]
    assert len(positions) == 27 == len(set(positions))  # 3 x 3 x 3 combinations
    assert positions[0] == "[lateral] left\n[depth] front\n[vertical] above"
    # open turns: the references of the OTHER questions of the task, never its own
    assert sorted(conversation_for(opens[0], qs).payload["options"]["0"]) == [
        "[emotion cause] Her son is lost.", "[emotion cause] The harvest failed."]
    out = run_questions(qs, qs.questions, create_backend("baseline:random"),
                        GenerationSettings(), None, TableEmbedder(refs))
    by_id = {r.question_id: r for r in out.rows}
    # every turn now parses (before: 100 % unparsed on counts and positions)
    assert all(r.state == Outcome.SCORED for r in out.rows)
    assert by_id[count.id].parsed == int(_draw(count.id, conv.payload["options"]["0"])
                                         .split()[-1])
    assert by_id[pos.id].raw_response == _draw(pos.id, positions)
    assert by_id[opens[0].id].parsed in refs[1:]


class TableEmbedder(Embedder):
    """Each reference gets its own orthogonal unit vector (one-hot), so a random other
    reference has cosine 0 with the question's own."""

    id = "one-hot"

    def __init__(self, refs: list[str]) -> None:
        self.refs = refs

    def embed(self, texts: Sequence[str]) -> FloatArray:
        return np.eye(len(self.refs), dtype=np.float32)[[self.refs.index(t) for t in texts]]
