"""The two Ancient-Bench flows: run a model on a release, or score predictions made elsewhere.

Both end in :class:`~heritage_eval.benchmarks.ancient_bench.records.SampleRecord` rows;
``report.py`` turns rows into the tables of ``summary.json`` / ``summary.md``. On the
platform, ``benchmark.AncientBench`` plans with :func:`conversation_for` and scores with
:func:`iter_score_results`; ``score.py`` checks the files with :func:`plan_predictions`
and scores with :func:`iter_scored_predictions`. Both build rows one at a time, so a run
can stream them (:func:`score_results` and :func:`score_prediction_folder` are the
list forms).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from heritage_eval.benchmarks.ancient_bench.loader import Release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.predictions import (
    MissingPolicy,
    MissingPredictionsError,
    Prediction,
    prediction_file,
    prediction_path,
    read_prediction,
)
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet, prompt_hash
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord, build_record
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.runner import ItemResult, stream_items
from heritage_eval.core.streamed_results import OnePassResults, SamplePlan, in_sample_order
from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    ImagePart,
    Message,
    Response,
    Sample,
    TextPart,
)
from heritage_eval.models.base import ModelBackend


def conversation_for(sample: Sample, prompts: PromptSet) -> Conversation:
    """One user turn: the image, then the base rules plus the medium's addition.

    ``payload`` carries ``sample_id`` and ``category`` for offline engines. The prompt's
    :class:`TextPart` (frozen) is made once per prompt text and shared by the samples
    of a medium (:func:`_text_part`)."""
    return Conversation(
        turns=(Message.user(ImagePart(path=str(sample.image)),
                            _text_part(prompts.prompt(sample.category))),),
        payload={"sample_id": sample.id, "category": sample.category})


#: Prompt text -> its (frozen, shareable) :class:`TextPart`; cleared past 64 texts.
_TEXT_PARTS: dict[str, TextPart] = {}


def _text_part(text: str) -> TextPart:
    """``TextPart(text=text)``, made once per text (a run has one prompt per medium)."""
    part = _TEXT_PARTS.get(text)
    if part is None:
        if len(_TEXT_PARTS) >= 64:
            _TEXT_PARTS.clear()
        part = _TEXT_PARTS[text] = TextPart(text=text)
    return part


def run_model(release: Release, backend: ModelBackend, settings: GenerationSettings,
              cache: ResponseCache | None, prompts: PromptSet, flags: NormalizationFlags,
              concurrency: int | None = None) -> list[SampleRecord]:
    """Send every loadable sample to ``backend`` (cached) and score the answers.

    Returns one row per sample in release order (see :func:`score_results`); each
    sample is planned, sent and scored in turn
    (:func:`heritage_eval.core.runner.stream_items`), so only the rows are kept. The
    platform's ``run ancient-bench`` goes through ``core.engine.execute`` instead; this
    is the same computation without a run folder.
    """
    plan = SamplePlan(release.samples,
                      lambda s: None if s.load_error else conversation_for(s, prompts))
    with closing(stream_items(plan.items(), backend, settings, cache, concurrency,
                              desc="ancient-bench")) as stream:
        results = OnePassResults(in_sample_order(plan, stream))
        return [row for row, _ in iter_score_results(release.samples, backend.spec,
                                                     backend.reads_prompt, prompts, flags,
                                                     results)]


def score_results(samples: Sequence[Sample], model: str, reads_prompt: bool,
                  prompts: PromptSet, flags: NormalizationFlags,
                  results: Mapping[str, ItemResult]
                  ) -> list[tuple[SampleRecord, Response | None]]:
    """:func:`iter_score_results` as a list."""
    return list(iter_score_results(samples, model, reads_prompt, prompts, flags, results))


def iter_score_results(samples: Iterable[Sample], model: str, reads_prompt: bool,
                       prompts: PromptSet, flags: NormalizationFlags,
                       results: Mapping[str, ItemResult]
                       ) -> Iterator[tuple[SampleRecord, Response | None]]:
    """Score the responses received for ``samples``: one ``(row, last response)`` pair
    per sample, in order, built as it is asked for (the response is ``None`` when
    nothing was received).

    Samples with a ``load_error`` were not sent and become ``error`` rows; so do failed
    requests, whose reason is prefixed with the sample's ``conv.jsonl:line`` (e.g. a
    corrupt image names both files). Each row carries the response's details
    (``Response.details()``: latency, attempts, cache hit, image size sent, token usage,
    finish reason) and the full prompt's hash, which is ``None`` when ``reads_prompt`` is
    False (the prompt is not used).
    """
    hashes: dict[str, str] = {}  # the full prompt of a medium is the same for each sample
    for s in samples:
        phash = None
        if reads_prompt:
            phash = hashes.get(s.category)
            if phash is None:
                phash = hashes[s.category] = prompt_hash(prompts.prompt(s.category))
        res = results.get(s.id)
        if s.load_error or res is None or not res.responses:
            reason = None if s.load_error else f"{s.source}: no response received"
            yield (build_record(s, model, None, reason, flags,
                                prompt_hash=None if s.load_error else phash), None)
            continue
        resp = res.responses[-1]
        error = res.error
        if error is not None and not error.startswith(f"{s.source}:"):
            error = f"{s.source}: {error}"
        yield (build_record(s, model, resp.text, error, flags, prompt_hash=phash,
                            details=resp.details()), resp)


@dataclass
class ScoredPredictions:
    """Rows of every model, the (model, sample id, path) of each missing file, and
    ``warnings`` (one per model none of whose prediction files exists).
    ``predictions``: parallel to ``records``, the prediction file read for each row
    (``None`` for a ground-truth line that could not be loaded)."""

    records: list[SampleRecord]
    predictions: list[Prediction | None] = field(default_factory=list)
    missing: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def all_missing_warnings(root: Path, planned: Counter[str], absent: Counter[str]) -> list[str]:
    """One warning per model whose every expected prediction file is absent (``planned``
    / ``absent``: files per model), naming the model and the path pattern looked for."""
    return [f"model {model!r}: none of its {n} prediction file(s) found; expected "
            f"{prediction_path(root, model, '<category>', '<image stem>.json')} — is "
            "--predictions the folder that holds the model folders?"
            for model, n in planned.items() if n and absent[model] == n]


@dataclass
class PredictionPlan:
    """What :func:`plan_predictions` found before scoring: ``warnings`` (one per model
    none of whose prediction files exists) and the absent files."""

    warnings: list[str] = field(default_factory=list)
    absent: list[Path] = field(default_factory=list)
    #: ``{"samples", "load_errors", "per_category"}`` of the ground truth read
    counts: dict[str, Any] = field(default_factory=dict)
    #: (model, sample) pairs looked at
    n_pairs: int = 0


def _planned(samples: Iterable[Sample], root: Path, models: list[str]
             ) -> Iterator[tuple[Sample, str, str | None]]:
    """``(sample, model, prediction path)`` in the official order: category, ground-truth
    line, model; the path is ``None`` for a ground-truth line that could not be loaded."""
    for s in samples:
        name = s.metadata.get("image_name")
        for model in models:
            yield s, model, None if s.load_error or not name else prediction_file(
                root, model, s.category, str(name))


def plan_predictions(release: Release, root: Path, models: list[str],
                     missing: MissingPolicy = "empty") -> PredictionPlan:
    """Look for every prediction file before anything is scored. With ``missing="error"``
    raises :class:`MissingPredictionsError` naming the absent files; a model with no
    prediction file at all gets a warning (a wrong ``root`` is the usual cause)."""
    plan = PredictionPlan()
    n_planned: Counter[str] = Counter()
    n_absent: Counter[str] = Counter()
    per_category: Counter[str] = Counter()
    n_errors = 0

    def counted(samples: Iterable[Sample]) -> Iterator[Sample]:
        nonlocal n_errors
        for s in samples:
            per_category[s.category] += 1
            n_errors += bool(s.load_error)
            yield s

    samples = release.iter_samples(release.warnings, locate=False)  # no image path read
    for _, model, path in _planned(counted(samples), root, models):
        plan.n_pairs += 1
        if path is not None:
            n_planned[model] += 1
            if not os.path.isfile(path):
                plan.absent.append(Path(path))
                n_absent[model] += 1
    if plan.absent and missing == "error":
        raise MissingPredictionsError(plan.absent)
    plan.warnings = all_missing_warnings(root, n_planned, n_absent)
    plan.counts = {"samples": sum(per_category.values()), "load_errors": n_errors,
                   "per_category": dict(per_category)}
    return plan


def iter_scored_predictions(release: Release, root: Path, models: list[str],
                            flags: NormalizationFlags, missing: MissingPolicy,
                            missing_out: list[dict[str, str]], total: int | None = None
                            ) -> Iterator[tuple[SampleRecord, Sample, Prediction | None]]:
    """``(row, sample, prediction file read)`` per scored (model, sample), in the
    official order, built as asked for (the file is ``None`` for a ground-truth line that
    could not be loaded). Each absent file's ``{"model", "id", "path"}`` is appended to
    ``missing_out``; with ``missing="skip"`` it gives no row. A tqdm bar on stderr
    (``total``: the pairs, when known)."""
    samples = release.iter_samples(notes=False)
    for s, model, path in tqdm(_planned(samples, root, models), total=total,
                               desc="scoring", unit="pred", file=sys.stderr,
                               dynamic_ncols=True, disable=None):
        if path is None:  # the ground-truth line itself could not be loaded
            yield build_record(s, model, None, None, flags), s, None
            continue
        pred = read_prediction(path)
        if pred.missing:
            missing_out.append({"model": model, "id": s.id, "path": str(path)})
            if missing == "skip":
                continue
        yield (build_record(s, model, pred.answer, pred.error, flags,
                            missing_prediction=pred.missing, error_kind="data"), s, pred)


def score_prediction_folder(release: Release, root: Path, models: list[str],
                            flags: NormalizationFlags,
                            missing: MissingPolicy = "empty") -> ScoredPredictions:
    """Score predictions in the official layout against ``release``'s ground truth, all
    rows in memory (``score ancient-bench`` streams them instead:
    :func:`plan_predictions`, :func:`iter_scored_predictions`).

    Rows come in the official iteration order: category, ground-truth line, model.
    ``missing`` as in ``predictions.py``; with ``"error"`` raises
    :class:`MissingPredictionsError` before scoring anything. A model with no prediction
    file at all gets a warning in ``warnings`` (a wrong ``root`` is the usual cause).
    """
    plan = plan_predictions(release, root, models, missing)
    out = ScoredPredictions(records=[], warnings=plan.warnings)
    for row, _, pred in iter_scored_predictions(release, root, models, flags, missing,
                                                out.missing, plan.n_pairs):
        out.records.append(row)
        out.predictions.append(pred)
    return out
