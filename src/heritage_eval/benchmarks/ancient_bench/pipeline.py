"""The two Ancient-Bench flows: run a model on a release, or score predictions made elsewhere.

Both end in :class:`~heritage_eval.benchmarks.ancient_bench.records.SampleRecord` rows;
``report.py`` turns rows into ``summary.json`` / ``summary.md``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from heritage_eval.benchmarks.ancient_bench.loader import Release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.predictions import (
    MissingPolicy,
    MissingPredictionsError,
    prediction_path,
    read_prediction,
)
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet, prompt_hash
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord, build_record
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    ImagePart,
    Message,
    Sample,
)
from heritage_eval.models.base import ModelBackend


def conversation_for(sample: Sample, prompts: PromptSet) -> Conversation:
    """One user turn: the image, then the base rules plus the medium's addition.

    ``payload`` carries ``sample_id`` and ``category`` for offline engines."""
    return Conversation(
        turns=(Message.user(ImagePart(path=str(sample.image)), prompts.prompt(sample.category)),),
        payload={"sample_id": sample.id, "category": sample.category})


def run_model(release: Release, backend: ModelBackend, settings: GenerationSettings,
              cache: ResponseCache | None, prompts: PromptSet, flags: NormalizationFlags,
              concurrency: int | None = None) -> list[SampleRecord]:
    """Send every loadable sample to ``backend`` (cached) and score the answers.

    Returns one row per sample in release order. Samples with a ``load_error`` are not
    sent and become ``error`` rows; so do failed requests (the reason is kept).
    """
    todo = [s for s in release.samples if not s.load_error]
    items = [RunItem(id=s.id, conversation=conversation_for(s, prompts)) for s in todo]
    results = run_items(items, backend, settings, cache, concurrency, desc="ancient-bench")
    rows: list[SampleRecord] = []
    for s in release.samples:
        phash = prompt_hash(prompts.prompt(s.category))
        res = results.get(s.id)
        if s.load_error or res is None or not res.responses:
            reason = None if s.load_error else "no response received"
            rows.append(build_record(s, backend.spec, None, reason, flags, prompt_hash=phash))
            continue
        resp = res.responses[-1]
        rows.append(build_record(s, backend.spec, resp.text, res.error, flags,
                                 prompt_hash=phash, latency_s=resp.latency_s,
                                 cached=resp.cached))
    return rows


@dataclass
class ScoredPredictions:
    """Rows of every model, plus the (model, sample id, path) of each missing file."""

    records: list[SampleRecord]
    missing: list[dict[str, str]] = field(default_factory=list)


def score_prediction_folder(release: Release, root: Path, models: list[str],
                            flags: NormalizationFlags,
                            missing: MissingPolicy = "empty") -> ScoredPredictions:
    """Score predictions in the official layout against ``release``'s ground truth.

    Rows come in the official iteration order: category, ground-truth line, model.
    ``missing`` as in ``predictions.py``; with ``"error"`` raises
    :class:`MissingPredictionsError` before scoring anything.
    """
    plan: list[tuple[Sample, str, Path | None]] = []
    absent: list[Path] = []
    for s in release.samples:
        name = s.metadata.get("image_name")
        for model in models:
            path = None if s.load_error or not name else prediction_path(
                root, model, s.category, str(name))
            if path is not None and not path.is_file():
                absent.append(path)
            plan.append((s, model, path))
    if absent and missing == "error":
        raise MissingPredictionsError(absent)
    out = ScoredPredictions(records=[])
    for s, model, path in tqdm(plan, desc="scoring", unit="pred", file=sys.stderr,
                               dynamic_ncols=True, disable=None):
        if path is None:  # the ground-truth line itself could not be loaded
            out.records.append(build_record(s, model, None, None, flags))
            continue
        pred = read_prediction(path)
        if pred.missing:
            out.missing.append({"model": model, "id": s.id, "path": str(path)})
            if missing == "skip":
                continue
        out.records.append(build_record(s, model, pred.answer, pred.error, flags,
                                        missing_prediction=pred.missing))
    return out
