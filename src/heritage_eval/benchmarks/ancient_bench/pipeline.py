"""The two Ancient-Bench flows: run a model on a release, or score predictions made elsewhere.

Both end in :class:`~heritage_eval.benchmarks.ancient_bench.records.SampleRecord` rows;
``report.py`` turns rows into the tables of ``summary.json`` / ``summary.md``. On the
platform, ``benchmark.AncientBench`` plans with :func:`conversation_for` and scores with
:func:`iter_score_results`; ``score.py`` checks the files with :func:`plan_predictions`
and scores with :func:`iter_scored_predictions` (``predictions_plan.py`` and
``predictions_score.py``, re-exported here). Both build rows one at a time, so a run
can stream them (:func:`score_results` and :func:`score_prediction_folder` are the
list forms).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing

from heritage_eval.benchmarks.ancient_bench.loader import Release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.predictions_plan import (  # noqa: F401
    PredictionPlan,
    all_missing_warnings,
    plan_predictions,
)
from heritage_eval.benchmarks.ancient_bench.predictions_score import (  # noqa: F401
    ScoredPredictions,
    iter_scored_predictions,
    score_prediction_folder,
)
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet, prompt_hash
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord, build_record
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.data_errors import is_data_error
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
    corrupt image names both files; its ``error_kind`` is ``"data"``,
    :mod:`heritage_eval.core.data_errors`). Each row carries the response's details
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
        kind = "data" if any(is_data_error(r) for r in res.responses) else "api"
        yield (build_record(s, model, resp.text, error, flags, prompt_hash=phash,
                            details=resp.details(), error_kind=kind), resp)
