"""``heritage-eval score ancient-bench``: score predictions made elsewhere.

:func:`score_predictions` is what the CLI handler and the Python API (``he.score``)
call. Predictions lie in the official layout
(``<root>/<model>/<category>/results/<stem>.json``, several models in one root); every
(model, sample) becomes one envelope record, the summary gets the platform envelope (per
model) plus the legacy body (``results``, ``protocol``, ``warnings``), and ``--out`` is
a platform run folder (configuration check, lock, ``--resume`` / ``--overwrite``).

This module checks the folders and plans the files to read; the scoring and the
writing (:mod:`~heritage_eval.benchmarks.ancient_bench.score_write`) are imported once
that is done, so that a command refused for a missing folder answers at once (issue 23).
The command itself (parser, handler): :mod:`~heritage_eval.benchmarks.ancient_bench.score_command`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.benchmarks.ancient_bench.categories import read_categories
from heritage_eval.benchmarks.ancient_bench.loader import Release, load_release
from heritage_eval.benchmarks.ancient_bench.predictions import (
    check_model_folders,
    check_predictions_root,
    discover_models,
)
from heritage_eval.benchmarks.ancient_bench.score_command import (
    SCORE_COMMAND,
    add_score_args,
)
from heritage_eval.core.fingerprint import config_of

if TYPE_CHECKING:
    from heritage_eval.benchmarks.ancient_bench.predictions_plan import PredictionPlan
    from heritage_eval.core.engine import EvalOutput

#: (and, imported on first use, ``envelope_records`` and ``prediction_envelope``)
__all__ = ["FINGERPRINT_OPTIONS", "SCORE_COMMAND", "add_score_args", "fingerprint",
           "score_predictions"]

#: Options that make up a ``score`` run folder's configuration fingerprint.
FINGERPRINT_OPTIONS = ("data", "predictions", "models", "categories", "missing",
                       "protocol", "ignore_st", "ignore_punc", "ignore_space",
                       "ignore_case", "collapse_u25a1")

#: Names defined in :mod:`~heritage_eval.benchmarks.ancient_bench.score_write`, readable
#: here (imported on first use).
_WRITING = ("envelope_records", "prediction_envelope")


def __getattr__(name: str) -> Any:
    if name in _WRITING:
        from heritage_eval.benchmarks.ancient_bench import score_write

        return getattr(score_write, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def fingerprint(opts: argparse.Namespace, models: list[str]) -> dict[str, Any]:
    """What identifies a ``score`` run: data, predictions, the models scored, the
    categories, the protocol (preset and flag switches) and the missing policy."""
    values = {k: getattr(opts, k, None) for k in FINGERPRINT_OPTIONS}
    values["categories"] = read_categories(values["categories"])
    config = config_of(values)
    config["models"] = list(models)
    return config


def read_models(value: object) -> list[str] | None:
    """``--models`` as one selection: every value split on commas (a folder name may hold
    spaces), each name once, sorted — the order of the default, every model folder
    (:func:`discover_models`) — so the same models in any order are one configuration.
    ``None`` stays ``None``. Raises ``ValueError`` when no name is left."""
    if value is None:
        return None
    words = list(value) if isinstance(value, list | tuple) else [value]
    names = sorted({p.strip() for w in words for p in str(w).split(",") if p.strip()})
    if not names:
        raise ValueError("--models needs at least one model folder name")
    return names


def read_selection(key: str, value: Any) -> Any:
    """A recorded ``score`` option as today's rules read it (``open_run``'s
    ``canonical``): ``categories`` (:func:`read_categories`) and ``models``
    (:func:`read_models`) as selections, as lists; anything else unchanged."""
    if key not in ("categories", "models") or value is None:
        return value
    try:
        return list((read_categories if key == "categories" else read_models)(value) or ())
    except ValueError:
        return value


def _load(opts: argparse.Namespace) -> tuple[Release, list[str], PredictionPlan]:
    try:
        chosen = read_categories(opts.categories)
        release = load_release(opts.data, list(chosen) if chosen else None,
                               check_images=False, keep_samples=False)
        named = read_models(opts.models)
        models = named or discover_models(opts.predictions)
        absent = [m for m in models if not (opts.predictions / m).is_dir()]
        if absent:
            raise FileNotFoundError(f"no folder for model(s) {', '.join(absent)} under "
                                    f"{opts.predictions}")
        check_model_folders(opts.predictions, models, release.categories)
        check_predictions_root(opts.predictions, models)
        from heritage_eval.benchmarks.ancient_bench.predictions_plan import (
            enforce_missing_policy,
            survey_predictions,
        )

        read_all = opts.missing == "error"
        plan = survey_predictions(release, opts.predictions, models, read_all=read_all)
        models, dropped = _without_empty_models(opts.predictions, models, plan,
                                                named is not None)
        if dropped:  # looked over again without them (a rare case: a stray folder)
            plan = survey_predictions(release, opts.predictions, models,
                                      read_all=read_all, notes=False)
            plan.warnings = dropped + plan.warnings
        enforce_missing_policy(plan, opts.missing)
    except (FileNotFoundError, ValueError) as exc:
        from heritage_eval.core.benchmark import UsageError

        raise UsageError(str(exc)) from exc
    return release, models, plan


def _without_empty_models(root: Path, models: list[str], plan: PredictionPlan,
                          named: bool) -> tuple[list[str], list[str]]:
    """The rule for a model folder holding no prediction file for the ground-truth lines
    scored (docs/how-to/score-predictions.md): refused when it was named by ``--models``
    (``named``) or when no model has any; otherwise left out, one warning each. Returns
    the models kept and the warnings. Raises ``ValueError`` naming the folder(s)."""
    from heritage_eval.benchmarks.ancient_bench.predictions_plan import (
        empty_folder_text,
        empty_model_folders,
    )

    empty = empty_model_folders(plan, models)
    if not empty:
        return models, []
    why = "; ".join(empty_folder_text(root, plan, m) for m in empty)
    if named:
        raise ValueError(f"--models names a model folder without predictions: {why}")
    kept = [m for m in models if m not in empty]
    if not kept:
        raise ValueError(f"no model folder under {root} holds a prediction file: {why} — is "
                         "--predictions the folder that holds the model folders?")
    return kept, [f"model folder {empty_folder_text(root, plan, m)}: left out of the "
                  f"results (pass --models to choose the models)" for m in empty]


def score_predictions(opts: argparse.Namespace) -> EvalOutput:
    """Score the predictions named by ``opts`` (the options of :func:`add_score_args`)
    and write ``opts.out``: ``samples.jsonl`` (one envelope per model x sample; none for
    a prediction skipped by ``--missing skip``), ``summary.json``, ``summary.md``.

    Streams: each envelope's line is written as it is scored and only its numbers are
    kept (:class:`~.summary_sink.BodySink`), so memory does not grow with the texts;
    ``EvalOutput.records`` reads ``samples.jsonl`` back when asked for.

    Raises :class:`UsageError` (bad folders, categories; a model folder named by
    ``--models`` without any prediction file, or no model folder with one; under
    ``--missing error`` a prediction file that cannot be used; nothing written),
    :class:`MissingPredictionsError` (``--missing error`` and files absent; nothing
    written), ``RunFolderConflict`` / ``RunFolderBusy`` (``--out`` holds another run /
    is in use). Warnings (a model folder without any prediction file, left out; prediction
    files no ground-truth line names, ignored) are printed to stderr and kept in
    ``summary.json``. ``EvalOutput.status`` is 0.
    """
    release, models, plan = _load(opts)
    from heritage_eval.benchmarks.ancient_bench.score_write import write_scores

    return write_scores(opts, release, models, plan)
