"""Score predictions made elsewhere (the official layout), one (model, sample) at a time.

:func:`iter_scored_predictions` reads each planned prediction file
(:mod:`~heritage_eval.benchmarks.ancient_bench.predictions_plan`) and builds its row;
:func:`score_prediction_folder` is the all-in-memory form. A prediction file that is
missing, or that exists but gives no answer (unusable), is the model's failure and
follows the ``--missing`` policy (:mod:`~heritage_eval.benchmarks.ancient_bench.predictions`):
``empty`` scores it as an empty answer (NED 0, F1 0), ``skip`` gives no row, ``error``
has already stopped at the plan.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from heritage_eval.benchmarks.ancient_bench.loader import Release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.predictions import (
    MissingPolicy,
    MissingPredictionsError,
    Prediction,
    UnusablePredictionsError,
    read_prediction,
)
from heritage_eval.benchmarks.ancient_bench.predictions_plan import (
    plan_predictions,
    planned_pairs,
)
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord, build_record
from heritage_eval.core.types import Sample


@dataclass
class ScoredPredictions:
    """Rows of every model, the ``{"model", "id", "path"}`` of each missing file, the
    ``{"model", "id", "path", "reason"}`` of each unusable one, and ``warnings`` (files no
    ground-truth line names; a model none of whose prediction files exists).
    ``predictions``: parallel to ``records``, the prediction file read for each row
    (``None`` for a ground-truth line that could not be loaded)."""

    records: list[SampleRecord]
    predictions: list[Prediction | None] = field(default_factory=list)
    missing: list[dict[str, str]] = field(default_factory=list)
    unusable: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def iter_scored_predictions(release: Release, root: Path, models: list[str],
                            flags: NormalizationFlags, missing: MissingPolicy,
                            missing_out: list[dict[str, str]], total: int | None = None,
                            unusable_out: list[dict[str, str]] | None = None
                            ) -> Iterator[tuple[SampleRecord, Sample, Prediction | None]]:
    """``(row, sample, prediction file read)`` per scored (model, sample), in the
    official order, built as asked for (the file is ``None`` for a ground-truth line that
    could not be loaded). Each absent file's ``{"model", "id", "path"}`` is appended to
    ``missing_out``, each unusable file's ``{"model", "id", "path", "reason"}`` to
    ``unusable_out``; under ``missing="empty"`` either is scored as an empty answer
    (``missing_prediction`` set for an absent file), under ``"skip"`` it gives no row,
    under ``"error"`` (a file changed since the plan) it raises
    :class:`~.predictions.MissingPredictionsError` /
    :class:`~.predictions.UnusablePredictionsError`. A tqdm bar on stderr (``total``:
    the pairs, when known)."""
    samples = release.iter_samples(notes=False)
    for s, model, path in tqdm(planned_pairs(samples, root, models), total=total,
                               desc="scoring", unit="pred", file=sys.stderr,
                               dynamic_ncols=True, disable=None):
        if path is None:  # the ground-truth line itself could not be loaded
            yield build_record(s, model, None, None, flags), s, None
            continue
        pred = read_prediction(path)
        if pred.missing or pred.error is not None:
            entry = {"model": model, "id": s.id, "path": str(path)}
            if pred.missing:
                missing_out.append(entry)
            elif unusable_out is not None:
                unusable_out.append({**entry, "reason": str(pred.error)})
            if missing == "skip":
                continue
            if missing == "error":
                raise (MissingPredictionsError([Path(path)]) if pred.missing
                       else UnusablePredictionsError([str(pred.error)]))
        # an unusable file's reason stays on its envelope (score_write), not on the
        # row: the row is a scored empty answer
        yield (build_record(s, model, pred.answer, None, flags,
                            missing_prediction=pred.missing, error_kind="data"), s, pred)


def score_prediction_folder(release: Release, root: Path, models: list[str],
                            flags: NormalizationFlags,
                            missing: MissingPolicy = "empty") -> ScoredPredictions:
    """Score predictions in the official layout against ``release``'s ground truth, all
    rows in memory (``score ancient-bench`` streams them instead:
    :func:`~.predictions_plan.plan_predictions`, :func:`iter_scored_predictions`).

    Rows come in the official iteration order: category, ground-truth line, model.
    ``missing`` as in ``predictions.py``, for missing and unusable files alike; with
    ``"error"`` raises :class:`MissingPredictionsError` /
    :class:`UnusablePredictionsError` before scoring anything. A model with no
    prediction file at all gets a warning in ``warnings`` (a wrong ``root`` is the usual
    cause); so does a model with files that no ground-truth line names.
    """
    plan = plan_predictions(release, root, models, missing)
    out = ScoredPredictions(records=[], warnings=plan.warnings)
    for row, _, pred in iter_scored_predictions(release, root, models, flags, missing,
                                                out.missing, plan.n_pairs, out.unusable):
        out.records.append(row)
        out.predictions.append(pred)
    return out
