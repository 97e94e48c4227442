"""The benchmark's own row per (model, sample), built from a sample and an answer.

Every number is computed here; ``samples.jsonl`` holds the platform envelope of each row
(``envelope.to_envelope``), and the tables are computed from rows read back from it
(``envelope.to_row``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, Field

from heritage_eval.benchmarks.ancient_bench.analysis import st_only_substitutions
from heritage_eval.benchmarks.ancient_bench.categories import medium_name
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.scoring import EmptyReferenceError, score_pair
from heritage_eval.core.types import Outcome, Sample

#: Fields copied from ``Response.details()`` into each row (null without a response).
RESPONSE_DETAIL_FIELDS = ("latency_s", "attempts", "cached", "sent_image_sizes",
                          "prompt_tokens", "completion_tokens", "finish_reason")


class SampleRecord(BaseModel):
    """One scored (model, sample) pair (its envelope is a line of ``samples.jsonl``).

    ``state`` is ``scored`` or ``error`` (a transcription answer cannot fail to parse; an
    empty answer is scored 0). For ``error`` rows the scores and counts are ``None`` and
    ``error`` gives the reason. ``ned_score`` / ``f1`` are fractions in [0, 1].
    ``insertions`` / ``deletions`` / ``substitutions``: edit operations turning the
    normalised ground truth into the normalised prediction (tokens);
    ``st_only_substitutions``: substitutions whose two characters are equal after OpenCC
    ``t2s``; ``hallucination_rate``: insertions / predicted tokens (our definition, ``None``
    for an empty prediction). ``missing_prediction``: scoring predictions made elsewhere,
    the file was absent and the answer taken as empty. ``error_kind`` (``error`` rows
    only): ``"data"`` (the sample could not be loaded, its image could not be read when
    the request was built, or its ground truth is empty after normalisation), ``"api"``
    (the request failed: transport, HTTP error after the retries, malformed body) or
    ``"model"`` (a model failure left out, see
    :mod:`heritage_eval.benchmarks.outcomes`); the summary counts them apart.

    ``prompt_hash``: fingerprint of the full prompt text sent for this sample (base rules
    plus the medium addition; 16 hex characters), ``None`` when no prompt was sent (a
    backend that reads only the image, such as ``rapidocr``, or ``score``). Not to be
    confused with the provenance's ``prompt_templates_hash``, which fingerprints the
    whole template set.

    Response details (from ``Response.details()`` of the last response received; all
    ``None`` when there was no response, e.g. in ``score`` or for a sample that failed to
    load): ``latency_s`` (seconds), ``attempts`` (tries including retries), ``cached``,
    ``sent_image_sizes`` (``[[width, height], …]`` pixels actually sent, after the size
    cap), ``prompt_tokens`` / ``completion_tokens`` (as reported by the backend),
    ``finish_reason`` (e.g. ``"stop"``, ``"length"``).
    """

    model: str
    id: str
    category: str
    medium: str
    image: str | None
    state: Outcome
    ned_score: float | None = None
    f1: float | None = None
    prompt_hash: str | None = None
    raw_response: str | None = None
    extracted_text: str | None = None
    normalized_prediction: str | None = None
    normalized_ground_truth: str | None = None
    ground_truth: str | None = None
    n_pred_tokens: int | None = None
    n_gt_tokens: int | None = None
    insertions: int | None = None
    deletions: int | None = None
    substitutions: int | None = None
    st_only_substitutions: int | None = None
    hallucination_rate: float | None = None
    missing_prediction: bool = False
    error: str | None = None
    error_kind: str | None = None
    latency_s: float | None = None
    attempts: int | None = None
    cached: bool | None = None
    sent_image_sizes: list[list[int]] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    source: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


def build_record(sample: Sample, model: str, answer: str | None, error: str | None,
                 flags: NormalizationFlags, *, prompt_hash: str | None = None,
                 details: Mapping[str, Any] | None = None,
                 missing_prediction: bool = False, error_kind: str = "api") -> SampleRecord:
    """Score ``answer`` for ``sample`` (or record why it cannot be scored).

    ``error`` (a load, transport or model failure) or ``sample.load_error`` gives an
    ``error`` row; so does a ground truth that is empty after normalisation. Otherwise the
    row is ``scored``; ``answer=None`` counts as an empty answer. ``details``: the
    response's ``Response.details()`` (``None``: no response; those fields stay null).
    ``error_kind``: the kind of a given ``error`` (``"api"`` for a failed request,
    ``"data"`` for an unreadable prediction file); a load error or an empty reference is
    always ``"data"``.
    """
    base: dict[str, Any] = {
        "model": model, "id": sample.id, "category": sample.category,
        "medium": medium_name(sample.category),
        "image": sample.metadata.get("image_name", sample.image),
        "prompt_hash": prompt_hash, "raw_response": answer,
        "ground_truth": sample.target if isinstance(sample.target, str) else None,
        "source": sample.source,
        "metadata": sample.metadata, "missing_prediction": missing_prediction,
        **{k: (details or {}).get(k) for k in RESPONSE_DETAIL_FIELDS},
    }
    reason = sample.load_error or error
    kind = "data" if sample.load_error else error_kind
    if reason is None:
        try:
            s = score_pair(answer, str(sample.target), flags)
        except EmptyReferenceError as exc:
            reason, kind = f"{sample.source}: {exc}", "data"
        else:
            al = s.alignment
            return SampleRecord(
                **base, state=Outcome.SCORED, ned_score=s.ned_score, f1=s.f1,
                extracted_text=s.extracted, normalized_prediction=s.prediction,
                normalized_ground_truth=s.reference, n_pred_tokens=s.n_pred_tokens,
                n_gt_tokens=s.n_ref_tokens, insertions=al.insertions,
                deletions=al.deletions, substitutions=al.substitutions,
                st_only_substitutions=st_only_substitutions(al.substituted),
                hallucination_rate=(al.insertions / s.n_pred_tokens
                                    if s.n_pred_tokens else None))
    return SampleRecord(**base, state=Outcome.ERROR, error=reason, error_kind=kind)


class RowLike(Protocol):
    """What the tables and the analysis read of a row (``report.model_result``,
    ``analysis.analyse``): a full :class:`SampleRecord` or its :class:`RowFacts`."""

    @property
    def model(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def state(self) -> Outcome: ...
    @property
    def ned_score(self) -> float | None: ...
    @property
    def f1(self) -> float | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def error_kind(self) -> str | None: ...
    @property
    def insertions(self) -> int | None: ...
    @property
    def deletions(self) -> int | None: ...
    @property
    def substitutions(self) -> int | None: ...
    @property
    def st_only_substitutions(self) -> int | None: ...
    @property
    def n_pred_tokens(self) -> int | None: ...
    @property
    def n_gt_tokens(self) -> int | None: ...
    @property
    def metadata(self) -> Mapping[str, Any]: ...


#: Metadata fields the analysis breaks down by (``analysis.BREAKDOWN_FIELDS``).
FACT_METADATA = ("script", "period")
_NO_METADATA: Mapping[str, Any] = {}


class RowFacts:
    """The part of a row the summary body needs (:class:`RowLike`), about 0.4 KiB instead
    of the row's texts: scores, counts, state, error reason, and only the ``script`` /
    ``period`` metadata. What a streamed run keeps per (model, sample); built from a row
    (:meth:`of`) or from its envelope (``envelope.facts_of``)."""

    __slots__ = ("category", "deletions", "error", "error_kind", "f1", "id", "insertions",
                 "metadata", "model", "n_gt_tokens", "n_pred_tokens", "ned_score",
                 "st_only_substitutions", "state", "substitutions")

    def __init__(self, *, model: str, id: str, category: str, state: Outcome,
                 ned_score: float | None, f1: float | None, error: str | None,
                 error_kind: str | None, insertions: int | None, deletions: int | None,
                 substitutions: int | None, st_only_substitutions: int | None,
                 n_pred_tokens: int | None, n_gt_tokens: int | None,
                 metadata: Mapping[str, Any]) -> None:
        self.model = sys.intern(model)
        self.id = id
        self.category = sys.intern(category)
        self.state = state
        self.ned_score = ned_score
        self.f1 = f1
        self.error = error
        self.error_kind = error_kind
        self.insertions = insertions
        self.deletions = deletions
        self.substitutions = substitutions
        self.st_only_substitutions = st_only_substitutions
        self.n_pred_tokens = n_pred_tokens
        self.n_gt_tokens = n_gt_tokens
        meta = {k: metadata[k] for k in FACT_METADATA if k in metadata}
        self.metadata: Mapping[str, Any] = meta or _NO_METADATA

    @classmethod
    def of(cls, row: RowLike) -> RowFacts:
        """The facts of a full row."""
        return cls(model=row.model, id=row.id, category=row.category, state=row.state,
                   ned_score=row.ned_score, f1=row.f1, error=row.error,
                   error_kind=row.error_kind, insertions=row.insertions,
                   deletions=row.deletions, substitutions=row.substitutions,
                   st_only_substitutions=row.st_only_substitutions,
                   n_pred_tokens=row.n_pred_tokens, n_gt_tokens=row.n_gt_tokens,
                   metadata=row.metadata)
