"""Facts about image files remembered by file identity: content SHA-256 and header size.

A cached re-run of a 10,000-sample run must not read every image again: the request key
needs each image's SHA-256 (``cache.request_key``) and each sample record its original
size (``record.image_ref``). Both are remembered here, keyed by the file's *identity* —
``(path, page, st_mtime_ns, st_size, st_ino)`` from one ``os.stat`` — so an unchanged
file is hashed and its header parsed once, ever; a file that was replaced (new mtime,
size or inode) is read again.

Two layers: a process-wide memory of at most :data:`MEMO_MAX` facts (the least recently
used is forgotten first), and — while a run's response cache is open (:func:`attach`,
called by :class:`~heritage_eval.core.cache.ResponseCache`) — a ``file_facts`` table in
the same SQLite file, written in one transaction per :data:`FLUSH_EVERY` new facts and at
:func:`detach`. A table of at most :data:`BULK_MAX` facts is loaded in one query when
attached (the common case: one query instead of one per image); a larger one is read one
fact at a time, by its primary key, as facts are asked for, so memory stays bounded
whatever the number of images (100,000 images keep 200,000 facts: ~90 MiB if all were
held). A fact lost to a ``kill -9`` is only recomputed on the next run; a stored fact is
never trusted for a file whose identity changed.

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
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

#: New facts written to the attached database in one transaction.
FLUSH_EVERY = 1000
#: Most facts kept in memory (least recently used forgotten first): ~4 MiB. A table
#: loaded whole when attached is kept whole (up to BULK_MAX facts, ~11 MiB).
MEMO_MAX = 8_192
#: Largest ``file_facts`` table loaded whole when attached; a larger one is read per fact.
BULK_MAX = 24_576

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

_memo: OrderedDict[Key, str] = OrderedDict()
_pending: dict[Key, str] = {}  # computed, not yet written to the attached table
_lock = threading.Lock()
_db: sqlite3.Connection | None = None
_db_path: Path | None = None
_loaded = 0  # facts of the attached table loaded whole (memory keeps at least these many)
#: The attached table is read per fact: it was larger than BULK_MAX, or memory has
#: forgotten facts since it was attached.
_db_lazy = False


def attach(db_path: str | Path) -> None:
    """Use the ``file_facts`` table of the SQLite file ``db_path`` (created if missing)
    as the persistent layer, replacing any previously attached file (which is flushed).
    Facts stored there are loaded into memory at once (one query) when there are at most
    :data:`BULK_MAX`, else read one by one as they are asked for. A file that cannot be
    opened or written (read-only, locked) is not attached: facts stay in memory."""
    global _db, _db_path, _db_lazy
    detach()
    try:
        conn = sqlite3.connect(str(db_path), check_same_thread=False, isolation_level=None,
                               timeout=10.0)
    except sqlite3.Error:
        return  # facts then live in memory only
    try:
        conn.execute(_SCHEMA)
        # LIMIT: a table over BULK_MAX is not read whole (one row past it tells)
        rows = conn.execute("SELECT kind, path, page, mtime_ns, size, ino, value "
                            "FROM file_facts LIMIT ?", (BULK_MAX + 1,)).fetchall()
    except sqlite3.Error:  # read-only or locked for long: memory only
        conn.close()
        return
    with _lock:
        lazy = len(rows) > BULK_MAX
        _set_cap_locked(len(rows) if not lazy else 0)
        if not lazy:
            for kind, path, page, mtime, size, ino, value in rows:
                _remember_locked((kind, path, page, mtime, size, ino), value)
        _db, _db_path, _db_lazy = conn, Path(db_path), lazy


def detach(db_path: str | Path | None = None) -> None:
    """Write pending facts and stop using the attached file (only if it is ``db_path``,
    when given). Safe to call when nothing is attached."""
    global _db, _db_path, _db_lazy
    with _lock:
        if _db is None or (db_path is not None and _db_path != Path(db_path)):
            return
        _flush_locked()
        _db.close()
        _db, _db_path, _db_lazy = None, None, False
        _set_cap_locked(0)


def _flush_locked() -> None:
    if _db is None or not _pending:
        _pending.clear()
        return
    rows = [(*k, v) for k, v in _pending.items()]
    _pending.clear()
    try:
        _db.execute("BEGIN")
        _db.executemany("INSERT OR REPLACE INTO file_facts VALUES (?, ?, ?, ?, ?, ?, ?)",
                        rows)
        _db.execute("COMMIT")
    except sqlite3.Error:  # a locked or read-only cache: the facts stay in memory only
        with contextlib.suppress(sqlite3.Error):
            _db.execute("ROLLBACK")


def _storable(path: str) -> bool:
    """Whether ``path`` can be a TEXT key of the table: a file name that is not valid
    UTF-8 (its bytes decoded as lone surrogates, ``os.fsdecode``) cannot — its facts stay
    in memory only, rather than failing the batch they would be written with."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _set_cap_locked(loaded: int) -> None:
    """Memory holds MEMO_MAX facts, or all ``loaded`` facts of a table read whole."""
    global _loaded
    _loaded = loaded


def _remember_locked(key: Key, value: str) -> None:
    global _db_lazy
    _memo[key] = value
    _memo.move_to_end(key)
    while len(_memo) > max(MEMO_MAX, _loaded):
        _memo.popitem(last=False)
        # a forgotten fact is in the attached table (or pending): read it from there
        _db_lazy = _db is not None


def _stored_locked(key: Key) -> str | None:
    """The fact ``key`` from the attached table when it is read per fact, else None."""
    if _db is None or not _db_lazy:
        return None
    if key in _pending:
        return _pending[key]
    if not _storable(key[1]):
        return None
    try:
        row = _db.execute("SELECT value FROM file_facts WHERE kind=? AND path=? AND page=? "
                          "AND mtime_ns=? AND size=? AND ino=?", key).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


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
    with _lock:
        value = _memo.get(key)
        if value is not None:
            _memo.move_to_end(key)
        else:
            value = _stored_locked(key)
            if value is not None:
                _remember_locked(key, value)
    if value is not None:
        return decode(value)
    result = compute()
    text = encode(result)
    with _lock:
        _remember_locked(key, text)
        if _db is not None and _storable(p):
            _pending[key] = text
            if len(_pending) >= FLUSH_EVERY:
                _flush_locked()
    return result


def clear_memory() -> None:
    """Forget every fact held in memory (tests; the attached file is kept)."""
    with _lock:
        _memo.clear()
