"""The writing half of ``score ancient-bench``
(:func:`~heritage_eval.benchmarks.ancient_bench.score.score_predictions`): once the
ground truth and the prediction files are checked and planned, score every (model,
sample), stream the envelopes to ``samples.jsonl`` and write the summary into the run
folder.

Split from :mod:`~heritage_eval.benchmarks.ancient_bench.score` so that the command's
start-up (parsing, checking the folders) imports none of this: the scoring, the
envelope, the engine's summary writers (issue 23).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
from heritage_eval.benchmarks.ancient_bench.envelope import to_envelope
from heritage_eval.benchmarks.ancient_bench.loader import Release
from heritage_eval.benchmarks.ancient_bench.options import flags_from_args
from heritage_eval.benchmarks.ancient_bench.predictions import Prediction
from heritage_eval.benchmarks.ancient_bench.predictions_plan import PredictionPlan
from heritage_eval.benchmarks.ancient_bench.predictions_score import (
    ScoredPredictions,
    iter_scored_predictions,
)
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord as Row
from heritage_eval.benchmarks.ancient_bench.report import render_markdown
from heritage_eval.benchmarks.ancient_bench.score import fingerprint, read_selection
from heritage_eval.benchmarks.ancient_bench.summary_sink import BodySink
from heritage_eval.core.compact_ids import CompactIds
from heritage_eval.core.engine import (
    EvalOutput,
    intervals_markdown,
    merge_summary,
    partial_banner,
    stream_samples,
    write_summary,
)
from heritage_eval.core.failure_counts import OutcomeCounts
from heritage_eval.core.provenance import provenance
from heritage_eval.core.record import ResponseRecord, SampleRecord
from heritage_eval.core.run_tables import write_run_tables
from heritage_eval.core.rundir import Mode, open_run
from heritage_eval.core.store import RunFolder
from heritage_eval.core.summary import EnvelopeAccumulator
from heritage_eval.core.types import Sample, stable_hash


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
    could not be loaded, so no file was looked for). A file that cannot be used keeps
    its reason (``path[:line]: why``) in ``details.prediction_error`` and in the turn's
    ``response.error``; a scored row of a missing or unusable file (``--missing empty``)
    is the model's failure: ``details.model_failure`` is ``"missing_prediction"`` /
    ``"unusable_prediction"`` (counted in the model-failure rate,
    docs/denominators.md)."""
    extra: dict[str, object] = {"prediction_file": str(pred.path) if pred is not None
                                else None}
    if pred is not None and pred.error is not None:
        extra["prediction_error"] = pred.error
    if pred is not None and row.state == "scored" and (pred.missing or pred.error):
        extra["model_failure"] = ("missing_prediction" if pred.missing
                                  else "unusable_prediction")
    return to_envelope(row, sample, prompt="", prompt_used=False, root=root,
                       response=_response(pred), extra=extra)


def with_prediction_files(body: dict[str, Any], unusable: list[dict[str, str]],
                          plan: PredictionPlan) -> dict[str, Any]:
    """``body`` (the summary body) with, in each model's ``results`` entry,
    ``unusable_predictions`` (``{"model", "id", "path", "reason"}`` of each prediction
    file that exists but gave no answer: scored 0 under ``--missing empty``, left out
    under ``skip``) and ``ignored_prediction_files`` (how many ``.json`` files under its
    folder no ground-truth line names). Changes ``body`` in place and returns it."""
    for res in body["results"]:
        model = res["model"]
        res["unusable_predictions"] = [u for u in unusable if u["model"] == model]
        res["ignored_prediction_files"] = plan.ignored[model]
    return body


def counted(record: SampleRecord, counts: OutcomeCounts) -> SampleRecord:
    """``record``, added to ``counts`` (the summary's outcome keys, ``model_failures``
    with the rule ``wrong`` among them)."""
    counts.add(record)
    return record


def write_scores(opts: argparse.Namespace, release: Release, models: list[str],
                 plan: PredictionPlan) -> EvalOutput:
    """Score the planned predictions and write the run folder ``opts.out`` (see
    :func:`~heritage_eval.benchmarks.ancient_bench.score.score_predictions`, which
    checked the folders and made ``plan``). Raises ``RunFolderConflict`` /
    ``RunFolderBusy`` (``--out`` holds another run / is in use)."""
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    protocol, flags = flags_from_args(opts)
    config = fingerprint(opts, models)
    mode: Mode = "overwrite" if getattr(opts, "overwrite", False) else (
        "resume" if getattr(opts, "resume", False) else "refuse")
    bench = AncientBench()
    # the folder never shrinks silently: a re-score (e.g. --resume with fewer
    # --categories or --models) that would not rewrite some row of samples.jsonl is
    # refused; a row is rewritten when its sample and its model are scored again
    # kept compactly, and only by open_run's checks (not for the whole run)
    ids = None if mode == "overwrite" else CompactIds(
        str(s.id) for s in release.iter_samples(notes=False, locate=False))
    with open_run(opts.out, bench.name, config, mode=mode, sample_ids=ids,
                  models=models, canonical=read_selection) as session:
        ids = None
        sink = BodySink(models, release.categories, protocol,
                        warnings=[*release.warnings, *plan.warnings])
        acc = EnvelopeAccumulator(bench.metrics, bench.group_keys)
        unusable: list[dict[str, str]] = []
        rows = iter_scored_predictions(release, opts.predictions, models, flags,
                                       opts.missing, sink.missing, plan.n_pairs, unusable)
        # the model's own failures are scored as wrong answers, as in `run`'s default
        counts = OutcomeCounts(bench.group_keys[0], "wrong")
        stream_samples(session.root / "samples.jsonl",
                       (counted(prediction_envelope(row, s, pred, release.root), counts)
                        for row, s, pred in rows), acc, sink)
        prov = provenance(benchmark=bench.name, models=models, protocol=protocol,
                          missing_policy=opts.missing, data=str(release.root.resolve()),
                          predictions=str(Path(opts.predictions).resolve()),
                          data_counts=plan.counts, config_hash=stable_hash(config),
                          resumed=session.resumed)
        body = with_prediction_files(sink.body(), unusable, plan)
        if "model_failures" not in body:  # the rule recorded, as `run` records it
            body = {**body, **counts.body()}
        summary = merge_summary(acc.envelope(bench.name), body, prov)
        write_summary(RunFolder(session.root), summary,
                      partial_banner(summary) + render_markdown(summary)
                      + intervals_markdown(summary))
        for path in write_run_tables(summary, session.root):
            session.record_file(path.relative_to(session.root).as_posix())
    return EvalOutput(None, summary, Path(opts.out), 0)
