"""The response cache's writer thread: group commits with a bounded durability window.

Rule (issue 22 item 6, "acknowledged means durable"): when :meth:`CacheWriter.put`
returns, the row is *acknowledged*. At no moment are more than :data:`MAX_UNCOMMITTED`
(64) acknowledged rows uncommitted, and ``put`` does not return while any uncommitted row
was put more than :data:`WINDOW_S` (50 ms) ago. So a ``kill -9`` loses at most 64
acknowledged rows, all put within the 50 ms before the kill — or, when the writer is held
up (another process holding the database's write lock, a stalled disk), within the 50 ms
before the hold-up began: from then on ``put`` blocks (back-pressure) until the writer
catches up.

How: ``put`` appends the row to a queue (visible to :meth:`CacheWriter.pending` at once)
and wakes the writer thread, which commits everything queued (at most 64 rows) in one
transaction as soon as 64 rows are queued or the oldest queued row is :data:`LINGER_S`
(5 ms) old: under load one commit serves many rows, and in the ordinary case a row is on
disk about 5–10 ms after ``put``. ``put`` then waits, on the caller's thread, only while
the two bounds above would be broken. Commits use ``synchronous=NORMAL`` under WAL: a
commit survives the process being killed (the operating system has the bytes), not a
power cut.
"""

from __future__ import annotations

import collections
import functools
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)

#: Most acknowledged rows that may be uncommitted at once (also the most rows per commit).
MAX_UNCOMMITTED = 64
#: Seconds: ``put`` does not return while a row put longer ago than this is uncommitted.
WINDOW_S = 0.050
#: Seconds the writer waits after the oldest queued row for more rows before committing.
LINGER_S = 0.005
#: Seconds between "still locked" log lines while another connection holds the lock.
LOCK_LOG_S = 30.0

#: One row of the ``responses`` table: (key, model, created epoch seconds, JSON).
Row = tuple[str, str, float, str]


class CacheWriter:
    """Writes rows to the ``responses`` table from one background thread (see the module
    docstring for when a row is on disk). ``connect()`` opens a new connection to the
    database; the thread starts at the first :meth:`put`. Thread-safe."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], name: str) -> None:
        self._connect, self._name = connect, name
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)  # the writer waits on it
        self._done = threading.Condition(self._lock)  # put() / flush() wait on it
        self._queue: collections.deque[tuple[float, Row]] = collections.deque()
        self._writing: list[tuple[float, Row]] = []  # the batch being committed
        self._pending: dict[str, str] = {}  # key -> JSON, put but not yet committed
        self._enqueued = self._committed = 0
        self._closing = False
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def pending(self, key: str) -> str | None:
        """The JSON of ``key`` when put and not yet committed, else ``None``."""
        with self._lock:
            return self._pending.get(key)

    def pending_many(self, keys: Iterable[str]) -> dict[str, str]:
        """:meth:`pending` of several keys: the ones put and not yet committed."""
        with self._lock:
            return {k: d for k in keys if (d := self._pending.get(k)) is not None}

    def put(self, row: Row) -> None:
        """Queue ``row`` and return once it is acknowledged: at most
        :data:`MAX_UNCOMMITTED` rows uncommitted, none older than :data:`WINDOW_S`.
        Raises ``RuntimeError`` after :meth:`close` or when the writer failed."""
        with self._lock:
            self._check()
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name=f"cache-writer:{self._name}")
                self._thread.start()
            self._queue.append((time.monotonic(), row))
            self._pending[row[0]] = row[3]
            self._enqueued += 1
            if len(self._queue) == 1 or len(self._queue) >= MAX_UNCOMMITTED:
                self._work.notify()  # new work, or a full batch: no more lingering
            self._done.wait_for(self._within_window)
            self._check()

    def _within_window(self) -> bool:
        """Under the lock: may an acknowledgement be given now?"""
        if self._error is not None:
            return True
        uncommitted = len(self._queue) + len(self._writing)
        if uncommitted > MAX_UNCOMMITTED:
            return False
        oldest = self._writing[0][0] if self._writing else (
            self._queue[0][0] if self._queue else None)
        return oldest is None or time.monotonic() - oldest < WINDOW_S

    def _check(self) -> None:
        if self._closing:
            raise RuntimeError(f"response cache {self._name} is closed")
        if self._error is not None:
            raise RuntimeError(f"response cache writer failed: {self._error}")

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every row put so far is committed; False on timeout."""
        with self._lock:
            target = self._enqueued
            return self._done.wait_for(
                lambda: self._committed >= target or self._error is not None, timeout_s)

    def close(self) -> None:
        """Commit everything put so far and stop the thread (idempotent)."""
        with self._lock:
            self._closing = True
            self._work.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _next_batch(self) -> list[tuple[float, Row]] | None:
        """Under the lock: wait for rows, linger for more, take a batch (None: stop)."""
        self._work.wait_for(lambda: self._queue or self._closing)
        if not self._queue:
            return None  # closing and nothing left
        while len(self._queue) < MAX_UNCOMMITTED and not self._closing:
            left = self._queue[0][0] + LINGER_S - time.monotonic()
            if left <= 0:
                break
            self._work.wait(left)
        self._writing = [self._queue.popleft()
                         for _ in range(min(MAX_UNCOMMITTED, len(self._queue)))]
        return self._writing

    def _loop(self) -> None:
        conn = self._connect()
        try:
            while True:
                with self._lock:
                    batch = self._next_batch()
                if batch is None:
                    return
                rows = [row for _, row in batch]
                retry_locked(functools.partial(write_rows, conn, rows), "write to the cache")
                with self._lock:
                    for key, _, _, data in rows:
                        if self._pending.get(key) is data:
                            del self._pending[key]
                    self._writing = []
                    self._committed += len(rows)
                    self._done.notify_all()
        except BaseException as exc:  # keep the reason for put() / flush()
            with self._lock:
                self._error = exc
                self._done.notify_all()
            log.error("response cache writer failed: %s", exc)
        finally:
            conn.close()


def write_rows(conn: sqlite3.Connection, rows: list[Row]) -> None:
    """Insert ``rows`` in one transaction; the in-flight claims on their keys
    (:mod:`.cache_claims`) are deleted in the same transaction, so another process never
    sees a key both unanswered and unclaimed once its answer is committed."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("INSERT OR REPLACE INTO responses(key, model, created, response) "
                         "VALUES (?, ?, ?, ?)", rows)
        conn.executemany("DELETE FROM claims WHERE key=?", [(r[0],) for r in rows])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def retry_locked(action: Callable[[], Any], what: str) -> Any:
    """Run ``action()``; while SQLite says the database is locked or busy, wait (0.05 s
    doubling to 1 s) and retry, logging every :data:`LOCK_LOG_S` seconds."""
    start = last_log = time.monotonic()
    wait = 0.05
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_locked(exc):
                raise
            now = time.monotonic()
            if now - last_log >= LOCK_LOG_S:
                log.warning("waiting %.0f s to %s: another process holds its write lock",
                            now - start, what)
                last_log = now
            time.sleep(wait)
            wait = min(1.0, wait * 2)


def is_locked(exc: sqlite3.OperationalError) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" / "busy"."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text
