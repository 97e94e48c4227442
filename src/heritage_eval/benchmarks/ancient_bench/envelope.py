"""Ancient-Bench rows <-> the platform's one sample record (``heritage-eval/sample/1``).

Scoring produces the benchmark's own row (:class:`.records.SampleRecord`, one per model x
sample, every number computed there); :func:`to_envelope` puts it into the envelope
that ``samples.jsonl`` holds, and :func:`to_row` reads the row back from an envelope
(losslessly for every field the tables use), so the legacy tables of ``summary.json``
are computed from the records alone.

Mapping::

    id, model, state, error, source        the row's
    groups      {"medium": paper name ("Seal"), "category": release folder ("seals")}
    scores      {"ned_score": fraction, "f1": fraction} (None for an error row)
    turns[0]    prompt: full prompt text (the one sent, or that would be sent);
                images: [the artifact image, path relative to ``image_root``, original
                and sent size] (its place in the release, whatever the working
                directory; a sample that failed to load: no size, its file not read;
                no image name: ``[]``); response: text, finish reason, tokens, latency,
                cached
    image_root  the release root (absolute)
    answer      the extracted answer text (``<res>…</res>`` content, tags dropped)
    reference   the ground-truth transcription (``human_gt``)
    details     every other field of the row: normalized_prediction,
                normalized_ground_truth, n_pred_tokens, n_gt_tokens, insertions,
                deletions, substitutions, st_only_substitutions, hallucination_rate,
                missing_prediction, prompt_hash, image_name, metadata, error_kind
                (``data`` / ``api`` / ``model``, error rows); and prompt_used
                (False when the backend reads only the image, or for predictions made
                elsewhere, whose prompt is unknown), prediction_file (``score``),
                parse_flags (scored rows whose answer has several, differing or
                unclosed ``<res>`` blocks; absent otherwise)
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.ancient_bench.records import RowFacts
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord as Row
from heritage_eval.core.parsing_base import block_flags
from heritage_eval.core.record import (
    ImageRef,
    ResponseRecord,
    SampleRecord,
    TurnRecord,
    image_ref,
    relative_image_path,
)
from heritage_eval.core.types import Response, Sample

BENCHMARK = "ancient-bench"

#: Row fields kept in ``details`` as they are.
DETAIL_FIELDS = ("normalized_prediction", "normalized_ground_truth", "n_pred_tokens",
                 "n_gt_tokens", "insertions", "deletions", "substitutions",
                 "st_only_substitutions", "hallucination_rate", "missing_prediction",
                 "prompt_hash", "metadata", "error_kind")


@functools.lru_cache(maxsize=64)
def _resolved(root: Path) -> str:
    """``str(root.resolve())``, once per release root (not once per record)."""
    return str(root.resolve())


def res_block_flags(raw: str | None) -> tuple[str, ...]:
    """``block_flags(raw, "res")`` (:func:`~heritage_eval.core.parsing_base.block_flags`),
    answered at once for the usual answer — one ``<res>`` with a ``</res>`` after it,
    which has no flag (one closed block, no opening after it) — without the regular
    expression scan (~5 µs a record, issue 23)."""
    if not raw:
        return ()
    start = raw.find("<res>")
    if start == -1:
        return ()
    if raw.find("<res>", start + 1) == -1 and raw.find("</res>", start + 5) != -1:
        return ()
    return block_flags(raw, "res")


def _image(sample: Sample, root: Path | None, sent: list[list[int]] | None) -> list[ImageRef]:
    """``turns[0].images`` of a record: ``[]`` for a sample without an image name, else the
    artifact image, its path relative to ``root`` where it lies under it.

    The path never depends on the working directory: the loader gives every sample with
    an image name its place in the release (``loader.error_image_path`` for a sample
    that failed to load). A sample that failed to load (``load_error``) has its file
    neither looked at nor read — original size ``None`` —, so no file of the working
    directory or outside the release is ever stat'ed or measured for it."""
    if not sample.image:
        return []
    size = sent[0] if sent else None
    if sample.load_error or not os.path.isfile(sample.image):
        # what image_ref gives for a path that is not a regular file (no size), without
        # its header read: ~40 µs a record for the absent images of a ground-truth-only
        # folder (score), against ~3 µs for this test
        return [ImageRef(path=relative_image_path(sample.image, root), page=0, width=None,
                         height=None, sent_width=int(size[0]) if size else None,
                         sent_height=int(size[1]) if size else None, role="artifact")]
    return [image_ref(sample.image, root, role="artifact", sent=size)]


def to_envelope(row: Row, sample: Sample, *, prompt: str, prompt_used: bool,
                root: Path | None, response: Response | ResponseRecord | None,
                extra: dict[str, Any] | None = None) -> SampleRecord:
    """The envelope of one scored row (see the module docstring).

    ``prompt``: the full prompt text; ``prompt_used``: whether the model read it;
    ``root``: the release root image paths are made relative to; ``response``: the
    backend's last response (``run``), a :class:`ResponseRecord` built from a prediction
    file (``score``) or ``None`` (nothing was received); ``extra``: more ``details``.
    """
    resp = (response if isinstance(response, ResponseRecord) or response is None
            else ResponseRecord.from_response(response))
    sent = response.meta.get("sent_image_sizes") if isinstance(response, Response) else None
    turn = TurnRecord(prompt=prompt, images=_image(sample, root, sent), response=resp)
    details: dict[str, Any] = {k: getattr(row, k) for k in DETAIL_FIELDS}
    details["image_name"] = row.image
    details["prompt_used"] = prompt_used
    scored = row.state == "scored"  # (a StrEnum: no .value look-up)
    if scored and (flags := res_block_flags(row.raw_response)):
        details["parse_flags"] = list(flags)  # several / differing / unclosed <res> blocks
    details.update(extra or {})
    return SampleRecord(
        schema="heritage-eval/sample/1", id=row.id, benchmark=BENCHMARK, model=row.model,
        groups={"medium": row.medium, "category": row.category}, state=row.state,
        scores={"ned_score": row.ned_score if scored else None,
                "f1": row.f1 if scored else None},
        turns=[turn], image_root=_resolved(root) if root is not None else None,
        answer=row.extracted_text, reference=row.ground_truth, error=row.error,
        source=row.source, details=details)


def to_row(record: SampleRecord) -> Row:
    """The benchmark's row back from an envelope (inverse of :func:`to_envelope`).

    Raises ``KeyError`` for a record without the ``category`` / ``medium`` groups (not an
    Ancient-Bench record)."""
    turn = record.turns[0] if record.turns else None
    resp = turn.response if turn is not None else None
    sent = None
    if turn is not None and turn.images and turn.images[0].sent_width is not None:
        img = turn.images[0]
        sent = [[int(img.sent_width or 0), int(img.sent_height or 0)]]
    d = record.details
    return Row(
        model=record.model, id=record.id, category=record.groups["category"],
        medium=record.groups["medium"], image=d.get("image_name"), state=record.state,
        ned_score=record.scores.get("ned_score"), f1=record.scores.get("f1"),
        raw_response=resp.text if resp else None, extracted_text=record.answer,
        ground_truth=record.reference, error=record.error, source=record.source,
        latency_s=resp.latency_s if resp else None, attempts=resp.attempts if resp else None,
        cached=resp.cached if resp else None, sent_image_sizes=sent,
        prompt_tokens=resp.prompt_tokens if resp else None,
        completion_tokens=resp.completion_tokens if resp else None,
        finish_reason=resp.finish_reason if resp else None,
        **{k: d[k] for k in DETAIL_FIELDS if k in d and d[k] is not None})


def facts_of(record: SampleRecord) -> RowFacts:
    """``RowFacts.of(to_row(record))`` without building the row: what the summary body
    needs of one envelope. Raises ``KeyError`` as :func:`to_row` does."""
    d = record.details
    return RowFacts(model=record.model, id=record.id, category=record.groups["category"],
                    state=record.state, ned_score=record.scores.get("ned_score"),
                    f1=record.scores.get("f1"), error=record.error,
                    error_kind=d.get("error_kind"), insertions=d.get("insertions"),
                    deletions=d.get("deletions"), substitutions=d.get("substitutions"),
                    st_only_substitutions=d.get("st_only_substitutions"),
                    n_pred_tokens=d.get("n_pred_tokens"), n_gt_tokens=d.get("n_gt_tokens"),
                    metadata=d.get("metadata") or {})
