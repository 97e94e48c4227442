"""Temporary folders that say who made them, and removal of those a killed run left.

``export hf`` builds into ``.<out name>.tmp-<owner>-XXXX`` beside ``--out`` and moves a
replaced export aside as ``.<out name>.old-<owner>-XXXX``; the read-back builds into
``.<hash>.tmp-<owner>-XXXX`` in the shared cache. ``<owner>`` is ``<host>-<pid>``
(``host``: 8 hex digits of the SHA-1 of the host name), so a later run can tell a
folder whose process is gone (``kill -9``, power loss) from one still being written.

:func:`remove_stale` removes, among the entries of one folder whose names start with
one of the given prefixes and carry the temp marker, only those that are *stale*: made
on this host by a process that no longer exists, or (any host, and names without an
owner, e.g. from an older version) last modified more than :data:`STALE_AFTER_S` ago.
A folder being written by a live process is never touched; nothing else is ever
touched (names must match ``<prefix><tmp|old>-…`` exactly).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

from heritage_eval.core.atomic_write import pid_alive, process_umask

#: Age after which a temporary entry is removed even when its owner cannot be checked.
STALE_AFTER_S = 3600.0
_OWNER = re.compile(r"^(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-")


def host_tag() -> str:
    """8 hex digits naming this host (SHA-1 of ``socket.gethostname()``)."""
    return hashlib.sha1(socket.gethostname().encode(), usedforsecurity=False).hexdigest()[:8]


def owner_tag() -> str:
    """``<host>-<pid>`` of this process."""
    return f"{host_tag()}-{os.getpid()}"


def make_temp_dir(parent: Path, name: str, kind: str = "tmp") -> Path:
    """A new empty folder ``parent/.<name>.<kind>-<owner>-XXXX`` (``kind``: ``tmp`` or
    ``old``); ``parent`` must exist."""
    made = Path(tempfile.mkdtemp(prefix=f".{name}.{kind}-{owner_tag()}-", dir=str(parent)))
    os.chmod(made, 0o777 & ~process_umask())  # renamed into place: the umask's mode, not 0700
    return made


def owner_name(parent: Path, name: str, kind: str) -> Path:
    """A free path ``parent/.<name>.<kind>-<owner>-XXXX`` (not created), for a rename."""
    while True:
        candidate = parent / f".{name}.{kind}-{owner_tag()}-{os.urandom(4).hex()}"
        if not candidate.exists():
            return candidate


def is_stale(path: Path, tail: str, now: float | None = None) -> bool:
    """Whether the temporary entry ``path`` (``tail``: its name after ``tmp-`` /
    ``old-``) may be removed: its owner on this host is gone, or it is older than
    :data:`STALE_AFTER_S` seconds."""
    try:
        age = (time.time() if now is None else now) - path.lstat().st_mtime
    except FileNotFoundError:
        return False
    m = _OWNER.match(tail)
    if m and m.group("host") == host_tag():
        pid = int(m.group("pid"))
        if pid != os.getpid() and not pid_alive(pid):
            return True
        if pid == os.getpid():
            return False
    return age > STALE_AFTER_S


def temp_pattern(name_regex: str, kinds: tuple[str, ...] = ("tmp", "old")) -> re.Pattern[str]:
    """The names ``.<name>.<kind>-<tail>`` of :func:`make_temp_dir` / :func:`owner_name`
    for a ``name`` matching ``name_regex`` (use :func:`re.escape` for a literal name)."""
    return re.compile(rf"^\.(?:{name_regex})\.(?:{'|'.join(kinds)})-(?P<tail>.+)$")


def remove_stale(parent: Path, pattern: re.Pattern[str]) -> list[Path]:
    """Remove the stale temporary entries of ``parent`` whose names match ``pattern``
    (from :func:`temp_pattern`; see the module docstring). Returns what was removed; a
    missing ``parent`` or an entry that vanishes meanwhile is not an error."""
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if m is None or not is_stale(entry, m.group("tail")):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed
