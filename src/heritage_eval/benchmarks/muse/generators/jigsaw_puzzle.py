"""Task 8 — Jigsaw Puzzle: the artwork with one piece blanked out plus candidate pieces
A–D as separate images; which piece fills the hole?

Per question (seeded): a grid from ``grids`` (rows, cols), a piece shape and edge style,
and an interior cell (so the hole is surrounded by picture; any cell when the grid has no
interior). Distractor types (paper): ``same_image_piece`` (same shape, another cell),
``merged_neighbor`` (true piece merged with a 4-neighbour cell's piece), ``zoomed_region``
(``zoom`` × the piece box around it, resized down), ``other_image_piece`` (same cell of
another image of the corpus). Types are used in random order, each once, before
``same_image_piece`` fills any remaining slot; a candidate equal to an earlier one is
dropped. Images written: ``jigsaw_<n>_puzzle.png`` and ``jigsaw_<n>_<label>.png``.
"""

from __future__ import annotations

import random

import numpy as np

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated, others_than
from heritage_eval.benchmarks.muse.jigsaw import pieces
from heritage_eval.benchmarks.muse.options import CORRECT, Candidate, assemble
from heritage_eval.benchmarks.muse.prompts import answer_block, join
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
from heritage_eval.core.images import ImageLoadError, load_image

TASK = "jigsaw_puzzle"
MIN_CELL = 16  # pixels: smaller cells make unreadable pieces


def _cells(rows: int, cols: int) -> list[tuple[int, int]]:
    inner = [(r, c) for r in range(1, rows - 1) for c in range(1, cols - 1)]
    return inner or [(r, c) for r in range(rows) for c in range(cols)]


def _other_pixels(ctx: ImageContext, rng: random.Random) -> np.ndarray | None:
    others = others_than(ctx.corpus.image_ids, ctx.ann.image_id)
    for other in rng.sample(others, min(3, len(others))):
        try:
            return np.asarray(load_image(ctx.corpus.image_paths[other]))
        except ImageLoadError:
            continue
    return None


def _distractors(ctx: ImageContext, px: np.ndarray, grid: tuple[int, int],
                 cell: tuple[int, int], shape: str, edge: str, pl: pieces.Placement,
                 rng: random.Random) -> list[tuple[str, np.ndarray]]:
    p = ctx.params.jigsaw_puzzle
    rows, cols = grid
    h, w = px.shape[:2]
    bg = p.piece_background
    types = list(p.distractor_types)
    rng.shuffle(types)
    spare = [x for x in ((r, c) for r in range(rows) for c in range(cols)) if x != cell]
    rng.shuffle(spare)
    slots = types + ["same_image_piece"] * (p.n_options - 1) if "same_image_piece" in types \
        else types
    out: list[tuple[str, np.ndarray]] = []
    for kind in slots:
        if len(out) >= p.n_options - 1:
            break
        img: np.ndarray | None = None
        if kind == "same_image_piece" and spare:
            img = pieces.cut(px, pieces.place_like(pl, w, h, grid, spare.pop()), bg)
        elif kind == "merged_neighbor":
            r, c = cell
            near = [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                    if 0 <= r + dr < rows and 0 <= c + dc < cols]
            img = pieces.merged(px, pl, pieces.place_like(pl, w, h, grid, rng.choice(near)), bg)
        elif kind == "zoomed_region":
            img = pieces.zoomed(px, pl, p.zoom, bg)
        elif kind == "other_image_piece":
            other_px = _other_pixels(ctx, rng)
            if other_px is not None:
                img = pieces.foreign(other_px, grid, cell, pl, shape, edge, bg)
        if img is not None and not any(np.array_equal(img, o) for _, o in out):
            out.append((kind, img))
    return out


def generate(ctx: ImageContext) -> Generated:
    """``questions_per_image`` puzzles for the image (raises ``ImageLoadError`` when the
    artwork cannot be read; the pipeline reports it)."""
    out = Generated()
    p = ctx.params.jigsaw_puzzle
    px = ctx.pixels()
    h, w = px.shape[:2]
    for n in range(p.questions_per_image):
        rng = ctx.rng(TASK, n)
        grid = tuple(rng.choice(p.grids))
        rows, cols = grid[0], grid[1]
        shape, edge = rng.choice(p.shapes), rng.choice(p.edges)
        if w // cols < MIN_CELL or h // rows < MIN_CELL:
            out.skip(TASK, "image too small for the grid")
            continue
        cell = rng.choice(_cells(rows, cols))
        pl = pieces.place(w, h, (rows, cols), cell, shape, edge)
        truth = pieces.cut(px, pl, p.piece_background)
        found = _distractors(ctx, px, (rows, cols), cell, shape, edge, pl, rng)
        found = [(k, img) for k, img in found if not np.array_equal(img, truth)]
        if not found:
            out.skip(TASK, "no distinct distractor piece")
            continue
        arrays = {"#0": truth} | {f"#{i + 1}": img for i, (_, img) in enumerate(found)}
        cands = [Candidate(kind, image=f"#{i + 1}") for i, (kind, _) in enumerate(found)]
        options, answer = assemble(Candidate(CORRECT, image="#0"), cands, rng)
        save = ctx.assets.save
        puzzle = save(ctx.ann.image_id, f"jigsaw_{n}_puzzle",
                      pieces.punch(px, pl, p.hole_color), p.png_compress_level)
        options = [o.model_copy(update={"image": save(
            ctx.ann.image_id, f"jigsaw_{n}_{o.label}", arrays[o.image or ""],
            p.png_compress_level)}) for o in options]
        labels = [o.label for o in options]
        prompt = join(
            "The first image shows an artwork with one region blanked out in flat grey. The "
            f"next {len(options)} images are candidate pieces, labelled {', '.join(labels)} "
            "in that order. Which piece fills the blank region exactly, continuing the "
            "lines, colours and textures around it?",
            answer_block(TASK, ctx.params.answer_style, len(options)))
        bw, bh = pl.size
        params = ctx.task_params(TASK, grid=[rows, cols], shape=shape, edge=edge,
                                 cell=list(cell), n_options_used=len(options),
                                 hole=[round(pl.x0 / w, 6), round(pl.y0 / h, 6),
                                       round(bw / w, 6), round(bh / h, 6)])
        turn = QuestionTurn(task=TASK, prompt=prompt,
                            images=[puzzle, *[o.image or "" for o in options]],
                            answer_format="choice", tag="option", options=options,
                            answer=answer, params=params)
        out.questions.append(Question(
            id=ctx.qid(TASK, n), image_id=ctx.ann.image_id, turns=[turn],
            metadata={"hole_px": [pl.x0, pl.y0, bw, bh], "image_size": [w, h]}))
    return out
