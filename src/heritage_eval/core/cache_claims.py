"""In-flight claims in the response cache: processes sharing one cache send a request once.

Rule (issue 22 item 6): an identical request (same cache key) in flight in two processes
that share a cache file (``--cache PATH`` of two run folders) is sent once. Before sending,
a process *claims* the key: one row ``(key, owner, host, pid, claimed_at)`` in the
``claims`` table, written in a ``BEGIN IMMEDIATE`` transaction that first checks that the
answer is not stored and that no other owner holds a *fresh* claim. The claim ends when
the answer is committed (the cache writer deletes it in the same transaction as the
answer) or, for a failed request, when the owner releases it. A process that meets a
fresh claim waits, polling the cache every :data:`POLL_MIN_S` doubling to
:data:`POLL_MAX_S`, and takes the stored answer when it appears; if the claim ends without
an answer or goes stale, it claims the key itself and sends.

A claim is *stale* — and anyone may take it over — when it was not refreshed for
:data:`STALE_S` seconds (the owner's keeper thread refreshes its claims every
:data:`REFRESH_S`, so a slow request keeps its claim), or at once when its owner ran on
this host (same host name) and its process id no longer exists. So a process killed by
``kill -9`` blocks nobody on the same machine, and at most :data:`STALE_S` seconds (the
documented stale-claim window) on another machine sharing the file. A re-used process id
looks alive: the claim then expires by age. Hosts are told apart by host name only
(containers with one host name but separate process namespaces fall back to the age rule
only when the id happens to exist).
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from heritage_eval.core.atomic_write import pid_alive
from heritage_eval.core.cache_writer import is_locked, retry_locked

#: Seconds without a refresh after which a claim is stale (a dead owner's last word).
STALE_S = 30.0
#: Seconds between refreshes of this process's claims (well under :data:`STALE_S`).
REFRESH_S = 5.0
#: First and longest interval, seconds, between polls of a key another process claimed.
POLL_MIN_S = 0.02
POLL_MAX_S = 0.5

CLAIMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    claimed_at REAL NOT NULL
)
"""

_HOST = socket.gethostname()


@dataclass(frozen=True)
class ClaimResult:
    """Outcome of :meth:`Claims.claim`: ``state`` is ``"mine"`` (send it), ``"stored"``
    (``data`` is the stored answer's JSON) or ``"theirs"`` (a fresh claim of another
    owner: wait)."""

    state: str
    data: str | None = None


def is_fresh(host: str, pid: int, claimed_at: float, now: float) -> bool:
    """Whether a claim row still holds (see the module docstring for the rule)."""
    if now - claimed_at > STALE_S:
        return False
    return not (host == _HOST and not pid_alive(pid))


class Claims:
    """This cache handle's claims on one database (``connect()`` opens a connection).
    Each handle is its own owner (``owner``), so two handles in one process also wait for
    each other. Thread-safe; :meth:`close` stops the keeper thread."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self.owner = f"{_HOST}:{os.getpid()}:{secrets.token_hex(4)}"
        self._conn = connect()
        self._lock = threading.Lock()  # guards the connection
        self._held: set[str] = set()
        self._releases: list[str] = []
        self._wake = threading.Condition(threading.Lock())  # guards _held, _releases
        self._closing = False
        self._keeper: threading.Thread | None = None

    def claim_nowait(self, key: str) -> ClaimResult | None:
        """:meth:`claim` when the database's write lock is free right now, else ``None``
        (the caller then uses :meth:`claim` off its event loop). About 20 µs."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            self._conn.execute("PRAGMA busy_timeout=0")
            try:
                return self._claim(key)
            except sqlite3.OperationalError as exc:
                if is_locked(exc):
                    return None
                raise
        finally:
            self._lock.release()

    def claim(self, key: str) -> ClaimResult:
        """Claim ``key`` unless its answer is stored or another owner holds a fresh claim
        (blocks while another connection holds the write lock)."""
        def attempt() -> ClaimResult:
            with self._lock:
                self._conn.execute("PRAGMA busy_timeout=2000")
                return self._claim(key)
        result: ClaimResult = retry_locked(attempt, "claim a request")
        return result

    def _claim(self, key: str) -> ClaimResult:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT response FROM responses WHERE key=?", (key,)).fetchone()
            if row is not None:
                conn.execute("COMMIT")
                return ClaimResult("stored", row[0])
            now = time.time()
            held = conn.execute("SELECT owner, host, pid, claimed_at FROM claims WHERE key=?",
                                (key,)).fetchone()
            if held is not None and held[0] != self.owner and is_fresh(held[1], held[2],
                                                                      held[3], now):
                conn.execute("COMMIT")
                return ClaimResult("theirs")
            conn.execute("INSERT OR REPLACE INTO claims(key, owner, host, pid, claimed_at) "
                         "VALUES (?, ?, ?, ?, ?)", (key, self.owner, _HOST, os.getpid(), now))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        with self._wake:
            self._held.add(key)
            self._start_keeper()
        return ClaimResult("mine")

    def _start_keeper(self) -> None:
        """Under ``_wake``: start the keeper thread once."""
        if self._keeper is None and not self._closing:
            self._keeper = threading.Thread(target=self._keep, daemon=True,
                                            name="cache-claims")
            self._keeper.start()

    def held_by_other(self, key: str) -> bool:
        """Whether another owner holds a fresh claim on ``key`` (a read; no lock taken)."""
        with self._lock:
            held = self._conn.execute("SELECT owner, host, pid, claimed_at FROM claims "
                                      "WHERE key=?", (key,)).fetchone()
        return (held is not None and held[0] != self.owner
                and is_fresh(held[1], held[2], held[3], time.time()))

    def answered(self, key: str) -> None:
        """``key``'s answer was handed to the cache writer, which deletes the claim when it
        commits the answer: stop refreshing it."""
        with self._wake:
            self._held.discard(key)

    def release(self, key: str) -> None:
        """Give up the claim on ``key`` (its request failed or was cancelled); the keeper
        thread deletes the row at once. Never blocks."""
        with self._wake:
            self._held.discard(key)
            self._releases.append(key)
            self._start_keeper()
            self._wake.notify()

    def _keep(self) -> None:
        """Keeper thread: delete released claims, refresh held ones every REFRESH_S."""
        last = time.monotonic()
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._releases or self._closing,
                                    max(0.0, last + REFRESH_S - time.monotonic()))
                releases, self._releases = self._releases, []
                due = time.monotonic() - last >= REFRESH_S
                if due:  # a new period either way: with nothing held the wait must not
                    last = time.monotonic()  # drop to 0 and spin (it starved the process)
                refresh = due and bool(self._held)
                closing = self._closing
            try:
                if releases:
                    self._write("DELETE FROM claims WHERE key=? AND owner=?",
                                [(k, self.owner) for k in releases])
                if closing:
                    self._write("DELETE FROM claims WHERE owner=?", [(self.owner,)])
                    return
                if refresh:
                    self._write("UPDATE claims SET claimed_at=? WHERE owner=?",
                                [(time.time(), self.owner)])
            except sqlite3.Error:  # the claims then expire by age
                if closing:
                    return

    def _write(self, sql: str, params: list[tuple[object, ...]]) -> None:
        def attempt() -> None:
            with self._lock:
                self._conn.execute("PRAGMA busy_timeout=2000")
                self._conn.executemany(sql, params)
        retry_locked(attempt, "update request claims")

    def close(self) -> None:
        """Delete this owner's remaining claims and stop the keeper (idempotent)."""
        with self._wake:
            self._closing = True
            self._wake.notify()
            keeper = self._keeper
        if keeper is not None:
            keeper.join()
        with self._lock:
            self._conn.close()
