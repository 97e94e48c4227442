"""Append-only SQLite response cache (WAL), so a killed run resumes at no cost.

Key = SHA-256 of the canonical JSON of (backend identity, generation settings, full
request: every message with each image replaced by the SHA-256 of its bytes). Only
successful responses are stored: a failed request is retried on the next run. Each
response is committed as it arrives, so killing a run loses nothing already received.
Idea from lmms-eval's ``caching/response_cache.py``; the code is ours.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from heritage_eval.core.images import file_digest
from heritage_eval.core.types import (
    GenerationSettings,
    ImagePart,
    Message,
    Response,
    stable_hash,
)

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
    """
    msgs = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, ImagePart):
                parts.append({"image_sha256": file_digest(p.path, p.page)})
            elif include_text:
                parts.append({"text": p.text})
        msgs.append({"role": m.role, "content": parts})
    key_obj: dict[str, Any] = {"model": identity, "settings": settings.model_dump(mode="json"),
                               "messages": msgs}
    if payload is not None:
        key_obj["payload_sha256"] = stable_hash(payload, length=64)
    blob = json.dumps(key_obj, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite-backed cache of successful responses; safe to share between threads.

    ``path`` is created with its parent folders. Use as a context manager or call
    :meth:`close`.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False,
                                     isolation_level=None, timeout=30)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)

    def get(self, key: str) -> Response | None:
        """The stored response for ``key`` (marked ``cached=True``), or ``None``."""
        with self._lock:
            row = self._conn.execute("SELECT response FROM responses WHERE key=?",
                                     (key,)).fetchone()
        if row is None:
            return None
        resp = Response.model_validate_json(row[0])
        resp.cached = True
        return resp

    def put(self, key: str, model: str, response: Response) -> None:
        """Store a successful response (errors are ignored: they must be retried)."""
        if not response.ok:
            return
        data = response.model_dump_json(exclude={"cached"})
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses(key, model, created, response) "
                "VALUES (?, ?, ?, ?)", (key, model, time.time(), data))

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
