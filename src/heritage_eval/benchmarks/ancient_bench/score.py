"""``heritage-eval score ancient-bench``: score predictions made elsewhere.

:func:`score_predictions` is what the CLI handler and the Python API (``he.score``)
call. Predictions lie in the official layout
(``<root>/<model>/<category>/results/<stem>.json``, several models in one root); every
(model, sample) becomes one envelope record, the summary gets the platform envelope (per
model) plus the legacy body (``results``, ``protocol``, ``warnings``), and ``--out`` is
a platform run folder (configuration check, lock, ``--resume`` / ``--overwrite``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
from heritage_eval.benchmarks.ancient_bench.console import print_score_result
from heritage_eval.benchmarks.ancient_bench.envelope import to_envelope
from heritage_eval.benchmarks.ancient_bench.loader import Release, load_release
from heritage_eval.benchmarks.ancient_bench.options import add_score_options, flags_from_args
from heritage_eval.benchmarks.ancient_bench.pipeline import (
    PredictionPlan,
    ScoredPredictions,
    iter_scored_predictions,
    plan_predictions,
)
from heritage_eval.benchmarks.ancient_bench.predictions import (
    MissingPredictionsError,
    Prediction,
    check_model_folders,
    check_predictions_root,
    discover_models,
)
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord as Row
from heritage_eval.benchmarks.ancient_bench.report import render_markdown
from heritage_eval.benchmarks.ancient_bench.summary_sink import BodySink
from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.common import add_run_folder_args
from heritage_eval.core.benchmark import UsageError
from heritage_eval.core.engine import (
    EvalOutput,
    config_of,
    headline_lines,
    intervals_markdown,
    merge_summary,
    partial_banner,
    stream_samples,
    write_summary,
)
from heritage_eval.core.provenance import provenance
from heritage_eval.core.record import ResponseRecord, SampleRecord
from heritage_eval.core.run_tables import write_run_tables
from heritage_eval.core.rundir import Mode, RunFolderBusy, RunFolderConflict, open_run
from heritage_eval.core.store import RunFolder
from heritage_eval.core.summary import EnvelopeAccumulator
from heritage_eval.core.types import Sample, stable_hash

#: Options that make up a ``score`` run folder's configuration fingerprint.
FINGERPRINT_OPTIONS = ("data", "predictions", "models", "categories", "missing",
                       "protocol", "ignore_st", "ignore_punc", "ignore_space",
                       "ignore_case", "collapse_u25a1")


def fingerprint(opts: argparse.Namespace, models: list[str]) -> dict[str, Any]:
    """What identifies a ``score`` run: data, predictions, the models scored, the
    categories, the protocol (preset and flag switches) and the missing policy."""
    config = config_of({k: getattr(opts, k, None) for k in FINGERPRINT_OPTIONS})
    config["models"] = list(models)
    return config


def _response(pred: Prediction | None) -> ResponseRecord | None:
    """The answer a prediction file gave (``None``: no file was read)."""
    if pred is None or pred.missing:
        return None
    return ResponseRecord(text=pred.answer, error=pred.error)


def envelope_records(release: Release, scored: ScoredPredictions) -> list[SampleRecord]:
    """One envelope per scored row (:func:`prediction_envelope`), all in memory."""
    by_id = {s.id: s for s in release.samples}
    return [prediction_envelope(row, by_id[row.id], pred, release.root)
            for row, pred in zip(scored.records, scored.predictions, strict=True)]


def prediction_envelope(row: Row, sample: Sample, pred: Prediction | None,
                        root: Path) -> SampleRecord:
    """The envelope of one scored prediction. The prompt the predictions were made with
    is unknown: the turn's prompt is empty and ``details.prompt_used`` false;
    ``details.prediction_file`` names the file read (``None``: the ground-truth line
    could not be loaded, so no file was looked for)."""
    extra = {"prediction_file": str(pred.path) if pred is not None else None}
    return to_envelope(row, sample, prompt="", prompt_used=False, root=root,
                       response=_response(pred), extra=extra)


def _load(opts: argparse.Namespace) -> tuple[Release, list[str], PredictionPlan]:
    try:
        release = load_release(opts.data, opts.categories, check_images=False,
                               keep_samples=False)
        models = list(opts.models or discover_models(opts.predictions))
        absent = [m for m in models if not (opts.predictions / m).is_dir()]
        if absent:
            raise FileNotFoundError(f"no folder for model(s) {', '.join(absent)} under "
                                    f"{opts.predictions}")
        check_model_folders(opts.predictions, models, release.categories)
        check_predictions_root(opts.predictions, models)
        plan = plan_predictions(release, opts.predictions, models, opts.missing)
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    return release, models, plan


def score_predictions(opts: argparse.Namespace) -> EvalOutput:
    """Score the predictions named by ``opts`` (the options of :func:`add_score_args`)
    and write ``opts.out``: ``samples.jsonl`` (one envelope per model x sample; none for
    a prediction skipped by ``--missing skip``), ``summary.json``, ``summary.md``.

    Streams: each envelope's line is written as it is scored and only its numbers are
    kept (:class:`~.summary_sink.BodySink`), so memory does not grow with the texts;
    ``EvalOutput.records`` reads ``samples.jsonl`` back when asked for.

    Raises :class:`UsageError` (bad folders, categories; nothing written),
    :class:`MissingPredictionsError` (``--missing error`` and files absent; nothing
    written), ``RunFolderConflict`` / ``RunFolderBusy`` (``--out`` holds another run /
    is in use). Warnings (a model without any prediction file) are printed to stderr.
    ``EvalOutput.status`` is 0.
    """
    release, models, plan = _load(opts)
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    protocol, flags = flags_from_args(opts)
    config = fingerprint(opts, models)
    mode: Mode = "overwrite" if getattr(opts, "overwrite", False) else (
        "resume" if getattr(opts, "resume", False) else "refuse")
    bench = AncientBench()
    # the folder never shrinks silently: a re-score (e.g. --resume with fewer
    # --categories) that would not rewrite some row of samples.jsonl is refused
    ids = None if mode == "overwrite" else {
        str(s.id) for s in release.iter_samples(notes=False, locate=False)}
    with open_run(opts.out, bench.name, config, mode=mode, sample_ids=ids) as session:
        sink = BodySink(models, release.categories, protocol,
                        warnings=[*release.warnings, *plan.warnings])
        acc = EnvelopeAccumulator(bench.metrics, bench.group_keys)
        rows = iter_scored_predictions(release, opts.predictions, models, flags,
                                       opts.missing, sink.missing, plan.n_pairs)
        stream_samples(session.root / "samples.jsonl",
                       (prediction_envelope(row, s, pred, release.root)
                        for row, s, pred in rows), acc, sink)
        prov = provenance(benchmark=bench.name, models=models, protocol=protocol,
                          missing_policy=opts.missing, data=str(release.root.resolve()),
                          predictions=str(Path(opts.predictions).resolve()),
                          data_counts=plan.counts, config_hash=stable_hash(config),
                          resumed=session.resumed)
        summary = merge_summary(acc.envelope(bench.name), sink.body(), prov)
        write_summary(RunFolder(session.root), summary,
                      partial_banner(summary) + render_markdown(summary)
                      + intervals_markdown(summary))
        for path in write_run_tables(summary, session.root):
            session.record_file(path.relative_to(session.root).as_posix())
    return EvalOutput(None, summary, Path(opts.out), 0)


def add_score_args(p: argparse.ArgumentParser) -> None:
    """Every option of ``score ancient-bench``, ``--resume`` / ``--overwrite`` included."""
    add_score_options(p)
    add_run_folder_args(p)


def _handler(opts: argparse.Namespace) -> int:
    try:
        out = score_predictions(opts)
    except MissingPredictionsError as exc:
        print(f"error: {exc}\n(use --missing empty or --missing skip to score anyway)",
              file=sys.stderr)
        return 1
    except (UsageError, RunFolderConflict, RunFolderBusy) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_score_result(out.summary, out.out)
    for line in headline_lines(out.summary):
        print(line)
    return out.status


SCORE_COMMAND = Command(
    name="ancient-bench", help="score Ancient-Bench predictions in the official layout",
    add_args=add_score_args, handler=_handler,
    description="Score predictions made elsewhere (<root>/<model>/<category>/results/"
                "<stem>.json) against the ground truth, exactly as the official evaluator "
                "does; one table row per model.")
