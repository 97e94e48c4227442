"""Append-only SQLite response cache (WAL), so a killed run resumes at no cost.

Key = SHA-256 of the canonical JSON of (backend identity, generation settings, full
request: every message with each image replaced by the SHA-256 of its bytes). Only
successful responses are stored: a failed request is retried on the next run.
Idea from lmms-eval's ``caching/response_cache.py``; the code is ours.

Writes are off the caller's path (:mod:`.cache_writer`): :meth:`ResponseCache.put` queues
the response for a writer thread that group-commits it, and the response is visible to
:meth:`~ResponseCache.get` at once. Durable when: at most 64 responses whose ``put`` has
returned are uncommitted at any moment, and ``put`` does not return while one put more
than 50 ms ago is uncommitted (it waits: back-pressure) — so a ``kill -9`` loses at most
64 responses, all received within the 50 ms before the kill (or, while another process
holds the write lock, before that hold began); ordinarily a response is committed 5–10 ms
after ``put``. (We chose this over a synchronous commit per response, which costs the
event loop ~0.1 ms each.) :meth:`~ResponseCache.flush` waits until everything put so far
is committed; ``close()`` flushes. When another connection holds the write lock ("database
is locked"), the writer waits and retries for as long as it takes, logging every
:data:`~.cache_writer.LOCK_LOG_S` seconds; reads still work under WAL.

Processes sharing one cache file claim a request before sending it (:mod:`.cache_claims`,
the ``claims`` table), so an identical request in flight in two of them is sent once.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heritage_eval.core import fileinfo
from heritage_eval.core.cache_claims import CLAIMS_SCHEMA, STALE_S, Claims
from heritage_eval.core.cache_writer import CacheWriter, retry_locked
from heritage_eval.core.images import file_digest
from heritage_eval.core.redact import redact
from heritage_eval.core.types import (
    GenerationSettings,
    ImagePart,
    Message,
    Response,
    stable_hash,
)

log = logging.getLogger(__name__)

#: Most keys looked up in one query by :meth:`ResponseCache.get_many` (SQLite allows
#: 32,766 bound parameters since 3.32, 999 before).
READ_BATCH = 500
#: SQLite busy timeout of each attempt, seconds; the writer retries after it.
BUSY_TIMEOUT_S = 2.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    response TEXT NOT NULL
)
"""


def request_key(identity: dict[str, Any], settings: GenerationSettings,
                messages: list[Message], include_text: bool = True,
                payload: dict[str, Any] | None = None) -> str:
    """64-hex fingerprint of one request. Raises ``ImageLoadError`` for unreadable images.

    ``include_text=False`` leaves text parts out, for backends that never read prompts
    (OCR engines): editing a prompt then does not re-run them. ``payload`` is added for
    backends that answer from the structured payload (offline baselines).

    Recipe (fixed: old caches must keep hitting): SHA-256 of the UTF-8 bytes of
    ``json.dumps(KEY, sort_keys=True, ensure_ascii=False)`` where ``KEY`` is
    ``{"model": identity, "settings": settings.model_dump(mode="json"), "messages":
    [{"role": …, "content": [{"image_sha256": …} | {"text": …}, …]}, …]}`` plus
    ``"payload_sha256": stable_hash(payload, length=64)`` when a payload is given. The
    text is built here piece by piece (the same characters ``json.dumps`` writes), with
    each prompt text encoded once per process rather than once per request; a run's
    many keys share the encoded identity and settings (:class:`KeyPieces`).
    """
    return KeyPieces(identity, settings).key(messages, include_text, payload)


class KeyPieces:
    """The parts of :func:`request_key` that are the same for every request of a run
    (the backend identity and the settings), JSON-encoded once; :meth:`key` adds the
    messages and payload of one request. ``KeyPieces(i, s).key(m, t, p)`` equals
    ``request_key(i, s, m, t, p)`` exactly."""

    __slots__ = ("_model", "_settings")

    def __init__(self, identity: dict[str, Any], settings: GenerationSettings) -> None:
        self._model = ('], "model": ' + _json(identity)).encode("utf-8")
        self._settings = (', "settings": ' + _json(settings.model_dump(mode="json"))
                          + "}").encode("utf-8")

    def key(self, messages: list[Message], include_text: bool = True,
            payload: dict[str, Any] | None = None) -> str:
        """The 64-hex key of one request (see :func:`request_key`); raises
        ``ImageLoadError`` for an unreadable image. The UTF-8 pieces are fed to SHA-256
        one after another (the digest of their concatenation), each prompt text's piece
        encoded once per process."""
        h = hashlib.sha256(b'{"messages": [')
        for i, m in enumerate(messages):
            h.update(b'{"content": [' if i == 0 else b', {"content": [')
            first = True
            for p in m.content:
                if isinstance(p, ImagePart):
                    piece = b'{"image_sha256": ' + _hex_json(_digest(p.path, p.page)) + b"}"
                elif include_text:
                    piece = _text_piece(p.text)
                else:
                    continue
                h.update(piece if first else b", " + piece)
                first = False
            role = _ROLE_JSON.get(m.role) or _json(m.role).encode("utf-8")
            h.update(b'], "role": ' + role + b"}")
        h.update(self._model)
        if payload is not None:
            h.update(b', "payload_sha256": ' + _hex_json(stable_hash(payload, length=64)))
        h.update(self._settings)
        return h.hexdigest()


#: ``json.dumps(role)`` of the three roles, UTF-8.
_ROLE_JSON = {r: f'"{r}"'.encode() for r in ("system", "user", "assistant")}


def _hex_json(value: str) -> bytes:
    """``json.dumps(value)`` as UTF-8, for a hex digest without building the encoder
    (anything that is not plain ASCII letters and digits goes through ``json``)."""
    if value.isascii() and value.isalnum():
        return b'"' + value.encode("ascii") + b'"'
    return _json(value).encode("utf-8")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


#: Prompt texts already encoded as their key piece (text -> UTF-8 of ``{"text": …}``);
#: cleared past :data:`_TEXT_JSON_MAX` entries.
_TEXT_JSON: dict[str, bytes] = {}
_TEXT_JSON_MAX = 512


def _text_piece(text: str) -> bytes:
    """``'{"text": ' + json.dumps(text, ensure_ascii=False) + "}"`` as UTF-8,
    remembered: every sample of a medium sends the same prompt text."""
    encoded = _TEXT_JSON.get(text)
    if encoded is None:
        encoded = ('{"text": ' + json.dumps(text, ensure_ascii=False) + "}").encode("utf-8")
        if len(_TEXT_JSON) >= _TEXT_JSON_MAX:
            _TEXT_JSON.clear()
        _TEXT_JSON[text] = encoded
    return encoded


#: Open caches of this process (a new handle on the same file flushes the others first).
_INSTANCES: weakref.WeakSet[ResponseCache] = weakref.WeakSet()
#: How many response caches this process has opened (:func:`caches_opened`).
_OPENED = [0]


def caches_opened() -> int:
    """How many :class:`ResponseCache` this process has opened so far (0: no response
    was kept; what an interrupted command tells the user)."""
    return _OPENED[0]


def _digest(path: str, page: int) -> str:
    """:func:`file_digest`, remembered by file identity (:mod:`.fileinfo`): an unchanged
    image is hashed once — across runs while the run's cache is open — not once per
    request. Raises ``ImageLoadError``."""
    return fileinfo.remembered("sha256", path, page, lambda: file_digest(path, page),
                               str, str)


class ResponseCache:
    """SQLite-backed cache of successful responses; safe to share between threads and,
    through one file, between processes.

    ``path`` is created with its parent folders. Use as a context manager or call
    :meth:`close` (idempotent; also run at interpreter exit). See the module docstring
    for when a response reaches the disk. ``claims``: this handle's in-flight claims
    (:class:`~.cache_claims.Claims`), used by the runner to send a request once.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # guards the reader connection
        self._closed = False
        self.resolved = self.path.resolve()
        for other in list(_INSTANCES):  # another handle on this file in this process:
            if other.resolved == self.resolved:  # make its queued writes visible
                other.flush()
        _INSTANCES.add(self)
        _OPENED[0] += 1
        self._conn = retry_locked(lambda: _open(self.path, wal=True), "open the cache")
        retry_locked(lambda: self._conn.executescript(_SCHEMA + ";" + CLAIMS_SCHEMA),
                     "create the cache tables")
        old = time.time() - 10 * STALE_S  # claims of runs long gone
        if self._conn.execute("SELECT 1 FROM claims WHERE claimed_at < ? LIMIT 1",
                              (old,)).fetchone():
            retry_locked(lambda: self._conn.execute(
                "DELETE FROM claims WHERE claimed_at < ?", (old,)), "clear old claims")
        self._writer = CacheWriter(lambda: _open(self.path, wal=False), self.path.name)
        self.claims = Claims(lambda: _open(self.path, wal=False))
        fileinfo.attach(self.path)  # image hashes and sizes, remembered by file identity
        atexit.register(_close_ref, weakref.ref(self))

    def get(self, key: str) -> Response | None:
        """The stored response for ``key`` (marked ``cached=True``), or ``None``."""
        data = self._writer.pending(key)
        if data is None:
            with self._lock:
                row = self._conn.execute("SELECT response FROM responses WHERE key=?",
                                         (key,)).fetchone()
            if row is None:
                return None
            data = row[0]
        return _cached(data)

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]:
        """The stored responses of ``keys`` (each marked ``cached=True``), by key; keys
        not stored are absent. One ``SELECT … WHERE key IN (…)`` per
        :data:`READ_BATCH` keys instead of one query per key (a cached re-run of
        10,000 samples reads its answers in a few dozen queries)."""
        found = self._writer.pending_many(keys)
        todo = list(dict.fromkeys(k for k in keys if k not in found))
        for start in range(0, len(todo), READ_BATCH):
            part = todo[start:start + READ_BATCH]
            sql = ("SELECT key, response FROM responses WHERE key IN ("
                   + ",".join("?" * len(part)) + ")")
            with self._lock:
                found.update(self._conn.execute(sql, part).fetchall())
        return {key: _cached(data) for key, data in found.items()}

    def put(self, key: str, model: str, response: Response) -> None:
        """Store a successful response (errors are ignored: they must be retried).

        Returns once the response is acknowledged: visible to :meth:`get` and within the
        durability window of the module docstring (so it may wait a few milliseconds
        while the writer catches up). Raises ``RuntimeError`` after :meth:`close` or when
        the writer failed."""
        if not response.ok:
            return
        data = redact(response.model_dump_json(exclude={"cached"}))  # no secret on disk
        self._writer.put((key, model, time.time(), data))

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every response put so far is committed; False on timeout."""
        return self._writer.flush(timeout_s)

    def __len__(self) -> int:
        """Stored responses (after committing what is queued)."""
        self.flush()
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Commit everything put so far, drop this handle's claims, stop its threads and
        close the database."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._writer.close()
        self.claims.close()
        with self._lock:
            self._conn.close()
        fileinfo.detach(self.path)

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cached(data: str) -> Response:
    resp = Response.model_validate_json(data)
    resp.cached = True
    return resp


def _open(path: Path, wal: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None,
                           timeout=BUSY_TIMEOUT_S)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _close_ref(ref: weakref.ref[ResponseCache]) -> None:
    cache = ref()
    if cache is not None:
        cache.close()
