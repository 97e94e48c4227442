"""Atomic writing of binary files, with nothing but the standard library (so that an image
worker process importing it stays light; text files with redaction: ``core.store``).

Temporary files and their clean-up (the rule; docs/reference/run-folder.md, "What protects
a run folder"):

- an atomic write goes to a sibling named ``.<name>.tmp-<host>-<pid>-<random><suffix>``
  (``<host>``: 8 hex digits of the SHA-1 of the host name, ``<pid>``: the writing
  process), then is renamed onto ``<name>``;
- :func:`remove_stale_temps` removes, inside one output folder, only files whose names
  match that pattern (for one ``suffix``) and that are *stale*: written on this host by a
  process that no longer exists, or last modified more than :data:`STALE_AFTER_S` ago
  (any host). A file being written by a live process is never touched; no other name is
  ever touched. Names of the earlier form ``.<name>.<8 random><suffix>`` (no owner) are
  removed by the age rule only.

File modes: every file written here (and by :mod:`heritage_eval.core.store`) gets
``0o666 & ~umask`` (:func:`file_mode`), as ``open()`` would give, not ``mkstemp``'s 0600.
The umask is read once per process (:func:`process_umask`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import socket
import tempfile
import threading
import time
from pathlib import Path

#: Age (seconds) after which a temporary file is stale whatever its owner.
STALE_AFTER_S = 3600.0
#: The marker between a file's name and its owner in a temporary name.
TEMP_MARK = ".tmp-"

_UMASK_LOCK = threading.Lock()
_UMASK: int | None = None


def process_umask() -> int:
    """This process's umask (e.g. ``0o022``), read once: from ``/proc/self/status`` where
    Linux offers it (no change of state), else by setting and restoring it under a lock
    (the only portable way; the lock keeps two threads from seeing the 0 in between)."""
    global _UMASK
    with _UMASK_LOCK:
        if _UMASK is None:
            _UMASK = _read_umask()
        return _UMASK


def _read_umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode of a new file under this process's umask: ``0o666 & ~umask``."""
    return 0o666 & ~process_umask()


def host_tag() -> str:
    """8 hex digits naming this host (SHA-1 of ``socket.gethostname()``)."""
    return _host_tag(socket.gethostname())


@functools.lru_cache(maxsize=4)
def _host_tag(name: str) -> str:
    """:func:`host_tag` of host ``name`` (hashed once per name: a batch writes thousands
    of files)."""
    return hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:8]


def temp_prefix(name: str) -> str:
    """The start of a temporary name for ``name``: ``.<name>.tmp-<host>-<pid>-``."""
    return f".{name}{TEMP_MARK}{host_tag()}-{os.getpid()}-"


def atomic_write_bytes(path: str | Path, data: bytes, *, suffix: str = ".tmp") -> None:
    """Write ``data`` to ``path`` atomically: a temporary sibling
    ``.<name>.tmp-<host>-<pid>-XXXX<suffix>`` (module docstring), given the mode
    :func:`file_mode`, written through its descriptor, then renamed into place. The
    folder is created only when missing (one ``mkdir`` per folder, not per file: the
    canonicalization of 39,307 images writes this way). Not redacted (binary data), not
    fsynced. Raises ``OSError``; the previous file, if any, is kept."""
    p = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(p.name), suffix=suffix, dir=p.parent)
    except FileNotFoundError:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(p.name), suffix=suffix, dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), file_mode())
            fh.write(data)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def temp_pattern(suffix: str) -> re.Pattern[str]:
    """Names of the temporary files of :func:`atomic_write_bytes` with ``suffix`` (groups
    ``host`` and ``pid``), and of the earlier owner-less form (both groups ``None``)."""
    end = re.escape(suffix)
    return re.compile(rf"^\..+?(?:\.tmp-(?P<host>[0-9a-f]{{8}})-(?P<pid>\d+)-[a-z0-9_]+"
                      rf"|\.[a-z0-9_]{{8}}){end}$")


def pid_alive(pid: int) -> bool:
    """Whether a process with id ``pid`` exists on this host (signal 0 probe)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return True  # cannot tell: let the age rule decide
    return True


def is_stale(path: Path, match: re.Match[str], now: float | None = None) -> bool:
    """Whether the temporary file ``path`` (``match``: its name under
    :func:`temp_pattern`) may be removed (module docstring)."""
    try:
        age = (time.time() if now is None else now) - path.lstat().st_mtime
    except FileNotFoundError:
        return False
    host, pid = match.group("host"), match.group("pid")
    if host == host_tag() and pid is not None:
        if int(pid) == os.getpid():
            return False
        if not pid_alive(int(pid)):
            return True
    return age > STALE_AFTER_S


def remove_stale_temps(folder: str | Path, suffix: str, *, recursive: bool = True
                       ) -> list[Path]:
    """Remove the stale temporary files of :func:`atomic_write_bytes` (``suffix``) inside
    ``folder`` (and its sub-folders when ``recursive``; symbolic links to folders are not
    followed, and only regular files are removed). Returns the removed paths; a missing
    ``folder`` or a file that vanishes meanwhile is not an error."""
    pattern = temp_pattern(suffix)
    removed: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        if not recursive:
            dirnames[:] = []
        for name in filenames:
            if not name.startswith(".") or (m := pattern.match(name)) is None:
                continue
            path = Path(dirpath) / name
            if path.is_symlink() or not is_stale(path, m):
                continue
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
    return removed
