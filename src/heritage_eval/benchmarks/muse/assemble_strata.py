"""The strata ``muse assemble`` balances: artistic style and scene theme of each image, and
the difficulty knobs each generator records in its questions.

**Style and theme** are image properties (MUSE §3: diversity "through diverse artists",
scene themes, Fig. 3). Generated questions do not record an artist or style, so they come,
per image id, from the first source that has them:

1. ``--strata FILE.csv`` — a curator's table with a header row and columns ``image_id``
   and ``style`` and/or ``theme`` (a blank cell: not given there); ids not in the pool
   are a warning, a table with none in the pool an error (:func:`unmatched_ids`);
2. ``--annotations EXPORT.json`` — the Label Studio export the pool was generated from:
   style from the task's ``data`` field ``style``, else ``artistic_style``, else
   ``artist`` (a field the curator adds to the task data); theme from the image's ``scene``
   label, mapped to its category through the pool header's ``source.scene_categories``;
3. the pool itself — the scene label and category that each scene-classification question
   records in ``metadata.scene`` / ``metadata.scene_category``.

A scene label whose category is ``null`` (unassigned, see GENERATION.md *Scene
categories*) becomes the theme ``(unassigned) <label>``; a label the header does not
categorise is its own theme. An image without a source gets :data:`UNKNOWN`.

**Difficulty** (:func:`difficulty`) is a short string joining the knobs below; every
distinct string is one stratum of its task:

====================== ==============================================================
group / task           knobs (from the question's turns, params and metadata)
====================== ==============================================================
affective_dialogue     ``options=`` options of turn 1 / turn 2 (the dialogue's depth,
                       which of tasks 1–4 it reaches, is handled by quotas)
activity_localization  ``options=``, ``answer=none|box``, ``distractors=`` type set
activity_description   ``options=``, ``answer=none|text``, ``distractors=`` type set
cultural_identification ``options=``, ``negatives=`` (``dataset`` or fallback pool)
jigsaw_puzzle          ``grid=ROWSxCOLS`` (the paper's five segmentation grids)
object_count           ``count=`` answer range 0–1, 2–3, 4–6, 7–10, 11+
relative_position      none recorded (one stratum, ``all``)
remote_interaction     ``distractors=`` type set of the entity turn
scene_classification   ``options=``
====================== ==============================================================
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.muse.taxonomy import AFFECTIVE_DIALOGUE
from heritage_eval.core.datapath import open_regular

#: Stratum value of an image whose style or theme no source gives.
UNKNOWN = "(unknown)"
#: Group id of the four-turn affective dialogue (tasks 1–4 share one question).
AFFECTIVE = "affective_dialogue"
#: Task ``data`` fields read for the artistic style, first present wins.
STYLE_FIELDS: tuple[str, ...] = ("style", "artistic_style", "artist")
#: Upper bounds of the object-count answer ranges (the last range is open).
COUNT_BINS: tuple[tuple[int, str], ...] = ((1, "0-1"), (3, "2-3"), (6, "4-6"), (10, "7-10"))

Turn = Mapping[str, Any]


class StrataError(ValueError):
    """A strata source could not be read; the message names the file (and line)."""


def group_of(question: Mapping[str, Any]) -> str:
    """The allocation group of a question (dict as in the question file): its first
    turn's task, or :data:`AFFECTIVE` when that task is one of tasks 1–4."""
    task = str(question["turns"][0]["task"])
    return AFFECTIVE if task in AFFECTIVE_DIALOGUE else task


def _n_options(turn: Turn) -> str:
    return f"options={len(turn.get('options') or [])}"


def _distractors(turn: Turn) -> str:
    kinds = sorted({str(o.get("distractor_type")) for o in turn.get("options") or []}
                   - {"correct"})
    return "distractors=" + ("+".join(kinds) or "-")


def _none_answer(q: Mapping[str, Any], other: str) -> str:
    return "answer=" + ("none" if (q.get("metadata") or {}).get("none_correct") else other)


def _count_range(turn: Turn) -> str:
    n = turn.get("answer")
    if not isinstance(n, int | float) or isinstance(n, bool):
        return "count=?"
    return "count=" + next((name for top, name in COUNT_BINS if n <= top),
                           f"{COUNT_BINS[-1][0] + 1}+")


def _grid(turn: Turn) -> str:
    grid = (turn.get("params") or {}).get("grid")
    if isinstance(grid, list | tuple) and len(grid) == 2:
        return f"grid={grid[0]}x{grid[1]}"
    return "grid=?"


def _affective(q: Mapping[str, Any]) -> list[str]:
    turns = q["turns"]
    counts = [str(len(t.get("options") or [])) for t in turns[:2]]
    return ["options=" + "/".join(counts)]


_KNOBS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    AFFECTIVE: _affective,
    "activity_localization": lambda q: [_n_options(q["turns"][0]), _none_answer(q, "box"),
                                        _distractors(q["turns"][0])],
    "activity_description": lambda q: [_n_options(q["turns"][0]), _none_answer(q, "text"),
                                       _distractors(q["turns"][0])],
    "cultural_identification": lambda q: [
        _n_options(q["turns"][0]),
        "negatives=" + str((q["turns"][0].get("params") or {}).get("negative_pool", "?"))],
    "jigsaw_puzzle": lambda q: [_grid(q["turns"][0])],
    "object_count": lambda q: [_count_range(q["turns"][0])],
    "remote_interaction": lambda q: [_distractors(q["turns"][0])],
    "scene_classification": lambda q: [_n_options(q["turns"][0])],
}


def difficulty(question: Mapping[str, Any], group: str) -> str:
    """Difficulty stratum of ``question`` in ``group`` (module table), e.g.
    ``"grid=4x5"`` or ``"options=5; answer=box; distractors=none+other_activity"``;
    ``"all"`` for a group that records no knob. Never raises on a missing field (``?``)."""
    knobs = _KNOBS.get(group)
    return "; ".join(knobs(question)) if knobs else "all"


def scene_theme(label: str, categories: Mapping[str, Any]) -> str:
    """Theme of scene ``label``: its category in the header's ``source.scene_categories``;
    ``(unassigned) <label>`` when that category is ``null``; the label itself when the
    header does not list it."""
    entry = categories.get(label)
    if not isinstance(entry, Mapping):
        return label
    category = entry.get("category")
    return str(category) if category else f"(unassigned) {label}"


def read_strata_csv(path: str | Path) -> dict[str, dict[str, str]]:
    """``image_id -> {"style": …, "theme": …}`` from a CSV with a header row (columns
    ``image_id`` and at least one of ``style`` / ``theme``; blank cells are left out).

    Raises :class:`StrataError` naming the file (and line) for a missing column, a
    duplicate image id or an unreadable file."""
    p = Path(path)
    try:
        with open_regular(p, "r", encoding="utf-8-sig", newline="") as fh:  # no FIFO
            reader = csv.DictReader(fh)
            cols = set(reader.fieldnames or [])
            if "image_id" not in cols or not cols & {"style", "theme"}:
                raise StrataError(f"{p}:1: expected columns image_id and style and/or theme,"
                                  f" got {sorted(cols)}")
            out: dict[str, dict[str, str]] = {}
            for row in reader:
                image_id = (row.get("image_id") or "").strip()
                if not image_id:
                    raise StrataError(f"{p}:{reader.line_num}: empty image_id")
                if image_id in out:
                    raise StrataError(f"{p}:{reader.line_num}: image_id {image_id!r} "
                                      "listed twice")
                out[image_id] = {k: v.strip() for k in ("style", "theme")
                                 if (v := row.get(k) or "").strip()}
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise StrataError(f"{p}: cannot read strata CSV: {exc}") from exc
    return out


def unmatched_ids(table: Mapping[str, Any], images: list[str], path: str | Path
                  ) -> str | None:
    """Check the ``--strata`` table's image ids against the pool's ``images``: a warning
    (count and the first 5 ids) when some are not in the pool, ``None`` when all are.
    Raises :class:`StrataError` naming the file when *none* is (another pool, or ids
    written another way, e.g. with a file extension), showing a few of the pool's ids."""
    extra = sorted(set(table) - set(images))
    if not extra:
        return None
    first = ", ".join(extra[:5]) + (" …" if len(extra) > 5 else "")
    if len(extra) == len(table):
        raise StrataError(f"{path}: none of its {len(table)} image id(s) is in the pool "
                          f"({first}); the pool's ids are like "
                          f"{', '.join(images[:3]) or '(none)'}")
    return (f"--strata {path}: {len(extra)} of its {len(table)} image id(s) not in the "
            f"pool, ignored: {first}")


def read_export_strata(path: str | Path, categories: Mapping[str, Any]
                       ) -> dict[str, dict[str, str]]:
    """``image_id -> {"style": …, "theme": …}`` from a Label Studio export (module doc,
    source 2), image ids as ``muse generate`` makes them. Raises :class:`StrataError`
    naming the file when it is not a readable export."""
    from heritage_eval.benchmarks.muse.labelstudio import (
        LabelStudioFormatError,
        load_labelstudio,
    )
    from heritage_eval.benchmarks.muse.labelstudio_rules import task_id

    p = Path(path)
    try:
        imported = load_labelstudio(p)
        tasks = json.loads(p.read_text(encoding="utf-8"))
    except (LabelStudioFormatError, OSError, ValueError) as exc:
        raise StrataError(f"{p}: cannot read annotations: {exc}") from exc
    data_of = {task_id(t, i): t.get("data") for i, t in enumerate(tasks) if isinstance(t, dict)}
    out: dict[str, dict[str, str]] = {}
    for ann in imported.annotations:
        entry: dict[str, str] = {}
        data = data_of.get(ann.source.rpartition("#task=")[2])
        if isinstance(data, dict):
            style = next((str(data[k]).strip() for k in STYLE_FIELDS
                          if isinstance(data.get(k), str | int) and str(data[k]).strip()), "")
            if style:
                entry["style"] = style
        if ann.scene:
            entry["theme"] = scene_theme(ann.scene, categories)
        out[ann.image_id] = entry
    return out


def pool_theme(question: Mapping[str, Any]) -> str | None:
    """Theme recorded by a scene-classification question (source 3), else ``None``."""
    meta = question.get("metadata") or {}
    label = meta.get("scene")
    if group_of(question) != "scene_classification" or not isinstance(label, str):
        return None
    category = meta.get("scene_category")
    return str(category) if category else f"(unassigned) {label}"
