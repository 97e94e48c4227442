"""Look over the prediction files of ``score ancient-bench`` before anything is scored.

:func:`survey_predictions` finds, per model, which prediction files of the selected
ground-truth lines exist (and, for ``--missing error``, which of them cannot be used),
and counts the ``.json`` files under ``<model>/<category>/results/`` that no
ground-truth line names (the official evaluator never opens them: they are ignored, with
one warning per model). :func:`enforce_missing_policy` stops a ``--missing error`` run;
:func:`empty_model_folders` applies the rule for a model folder that holds no prediction
file at all (``score.py``). :func:`plan_predictions` is the whole check, as
``score_prediction_folder`` uses it.

Light: the prediction reader and the loader only, no scoring code (issue 23).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.ancient_bench.loader import Release
from heritage_eval.benchmarks.ancient_bench.predictions import (
    MissingPolicy,
    MissingPredictionsError,
    UnusablePredictionsError,
    prediction_file,
    prediction_path,
    read_prediction,
)
from heritage_eval.core.types import Sample


@dataclass
class PredictionPlan:
    """What :func:`survey_predictions` found before scoring.

    ``warnings``: lines for the console and ``summary.json`` (files no ground-truth line
    names; with :func:`plan_predictions`, a model none of whose files exists);
    ``absent``: the missing prediction files; ``unusable``: the reasons of the files that
    exist but give no answer (looked for only when asked: ``--missing error``);
    ``counts``: ``{"samples", "load_errors", "per_category"}`` of the ground truth read;
    ``n_pairs``: (model, sample) pairs looked at; per model: ``planned`` (prediction
    files expected), ``found`` (of those, existing), ``first_expected`` (the first path
    expected), ``ignored`` (``.json`` files no ground-truth line names) and
    ``ignored_example`` (the first of them)."""

    warnings: list[str] = field(default_factory=list)
    absent: list[Path] = field(default_factory=list)
    unusable: list[str] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    n_pairs: int = 0
    planned: Counter[str] = field(default_factory=Counter)
    found: Counter[str] = field(default_factory=Counter)
    first_expected: dict[str, str] = field(default_factory=dict)
    ignored: Counter[str] = field(default_factory=Counter)
    ignored_example: dict[str, str] = field(default_factory=dict)


def planned_pairs(samples: Iterable[Sample], root: Path, models: list[str]
                  ) -> Iterator[tuple[Sample, str, str | None]]:
    """``(sample, model, prediction path)`` in the official order: category, ground-truth
    line, model; the path is ``None`` for a ground-truth line that could not be loaded."""
    for s in samples:
        name = s.metadata.get("image_name")
        for model in models:
            yield s, model, None if s.load_error or not name else prediction_file(
                root, model, s.category, str(name))


def survey_predictions(release: Release, root: Path, models: list[str], *,
                       read_all: bool = False, notes: bool = True) -> PredictionPlan:
    """Look for every prediction file of ``models`` (see :class:`PredictionPlan`);
    never raises for a file. ``read_all``: read each existing file too
    (:func:`~.predictions.read_prediction`) and list the unusable ones in ``unusable``
    (``--missing error``); otherwise a file counts as found when anything stands at its
    path (what :func:`~.predictions.read_prediction` does not call missing).
    ``notes``: collect the loader's notes into ``release.warnings`` (the first pass)."""
    plan = PredictionPlan()
    per_category: Counter[str] = Counter()
    n_errors = 0
    expected: set[str] = set()  # prediction names (relative to results/) of one category
    category: str | None = None

    def flush() -> None:
        if category is not None:
            _count_ignored(plan, root, models, category, expected)
        expected.clear()

    def counted(samples: Iterable[Sample]) -> Iterator[Sample]:
        nonlocal n_errors, category
        for s in samples:
            if s.category != category:
                flush()
                category = s.category
            per_category[s.category] += 1
            n_errors += bool(s.load_error)
            name = s.metadata.get("image_name")
            if name and not s.load_error:
                expected.add(_relative_name(str(name)))
            yield s

    samples = release.iter_samples(release.warnings if notes else None, notes=notes,
                                   locate=False)  # no image path read
    for _, model, path in planned_pairs(counted(samples), root, models):
        plan.n_pairs += 1
        if path is None:
            continue
        plan.planned[model] += 1
        plan.first_expected.setdefault(model, path)
        pred = read_prediction(path) if read_all else None
        if pred.missing if pred is not None else not os.path.lexists(path):
            plan.absent.append(Path(path))
            continue
        plan.found[model] += 1
        if pred is not None and pred.error is not None:
            plan.unusable.append(pred.error)
    flush()
    for cat in release.categories:  # a category without any ground-truth line
        if cat not in per_category:
            category = cat
            flush()
    plan.counts = {"samples": sum(per_category.values()), "load_errors": n_errors,
                   "per_category": dict(per_category)}
    plan.warnings = ignored_warnings(plan, models)
    return plan


def _relative_name(image_name: str) -> str:
    """The prediction file of ``image_name`` relative to its ``results/`` folder,
    normalised (``./a.png`` -> ``a.json``)."""
    return os.path.normpath(os.path.splitext(image_name)[0] + ".json")


def _count_ignored(plan: PredictionPlan, root: Path, models: list[str], category: str,
                   expected: set[str]) -> None:
    """Count, per model, the ``.json`` files under ``<model>/<category>/results/``
    (sub-folders included, links not followed) whose name no ground-truth line gives."""
    for model in models:
        folder = str(Path(root, model, category, "results"))
        for dirpath, _, files in os.walk(folder):
            for f in sorted(files):
                if not f.endswith(".json"):
                    continue
                full = os.path.join(dirpath, f)
                if os.path.normpath(os.path.relpath(full, folder)) not in expected:
                    plan.ignored[model] += 1
                    plan.ignored_example.setdefault(model, full)


def ignored_warnings(plan: PredictionPlan, models: Iterable[str]) -> list[str]:
    """One line per model with prediction files that no ground-truth line names."""
    return [f"model {m!r}: {plan.ignored[m]} prediction file(s) with no ground-truth line "
            f"ignored (as the official evaluator ignores them), e.g. "
            f"{plan.ignored_example[m]}" for m in models if plan.ignored[m]]


def all_missing_warnings(root: Path, planned: Counter[str], absent: Counter[str]) -> list[str]:
    """One warning per model whose every expected prediction file is absent (``planned``
    / ``absent``: files per model), naming the model and the path pattern looked for."""
    return [f"model {model!r}: none of its {n} prediction file(s) found; expected "
            f"{prediction_path(root, model, '<category>', '<image stem>.json')} — is "
            "--predictions the folder that holds the model folders?"
            for model, n in planned.items() if n and absent[model] == n]


def empty_model_folders(plan: PredictionPlan, models: Iterable[str]) -> list[str]:
    """The models none of whose expected prediction files exists (at least one was
    expected: a model whose every ground-truth line failed to load is not one)."""
    return [m for m in models if plan.planned[m] and not plan.found[m]]


def empty_folder_text(root: Path, plan: PredictionPlan, model: str) -> str:
    """Why ``model``'s folder counts as empty: the folder, the number of lines, the first
    file expected and, when there are some, a file that no ground-truth line names."""
    text = (f"{root / model} holds no prediction file for the {plan.planned[model]} "
            f"ground-truth line(s) scored (expected e.g. {plan.first_expected[model]})")
    if plan.ignored[model]:
        text += (f"; its {plan.ignored[model]} .json file(s) match no ground-truth line, "
                 f"e.g. {plan.ignored_example[model]}")
    return text


def enforce_missing_policy(plan: PredictionPlan, missing: MissingPolicy) -> None:
    """Under ``missing="error"`` stop as the official evaluator stops: raises
    :class:`~.predictions.UnusablePredictionsError` when a file cannot be used (exit 2),
    else :class:`~.predictions.MissingPredictionsError` when a file is absent (exit 1).
    Nothing for the other policies."""
    if missing != "error":
        return
    if plan.unusable:
        raise UnusablePredictionsError(plan.unusable, len(plan.absent))
    if plan.absent:
        raise MissingPredictionsError(plan.absent)


def plan_predictions(release: Release, root: Path, models: list[str],
                     missing: MissingPolicy = "empty") -> PredictionPlan:
    """:func:`survey_predictions` then :func:`enforce_missing_policy` (so with
    ``missing="error"`` raises before anything is scored); a model none of whose
    prediction files exists gets a warning (a wrong ``root`` is the usual cause), added
    to the ignored-files warnings."""
    plan = survey_predictions(release, root, models, read_all=missing == "error")
    enforce_missing_policy(plan, missing)
    absent = Counter({m: plan.planned[m] - plan.found[m] for m in models})
    plan.warnings = all_missing_warnings(root, plan.planned, absent) + plan.warnings
    return plan
