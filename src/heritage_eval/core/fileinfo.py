"""Facts about image files remembered by file identity: content SHA-256 and header size.

A cached re-run of a 10,000-sample run must not read every image again: the request key
needs each image's SHA-256 (``cache.request_key``) and each sample record its original
size (``record.image_ref``). Both are remembered here, keyed by the file's *identity* —
``(path, page, st_mtime_ns, st_size, st_ino)`` from one ``os.stat`` — so an unchanged
file is hashed and its header parsed once, ever; a file that was replaced (new mtime,
size or inode) is read again.

Two layers: a process-wide dictionary, and — while a run's response cache is open
(:func:`attach`, called by :class:`~heritage_eval.core.cache.ResponseCache`) — a
``file_facts`` table in the same SQLite file, loaded in one query when attached and
written in one transaction per :data:`FLUSH_EVERY` new facts and at :func:`detach`. A
fact lost to a ``kill -9`` is only recomputed on the next run; a stored fact is never
trusted for a file whose identity changed.

When the meaning of a fact changes, its stored name changes with it
(:data:`KIND_REVISIONS`), so a fact written under the old meaning is never read: the
``size`` fact is the size *as displayed* (after the EXIF orientation, see
``docs/images.md``) and is stored as ``size@shown``; a ``size`` row written before that
(the stored, unturned size) is ignored.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

#: New facts written to the attached database in one transaction.
FLUSH_EVERY = 1000
#: Most facts kept in memory (the dictionary is cleared beyond it).
MEMO_MAX = 200_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS file_facts (
    kind TEXT NOT NULL, path TEXT NOT NULL, page INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, ino INTEGER NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (kind, path, page, mtime_ns, size, ino)
)
"""

#: Stored name of a fact whose meaning changed (old rows keep the old name, unread).
KIND_REVISIONS = {"size": "size@shown"}

Key = tuple[str, str, int, int, int, int]

_memo: dict[Key, str] = {}
_pending: list[tuple[Key, str]] = []
_lock = threading.Lock()
_db: sqlite3.Connection | None = None
_db_path: Path | None = None


def attach(db_path: str | Path) -> None:
    """Use the ``file_facts`` table of the SQLite file ``db_path`` (created if missing)
    as the persistent layer, replacing any previously attached file (which is flushed).
    Facts stored there are loaded into memory at once (one query). A file that cannot
    be opened or written (read-only, locked) is not attached: facts stay in memory."""
    global _db, _db_path
    detach()
    try:
        conn = sqlite3.connect(str(db_path), check_same_thread=False, isolation_level=None,
                               timeout=10.0)
    except sqlite3.Error:
        return  # facts then live in memory only
    try:
        conn.execute(_SCHEMA)
        rows = conn.execute("SELECT kind, path, page, mtime_ns, size, ino, value "
                            "FROM file_facts").fetchall()
    except sqlite3.Error:  # read-only or locked for long: memory only
        conn.close()
        return
    with _lock:
        for kind, path, page, mtime, size, ino, value in rows:
            _memo[(kind, path, page, mtime, size, ino)] = value
        _db, _db_path = conn, Path(db_path)


def detach(db_path: str | Path | None = None) -> None:
    """Write pending facts and stop using the attached file (only if it is ``db_path``,
    when given). Safe to call when nothing is attached."""
    global _db, _db_path
    with _lock:
        if _db is None or (db_path is not None and _db_path != Path(db_path)):
            return
        _flush_locked()
        _db.close()
        _db, _db_path = None, None


def _flush_locked() -> None:
    if _db is None or not _pending:
        _pending.clear()
        return
    rows = [(*k, v) for k, v in _pending]
    _pending.clear()
    try:
        _db.execute("BEGIN")
        _db.executemany("INSERT OR REPLACE INTO file_facts VALUES (?, ?, ?, ?, ?, ?, ?)",
                        rows)
        _db.execute("COMMIT")
    except sqlite3.Error:  # a locked or read-only cache: the facts stay in memory only
        with contextlib.suppress(sqlite3.Error):
            _db.execute("ROLLBACK")


def remembered(kind: str, path: str | Path, page: int, compute: Callable[[], T],
               encode: Callable[[T], str], decode: Callable[[str], T]) -> T:
    """The fact ``kind`` of file ``path`` (page ``page``): remembered if the file's
    identity is unchanged, else ``compute()`` (and remembered, unless it raises).
    A file that cannot be stat'ed is computed every time (``compute`` raises the usual
    error for a missing file). ``kind`` is stored under its revised name
    (:data:`KIND_REVISIONS`)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except (OSError, ValueError):  # ValueError: a NUL byte in the name
        return compute()
    kind = KIND_REVISIONS.get(kind, kind)
    key: Key = (kind, p, page, st.st_mtime_ns, st.st_size, st.st_ino)
    value = _memo.get(key)
    if value is not None:
        return decode(value)
    result = compute()
    text = encode(result)
    with _lock:
        if len(_memo) >= MEMO_MAX:
            _memo.clear()
        _memo[key] = text
        if _db is not None:
            _pending.append((key, text))
            if len(_pending) >= FLUSH_EVERY:
                _flush_locked()
    return result


def clear_memory() -> None:
    """Forget every fact held in memory (tests; the attached file is kept)."""
    with _lock:
        _memo.clear()
