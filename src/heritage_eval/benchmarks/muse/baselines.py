"""MUSE offline baselines: ``baseline:jigsaw-edges`` (``baseline:random`` lives in
``models/baselines.py`` and reads the option labels of each turn from the payload).

``baseline:jigsaw-edges`` is a classical jigsaw solver for task 8 only. It reads the
question from the conversation payload, finds the missing region in the context image
(pixels of the question's ``hole_color``, largest connected component, OpenCV), scales
each candidate piece to the hole's bounding rectangle and measures how well the piece's
pixels along the hole's border continue the surrounding image: for each border pixel
``p`` inside the hole with an outside 4-neighbour ``q`` (and ``q2`` one step further out),
the image predicts ``2·I(q) − I(q2)`` (linear extrapolation, the prediction-based
compatibility of Pomeranz et al., CVPR 2011, with an L1 norm); the piece with the smallest
mean absolute prediction error is answered as ``[option] X``.

A piece must first *fit* the hole: its silhouette (pixels other than the question's
``piece_background``) must have the size of the hole's bounding rectangle (+-2 px; pieces
are shown at the puzzle's scale) and overlap the hole's shape with IoU >= 0.9. Border
continuity decides among fitting pieces; when none fits, among all pieces.

It is registered as ``baseline:jigsaw-edges`` by :mod:`.commands` (a factory importing
this module on first use, so the command line starts without OpenCV).

It declares ``supported_tasks = {"jigsaw_puzzle"}``: ``run muse`` sends it nothing else,
so its summary has a Jigsaw Puzzle row only (no 0 % rows polluting Table 2, correlations
or invalid rates). Called directly on another task, or on a jigsaw turn that has no
visible hole, it answers an empty string, which the MUSE parser marks ``unparsed``. It
never guesses. An image that cannot be read raises ``ImageLoadError``: the runner files
it as that sample's data error (:mod:`heritage_eval.core.data_errors`), not as an answer.

Chance levels for comparison (``baseline:random`` over the options of each turn, see
:func:`heritage_eval.benchmarks.muse.run.turn_options`): 1/K for a K-option question
(jigsaw: 1/4), 1/(K+1) for counts 0..K, 1/27 for all three relative-position dimensions
(1/3 per dimension), and the mismatched-pair floor for open answers.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
from heritage_eval.core.images import ImageLoadError, load_image
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import BackendOptions, ModelBackend

JIGSAW_TASK = "jigsaw_puzzle"
DEFAULT_HOLE_COLOR = (128, 128, 128)
DEFAULT_BACKGROUND = (255, 255, 255)
#: Size tolerance (pixels) and silhouette IoU a piece needs to fit the hole.
FIT_TOLERANCE_PX = 2
FIT_MIN_IOU = 0.9
#: Per-channel tolerance when matching the hole colour (0: the assets are lossless PNG).
HOLE_TOLERANCE = 0

Array = npt.NDArray[np.float32]
Mask = npt.NDArray[np.bool_]


def _rgb(path: Path) -> Array:
    return np.asarray(load_image(path), dtype=np.float32)


def find_hole(image: Array, color: tuple[int, int, int], tol: int = HOLE_TOLERANCE) -> Mask:
    """Boolean mask (H, W) of the largest connected region of ``color`` (+-``tol``).

    A 3x3 morphological opening first detaches artwork pixels that happen to share the
    colour and touch the hole. Returns an all-False mask when no pixel has the colour.
    """
    near = np.all(np.abs(image - np.asarray(color, dtype=np.float32)) <= tol, axis=2)
    near = cv2.morphologyEx(near.astype(np.uint8), cv2.MORPH_OPEN,
                            np.ones((3, 3), np.uint8)).astype(bool)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(
        near.astype(np.uint8), connectivity=8)
    if n <= 1:
        return np.zeros(near.shape, dtype=bool)
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return np.asarray(labels == biggest)


def border_predictions(image: Array, hole: Mask) -> tuple[tuple[npt.NDArray[np.intp], ...],
                                                             Array]:
    """Border pixels of ``hole`` and the colour the surrounding image predicts for them.

    Returns ``(indices, predictions)``: ``indices`` = (rows, cols) of hole pixels with a
    known 4-neighbour, ``predictions`` (N, 3) float32, averaged over the known directions.
    """
    h, w = hole.shape
    pred_sum = np.zeros((h, w, 3), dtype=np.float32)
    count = np.zeros((h, w), dtype=np.float32)
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        # q = p + d (first known pixel), q2 = p + 2d
        q = _shift(image, dy, dx)
        q2 = _shift(image, 2 * dy, 2 * dx)
        known_q = _shift_mask(~hole, dy, dx)
        known_q2 = _shift_mask(~hole, 2 * dy, 2 * dx)
        sel = hole & known_q
        pred = np.where((known_q2 & sel)[..., None], 2 * q - q2, q)
        pred_sum[sel] += np.clip(pred[sel], 0, 255)
        count[sel] += 1
    idx = np.nonzero(count > 0)
    return idx, pred_sum[idx] / count[idx][:, None]


def _shift(a: Array, dy: int, dx: int) -> Array:
    """``out[y, x] = a[y + dy, x + dx]`` (zeros outside)."""
    out = np.zeros_like(a)
    h, w = a.shape[:2]
    ys, yd = (slice(dy, h), slice(0, h - dy)) if dy >= 0 else (slice(0, h + dy), slice(-dy, h))
    xs, xd = (slice(dx, w), slice(0, w - dx)) if dx >= 0 else (slice(0, w + dx), slice(-dx, w))
    out[yd, xd] = a[ys, xs]
    return out


def _shift_mask(m: Mask, dy: int, dx: int) -> Mask:
    return _shift(m.astype(np.float32), dy, dx) > 0.5


def piece_costs(context: Array, pieces: list[Array], hole: Mask) -> list[float]:
    """Mean L1 prediction error (0–255 per channel) of each piece along the hole border.

    Each piece (trimmed to its silhouette, see :func:`trim`) is resized (area
    interpolation) to the hole's bounding rectangle.
    Raises ``ValueError`` when the hole has no border pixel.
    """
    ys, xs = np.nonzero(hole)
    y0, x0, y1, x1 = ys.min(), xs.min(), ys.max() + 1, xs.max() + 1
    idx, pred = border_predictions(context, hole)
    if len(idx[0]) == 0:
        raise ValueError("the hole has no border with the visible image")
    costs = []
    for piece in pieces:
        fitted = cv2.resize(piece, (int(x1 - x0), int(y1 - y0)), interpolation=cv2.INTER_AREA)
        values = fitted[idx[0] - y0, idx[1] - x0]
        costs.append(float(np.mean(np.abs(values - pred))))
    return costs


def trim(piece: Array, background: tuple[int, int, int]) -> tuple[Array, Mask]:
    """The piece cropped to its silhouette's bounding box (silhouette = pixels other than
    ``background``), and that silhouette. A piece with no silhouette is returned whole."""
    solid = np.any(piece != np.asarray(background, dtype=np.float32), axis=2)
    if not solid.any():
        return piece, solid
    ys, xs = np.nonzero(solid)
    box = (slice(ys.min(), ys.max() + 1), slice(xs.min(), xs.max() + 1))
    return piece[box], solid[box]


def fits(silhouette: Mask, hole: Mask) -> bool:
    """True when a trimmed piece's ``silhouette`` has the size of the hole's bounding box
    (+-FIT_TOLERANCE_PX) and IoU >= FIT_MIN_IOU with the hole's shape."""
    ys, xs = np.nonzero(hole)
    crop = hole[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    if abs(silhouette.shape[0] - crop.shape[0]) > FIT_TOLERANCE_PX or \
            abs(silhouette.shape[1] - crop.shape[1]) > FIT_TOLERANCE_PX:
        return False
    solid = cv2.resize(silhouette.astype(np.uint8), (crop.shape[1], crop.shape[0]),
                       interpolation=cv2.INTER_NEAREST).astype(bool)
    union = np.logical_or(solid, crop).sum()
    return bool(union) and float(np.logical_and(solid, crop).sum() / union) >= FIT_MIN_IOU


def solve(turn: QuestionTurn, base_dir: Path) -> tuple[str, list[float]]:
    """Label of the best-fitting piece and every option's cost. Raises
    ``ImageLoadError`` / ``ValueError`` when the images or the hole cannot be used."""
    option_images = {o.image for o in turn.options if o.image}
    context_rel = next((p for p in turn.images if p not in option_images), None)
    if context_rel is None or len(option_images) != len(turn.options):
        raise ValueError("jigsaw turn lacks a context image or a piece image per option")
    context = _rgb(base_dir / context_rel)
    color = tuple(int(c) for c in turn.params.get("hole_color", DEFAULT_HOLE_COLOR))
    hole = find_hole(context, (color[0], color[1], color[2]))
    if not hole.any():
        raise ValueError(f"no {color} hole found in {context_rel}")
    bg = tuple(int(c) for c in turn.params.get("piece_background", DEFAULT_BACKGROUND))
    trimmed = [trim(_rgb(base_dir / str(o.image)), (bg[0], bg[1], bg[2]))
               for o in turn.options]
    pieces = [t[0] for t in trimmed]
    costs = piece_costs(context, pieces, hole)
    fit = [fits(t[1], hole) for t in trimmed]
    pool = [i for i in range(len(pieces)) if fit[i]] or list(range(len(pieces)))
    best = min(pool, key=lambda i: costs[i])
    return turn.options[best].label, costs


class JigsawEdgesBaseline(ModelBackend):
    """Classical border-continuity jigsaw solver (see module docstring)."""

    reads_payload = True  # answers from the structured payload: part of the cache key

    backend = "baseline"
    max_concurrency = 2
    #: The only task it attempts; ``run muse`` skips every other task for this backend.
    supported_tasks = frozenset({JIGSAW_TASK})

    def __init__(self, options: BackendOptions) -> None:
        self.model_id = "jigsaw-edges"

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        turn_index = int(payload.get("turn", 0))
        try:
            question = Question.model_validate(payload["question"])
            turn = question.turns[turn_index]
        except (KeyError, IndexError, ValueError):
            return Response(text="", meta={"note": "no MUSE question in the payload"})
        if turn.task != JIGSAW_TASK:
            return Response(text="", meta={"note": "answers jigsaw_puzzle only"})
        try:
            label, costs = await asyncio.to_thread(solve, turn,
                                                   Path(str(payload.get("base_dir", "."))))
        except ImageLoadError:
            raise  # the sample's data error, filed by the runner (core.data_errors)
        except (ValueError, cv2.error) as exc:
            return Response(text="", meta={"note": f"cannot solve: {exc}"})
        tag = turn.tag or "option"
        return Response(text=f"[{tag}] {label}",
                        meta={"costs": {o.label: round(c, 3)
                                        for o, c in zip(turn.options, costs, strict=True)}})

