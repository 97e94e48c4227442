"""A first-in first-out queue of sample records held back, flat in memory.

The streamed description run (:mod:`.description_stream`) must hold an empty answer's
record until it knows whether that answer scores 0 or nothing (a metric with no real
score in the domain gives nothing), and every record after it, to keep the report
order. Usually a few records wait; when a metric fails for a whole domain they can be
the rest of that domain. :class:`HeldRecords` keeps the first ``limit`` in memory and
writes the others, as their ``samples.jsonl`` lines, to an anonymous temporary file read
back in order, so memory does not grow with the number held.
"""

from __future__ import annotations

import tempfile
from collections import deque
from typing import IO

from heritage_eval.core.record import SampleRecord

#: Records held in memory before the rest go to the temporary file.
MEMORY_LIMIT = 256


class HeldRecords:
    """FIFO of ``(record, tag)`` pairs: ``tag`` is a small int the caller reads with
    :meth:`head_tag` (kept in memory for every entry, 8 bytes each); records beyond
    ``limit`` in memory go to a temporary file (text, UTF-8) until read back."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = max(1, MEMORY_LIMIT if limit is None else limit)
        self._mem: deque[SampleRecord] = deque()
        self._tags: deque[int] = deque()
        self._file: IO[str] | None = None
        self._on_file = 0  # records written to the file and not yet read back
        self._read = 0  # offset of the next line to read back
        self._end = 0  # offset where the next line is written

    def __len__(self) -> int:
        return len(self._tags)

    def push(self, record: SampleRecord, tag: int) -> None:
        """Append ``record`` with its ``tag``."""
        self._tags.append(tag)
        if not self._on_file and len(self._mem) < self.limit:
            self._mem.append(record)
            return
        if self._file is None:
            self._file = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._file.seek(self._end)
        self._file.write(record.to_json_line() + "\n")
        self._end = self._file.tell()
        self._on_file += 1

    def head_tag(self) -> int | None:
        """The tag of the oldest entry (``None`` when empty)."""
        return self._tags[0] if self._tags else None

    def pop(self) -> SampleRecord:
        """Remove and return the oldest record (raises ``IndexError`` when empty)."""
        self._tags.popleft()
        if self._mem:
            return self._mem.popleft()
        if self._file is None or not self._on_file:
            raise IndexError("no record held")
        self._file.seek(self._read)
        line = self._file.readline()
        self._read = self._file.tell()
        self._on_file -= 1
        if not self._on_file:  # drained: the next records start a fresh file region
            self._file.seek(0)
            self._file.truncate()
            self._read = self._end = 0
        return SampleRecord.model_validate_json(line)

    def close(self) -> None:
        """Drop the temporary file (the records held are lost)."""
        if self._file is not None:
            self._file.close()
            self._file = None
