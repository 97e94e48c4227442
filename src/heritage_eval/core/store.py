"""The run folder: ``samples.jsonl``, ``summary.json``, ``summary.md``, atomic writes.

Every file is written to a temporary sibling and renamed into place (``os.replace``), so
a killed run never leaves a half-written file: either the previous complete version or
the new complete version is on disk, with the mode the user's umask gives
(:func:`heritage_eval.core.atomic_write.file_mode`, not ``mkstemp``'s 0600). Responses
themselves are journalled in the SQLite cache (``cache.sqlite`` in the run folder by
default) as they arrive.

Every text file written here passes through the process-wide secret redactor
(:mod:`heritage_eval.core.redact`) first: API keys, zip passwords and URL credentials
become ``***`` whatever path they took into the text (an error body echoing the
``Authorization`` header, a ``--base-url`` with ``user:KEY@``, the command line).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from heritage_eval.core.atomic_write import file_mode
from heritage_eval.core.redact import redact, redact_lines

#: How a lone surrogate is written: as its ``\\uXXXX`` escape (valid JSON for it).
SURROGATES = "backslashreplace"


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating parent folders.

    A lone surrogate in ``text`` (a file name that is not valid UTF-8, as Python decodes
    it: ``bad\\udcffname``) is written as its escape ``\\udcff`` — in a JSON string the
    same character, read back by ``json.loads`` — instead of failing the write.
    Known secrets in ``text`` are replaced by ``***`` first
    (:func:`heritage_eval.core.redact.redact`). Raises ``OSError`` when the folder
    cannot be written (the previous version of the file, if any, is kept)."""
    text = redact(text)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=str(p.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors=SURROGATES,
                       newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, file_mode())  # mkstemp creates 0600; the umask's mode instead
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_lines(path: str | Path, lines: Iterable[str]) -> None:
    """Write ``lines`` (each without its newline) to ``path`` atomically, as they come,
    so memory stays flat in the number of lines; secrets redacted as in
    :func:`atomic_write_text`. Raises ``OSError`` as it does."""
    with AtomicLineWriter(path) as writer:
        for line in lines:
            writer.write(line)


class AtomicLineWriter:
    """Lines written as they come to a temporary sibling of ``path``, renamed onto
    ``path`` when the ``with`` block ends normally (removed when it raises), so ``path``
    never holds a half file: a killed run leaves the previous version.

    Lines are redacted (:func:`heritage_eval.core.redact.redact_lines`) and written in
    chunks of whole lines (at most :data:`CHUNK_LINES` lines or :data:`CHUNK_CHARS`
    characters) — one redaction pass per chunk, the same text as line by line. Memory:
    one chunk. ``n_lines``: lines written so far. Raises ``OSError`` when the folder
    cannot be written."""

    #: Most lines redacted and written together.
    CHUNK_LINES = 256
    #: A chunk is written once it holds this many characters.
    CHUNK_CHARS = 1 << 18

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.n_lines = 0
        self._chunk: list[str] = []
        self._chars = 0
        self._tmp: str | None = None
        self._fh: Any = None

    def __enter__(self) -> AtomicLineWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                         dir=str(self.path.parent))
        self._fh = os.fdopen(fd, "w", encoding="utf-8", errors=SURROGATES, newline="\n")
        return self

    def write(self, line: str) -> None:
        """Add one line (without its newline)."""
        self._chunk.append(line)
        self.n_lines += 1
        self._chars += len(line)
        if len(self._chunk) >= self.CHUNK_LINES or self._chars >= self.CHUNK_CHARS:
            self._flush_chunk()

    def _flush_chunk(self) -> None:
        if self._chunk:
            self._fh.write(redact_lines(self._chunk))
            self._chunk = []
            self._chars = 0

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        assert self._tmp is not None
        try:
            if exc_type is None:
                self._flush_chunk()
                self._fh.flush()
                os.fsync(self._fh.fileno())
            self._fh.close()
            if exc_type is None:
                os.chmod(self._tmp, file_mode())
                os.replace(self._tmp, self.path)
        except BaseException:
            Path(self._tmp).unlink(missing_ok=True)
            raise
        if exc_type is not None:
            Path(self._tmp).unlink(missing_ok=True)


def to_jsonable(obj: Any) -> Any:
    """Convert pydantic models / paths recursively into plain JSON values."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    return obj


def dumps_line(record: Any) -> str:
    """One JSON line (no ASCII escaping, so Chinese text stays readable)."""
    return json.dumps(to_jsonable(record), ensure_ascii=False, sort_keys=False)


class RunFolder:
    """A run's output folder. Paths: ``samples.jsonl``, ``summary.json``, ``summary.md``,
    ``cache.sqlite``; extra artefacts (plots, tables) via :meth:`path`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, name: str) -> Path:
        return self.root / name

    @property
    def cache_path(self) -> Path:
        return self.root / "cache.sqlite"

    def write_samples(self, records: Iterable[Any], name: str = "samples.jsonl") -> Path:
        """Write all sample records as JSON lines, atomically."""
        text = "".join(dumps_line(r) + "\n" for r in records)
        atomic_write_text(self.root / name, text)
        return self.root / name

    def write_json(self, name: str, data: Any) -> Path:
        """Write ``data`` as indented JSON, atomically."""
        text = json.dumps(to_jsonable(data), ensure_ascii=False, indent=2) + "\n"
        atomic_write_text(self.root / name, text)
        return self.root / name

    def write_text(self, name: str, text: str) -> Path:
        atomic_write_text(self.root / name, text)
        return self.root / name


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file written by :class:`RunFolder` (blank lines skipped)."""
    out = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(json.loads(line))
    return out
