"""Atomic writing of binary files, with nothing but the standard library (so that an image
worker process importing it stays light; text files with redaction: ``core.store``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | Path, data: bytes, *, suffix: str = ".tmp") -> None:
    """Write ``data`` to ``path`` atomically: a temporary sibling ``.<name>.*<suffix>``
    (``mkstemp``, mode 0600), written through its descriptor, then renamed into place.
    The folder is created only when missing (one ``mkdir`` per folder, not per file: the
    canonicalization of 39,307 images writes this way). Not redacted (binary data), not
    fsynced. Raises ``OSError``; the previous file, if any, is kept."""
    p = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=suffix, dir=p.parent)
    except FileNotFoundError:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=suffix, dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
