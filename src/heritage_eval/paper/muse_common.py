"""Shared pieces of the ``heritage-eval paper muse-*`` commands: reading MUSE run folders,
the ``--models`` selection, the paper's task order and capability groups, radar axes.

Light at import (no pandas / matplotlib): those are imported inside the functions.
Run folders are read with :func:`heritage_eval.benchmarks.muse.analysis.tables.load_results`
(the ``summary.json`` result blocks ``muse analyze`` reads); its errors become
:class:`~heritage_eval.report.paper_io.PaperInputError` (exit status 2).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.core.tables import Cell
from heritage_eval.report.paper_io import PaperInputError

if TYPE_CHECKING:
    import pandas as pd

    from heritage_eval.benchmarks.muse.analysis.tables import ModelResult

#: Table 2's column order (paper): tasks grouped by capability, left to right.
TABLE2_TASKS: tuple[str, ...] = (
    "object_classification", "object_count",
    "activity_localization", "activity_description", "scene_classification",
    "emotion_detection", "visual_clue_identification", "emotion_cause_inference",
    "relative_position", "remote_interaction", "jigsaw_puzzle",
    "cultural_identification")
#: Table 2's abbreviated headers (the paper's note spells them out).
SHORT: dict[str, str] = {
    "object_classification": "Object Cls.", "object_count": "Object Count",
    "activity_localization": "Activity Loc.", "activity_description": "Activity Desc.",
    "scene_classification": "Scene Cls.", "emotion_detection": "Emotion Det.",
    "visual_clue_identification": "Visual Clue Ident.",
    "emotion_cause_inference": "Emotion Cause Infer.",
    "relative_position": "Relative Position", "remote_interaction": "Remote Interaction",
    "jigsaw_puzzle": "Jigsaw Puzzle", "cultural_identification": "Cultural Ident."}
#: Table 2 prints the open-answer (semantic similarity) tasks with 2 decimals, the rest 1.
OPEN_TASKS = frozenset({"visual_clue_identification", "emotion_cause_inference"})
#: The paper's header row names "Cultural" only.
CAPABILITY_HEADER = {"Cultural Understanding": "Cultural"}
#: Name of the per-task maximum series (paper Fig. 5).
BEST = "Best Available"

def decimals(task: str) -> int:
    """Decimals Table 2 prints for ``task``: 2 for the semantic-similarity tasks, else 1."""
    return 2 if task in OPEN_TASKS else 1


def load(paths: Sequence[Path]) -> list[ModelResult]:
    """Every model result block of the MUSE run folders ``paths`` (one or more models
    each); :class:`PaperInputError` naming the folder for a missing or non-MUSE summary."""
    from heritage_eval.benchmarks.muse.analysis.tables import RunFolderError, load_results

    try:
        return load_results(list(paths))
    except RunFolderError as exc:
        raise PaperInputError(str(exc)) from exc


def add_models_arg(p: argparse.ArgumentParser, what: str) -> None:
    """``--models a,b``: which models to draw, in that order (default: ``what``)."""
    p.add_argument("--models", default=None, metavar="A,B",
                   help=f"models to draw, comma-separated, in legend order (names as in the "
                        f"run summaries; default: {what})")


def pick(results: list[ModelResult], models: str | None, default: list[str]
         ) -> list[ModelResult]:
    """The results named by ``--models`` (in that order) or, without it, those named in
    ``default``; :class:`PaperInputError` listing the known names for an unknown one."""
    by_name = {r.name: r for r in results}
    wanted = [m.strip() for m in models.split(",") if m.strip()] if models else default
    unknown = [m for m in wanted if m not in by_name]
    if unknown:
        raise PaperInputError(f"--models: unknown model(s) {', '.join(unknown)}; the runs "
                              f"hold {', '.join(by_name)}")
    return [by_name[m] for m in wanted]


def task_scores(results: list[ModelResult]) -> pd.DataFrame:
    """Models x tasks (ids, Table 2 order), percent; NaN where a run lacks the task."""
    import pandas as pd

    rows = {r.name: {t: (None if (v := r.result.get("per_task", {}).get(t, {}).get("score"))
                         is None else 100.0 * float(v)) for t in TABLE2_TASKS}
            for r in results}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(TABLE2_TASKS)
                                  ).astype(float)


def with_best(scores: pd.DataFrame, pool: pd.DataFrame) -> pd.DataFrame:
    """``scores`` plus a :data:`BEST` row: the per-column maximum over every model of
    ``pool`` (paper Fig. 5: the best score any model reached on each task)."""
    import pandas as pd

    best = pool.max(axis=0, skipna=True).rename(BEST)
    return pd.concat([scores, best.to_frame().T])


def table_rows(df: pd.DataFrame) -> list[dict[str, Cell | float | str | None]]:
    """One :class:`~heritage_eval.core.tables.Table` row per model: ``model`` (the
    index) and one number per column (NaN -> missing)."""
    rows: list[dict[str, Cell | float | str | None]] = []
    for model, row in df.iterrows():
        cells: dict[str, Cell | float | str | None] = {"model": str(model)}
        for col, v in row.items():
            cells[str(col)] = None if v != v else float(v)
        rows.append(cells)
    return rows


def complete_columns(df: pd.DataFrame) -> list[str]:
    """Columns with a value in every row (a radar axis needs every series)."""
    return [c for c in df.columns if df[c].notna().all()]
