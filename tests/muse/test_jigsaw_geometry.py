"""Jigsaw geometry: the correct piece equals the hole's pixels, distractors differ.

Checked on the puzzles generated from the real sample (re-deriving each placement from
the grid / cell / shape / edge recorded in the question) and on synthetic arrays whose
expected pixels are known by construction.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from heritage_eval.benchmarks.muse.generate import generate_benchmark
from heritage_eval.benchmarks.muse.jigsaw import pieces
from heritage_eval.benchmarks.muse.jigsaw.shapes import piece_mask, piece_size
from heritage_eval.benchmarks.muse.params import GenerationParams, apply_overrides
from heritage_eval.benchmarks.muse.questions import read_questions
from heritage_eval.core.images import load_image
from tests.conftest import realdata

REAL = realdata("muse")
SHAPES = ("hexagon_stretched", "hexagon_upright", "hexagon_balanced", "rect_wide",
          "rect_tall", "square")


def _png(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"))


@pytest.mark.parametrize("seed", [0, 7])
def test_real_puzzles_correct_piece_is_the_hole(tmp_path: Path, seed: int) -> None:
    out = tmp_path / "q.jsonl"
    params = apply_overrides(GenerationParams(), ["jigsaw_puzzle.questions_per_image=2"])
    generate_benchmark(REAL / "annotations.json", REAL / "images", out, seed=seed,
                       tasks=["jigsaw_puzzle"], params=params, progress=False)
    _, questions = read_questions(out)
    assert len(questions) == 14  # 7 images x 2
    kinds: set[str] = set()
    for q in questions:
        turn = q.turns[0]
        p = turn.params
        original = np.asarray(load_image(REAL / "images" / f"{q.image_id}.jpg"))
        h, w = original.shape[:2]
        pl = pieces.place(w, h, tuple(p["grid"]), tuple(p["cell"]), p["shape"], p["edge"])
        bw, bh = pl.size
        assert q.metadata["hole_px"] == [pl.x0, pl.y0, bw, bh]
        region = original[pl.y0:pl.y0 + bh, pl.x0:pl.x0 + bw]
        puzzle = _png(tmp_path / turn.images[0])
        # the hole is flat grey exactly under the mask; everything else is untouched
        assert (puzzle[pl.y0:pl.y0 + bh, pl.x0:pl.x0 + bw][pl.mask] == 128).all()
        outside = np.ones((h, w), dtype=bool)
        outside[pl.y0:pl.y0 + bh, pl.x0:pl.x0 + bw] = ~pl.mask
        assert np.array_equal(puzzle[outside], original[outside])
        assert turn.images[1:] == [o.image for o in turn.options]
        correct = _png(tmp_path / next(o.image or "" for o in turn.options
                                       if o.label == turn.answer))
        assert correct.shape[:2] == (bh, bw)
        assert np.array_equal(correct[pl.mask], region[pl.mask])
        assert (correct[~pl.mask] == 255).all()
        for o in turn.options:
            kinds.add(o.distractor_type)
            if o.label != turn.answer:
                other = _png(tmp_path / (o.image or ""))
                assert not np.array_equal(other, correct)
                # same size and silhouette as the hole: size cannot pick the answer (the
                # merged piece used to be twice as large)
                assert other.shape == correct.shape
                assert (other[~pl.mask] == 255).all()
        assert len(turn.options) == 4
        assert p["grid"] in [[3, 4], [4, 4], [3, 6], [4, 5], [3, 7]]
    assert kinds == {"correct", "same_image_piece", "merged_neighbor", "zoomed_region",
                     "other_image_piece"}


def test_piece_sizes_by_hand() -> None:
    # 480 x 360 cell (1920x1080 with a 3x4 grid)
    assert piece_size("square", 480, 360) == (360, 360)
    assert piece_size("rect_wide", 480, 360) == (480, 288)       # 0.6 * 480
    assert piece_size("rect_tall", 480, 360) == (216, 360)       # 0.6 * 360
    assert piece_size("hexagon_upright", 480, 360) == (288, 360)  # 0.8 * 360
    bw, bh = piece_size("hexagon_balanced", 480, 360)
    assert (bw, bh) == (416, 360)  # min(480, round(360 * 2/sqrt 3) = 416), 416*sqrt3/2 = 360.3
    assert bh == min(360, round(416 * math.sqrt(3) / 2))


def test_masks_shapes_and_edges() -> None:
    full = piece_mask("square", "sharp", 100, 100)
    assert full.all()  # a sharp square fills its box: 100 x 100 pixels
    for edge in ("angled", "rounded"):
        m = piece_mask("square", edge, 100, 100)
        assert not m[0, 0] and not m[99, 99] and m[50, 50] and m[0, 50]
    rounded = piece_mask("square", "rounded", 100, 100).sum()
    angled = piece_mask("square", "angled", 100, 100).sum()
    # corner size 15 px: a chamfer cuts a right triangle of 15*15/2 = 112.5 px per corner;
    # a quadratic Bezier arc with its control point on the corner cuts 1/3 of that triangle
    assert angled == pytest.approx(10000 - 4 * 112.5, abs=40)
    assert rounded == pytest.approx(10000 - 4 * 112.5 / 3, abs=40)
    hexagon = piece_mask("hexagon_balanced", "sharp", 116, 100)
    # a flat-top hexagon covers 3/4 of its bounding box
    assert hexagon.sum() / hexagon.size == pytest.approx(0.75, abs=0.03)
    assert hexagon[50, 0]  # left vertex on the middle row
    assert not hexagon[0, 0] and not hexagon[99, 115]
    upright = piece_mask("hexagon_upright", "sharp", 80, 100)
    assert upright[0, 40] and not upright[0, 0] and upright[50, 0]
    for shape in SHAPES:
        assert piece_mask(shape, "rounded", *piece_size(shape, 90, 70)).any()


def test_distractor_pixels_on_a_synthetic_image() -> None:
    # pixel value encodes its position, so every cut can be checked exactly
    h, w = 120, 160
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.stack([xx, yy, (xx + yy) % 256], axis=-1).astype(np.uint8)
    grid, cell = (3, 4), (1, 1)
    pl = pieces.place(w, h, grid, cell, "square", "sharp")
    assert (pl.x0, pl.y0, *pl.size) == (40, 40, 40, 40)  # cell (40..80, 40..80)
    truth = pieces.cut(img, pl, (255, 255, 255))
    assert np.array_equal(truth, img[40:80, 40:80])
    right = pieces.place(w, h, grid, (1, 2), "square", "sharp")
    merged = pieces.merged(img, pl, right, (255, 255, 255))
    # joint box x 40..120, y 40..80 (80 x 40) resampled to the 40 x 40 piece: each output
    # column averages two input columns, R = x -> 40.5 + 2j; G = y unchanged
    assert merged.shape == truth.shape
    assert np.allclose(merged[:, :, 0], 40.5 + 2 * np.arange(40)[None, :], atol=0.6)
    assert np.array_equal(merged[:, :, 1], img[40:80, 40:80, 1])
    zoom = pieces.zoomed(img, pl, 2.0, (255, 255, 255))
    assert zoom.shape == truth.shape and not np.array_equal(zoom, truth)
    # 80x80 region centred on (60, 60) -> (20..100, 20..100) shrunk 2x: top-left ~ (20.5)
    assert zoom[0, 0, 0] == pytest.approx(20.5, abs=1)
    holed = pieces.punch(img, pl, (128, 128, 128))
    assert (holed[40:80, 40:80] == 128).all() and np.array_equal(holed[:40], img[:40])
    other = np.zeros((240, 320, 3), dtype=np.uint8)
    other[..., 0] = 9
    foreign = pieces.foreign(other, grid, cell, pl, "square", "sharp", (255, 255, 255))
    assert foreign.shape == truth.shape and (foreign[..., 0] == 9).all()


def test_other_cell_piece_takes_the_true_piece_size() -> None:
    # 161 px wide, 4 columns: cell edges round(i * 161 / 4) = 0, 40, 80, 121, 161, so cell
    # (1, 1) is 40 px wide and (1, 2) 41 px; a rect_wide piece is cw x round(0.6 cw)
    img = np.zeros((120, 161, 3), dtype=np.uint8)
    pl = pieces.place(161, 120, (3, 4), (1, 1), "rect_wide", "sharp")
    assert pl.size == (40, 24)
    assert pieces.place(161, 120, (3, 4), (1, 2), "rect_wide", "sharp").size == (41, 25)
    other = pieces.place_like(pl, 161, 120, (3, 4), (1, 2))
    # centred in cell x 80..121, y 40..80: x0 = 80 + (41 - 40) // 2, y0 = 40 + (40 - 24) // 2
    assert (other.x0, other.y0, other.size) == (80, 48, (40, 24))
    assert pieces.cut(img, other, (255, 255, 255)).shape == (24, 40, 3)
    # a corner cell keeps the piece inside the image
    corner = pieces.place_like(pl, 161, 120, (3, 4), (2, 3))
    assert corner.x0 + 40 <= 161 and corner.y0 + 24 <= 120
