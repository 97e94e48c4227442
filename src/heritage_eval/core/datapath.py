"""One rule for every path that user data names: stay inside the data root, be a regular file.

Every file the toolkit reads because a data file, an export or a command-line argument
names it goes through this module (the rule is written down in ``docs/paths.md``):

1. **Confinement** — :func:`resolve_data_path` joins a reference to its base folder and
   refuses it (:class:`~heritage_eval.core.paths.PathOutsideRoot`) when the fully resolved
   result — ``..`` collapsed, *every* symbolic link followed, also for a missing file —
   leaves the data root. ``../x``, ``/abs/x`` and a link whose target lies outside are
   refused alike; ``--allow-outside-paths`` (:func:`heritage_eval.core.paths.outside_allowed`)
   switches this part off. A top-level argument (``--data``, ``--questions``,
   ``--predictions``) is chosen by the user and is not confined.
2. **Kind** — :func:`check_regular_file` refuses anything that is not a regular file
   (a FIFO, a socket, a character or block device, a folder) with
   :class:`NotARegularFile`, naming the path and what it is. It looks with ``os.stat``
   only: a FIFO is never opened (opening one for reading blocks until a writer comes).
   This part holds whatever the allowance: ``--allow-outside-paths`` never lets a FIFO in.
3. **Opening** — :func:`open_regular` opens with ``O_NONBLOCK`` and checks the open
   descriptor with ``fstat`` (so a file swapped for a FIFO between the check and the
   open is still refused, and the open itself cannot block), then reads normally.

:class:`NotARegularFile` is an ``OSError`` (``strerror`` says what the path is), so the
loaders' existing "cannot read this file" handling turns it into one error row naming the
file, or into a usage error for a top-level argument.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Literal, overload

from heritage_eval.core.paths import joined_inside

#: ``O_NONBLOCK`` where the platform has it (not on Windows, which has no FIFOs to fear).
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def file_kind(mode: int) -> str:
    """What an ``st_mode`` is, in words: ``"regular file"``, ``"folder"``,
    ``"FIFO (named pipe)"``, ``"socket"``, ``"character device"``, ``"block device"``,
    ``"symbolic link"`` (only from ``lstat``), else ``"special file"``."""
    for test, name in ((stat.S_ISREG, "regular file"), (stat.S_ISDIR, "folder"),
                       (stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISLNK, "symbolic link")):
        if test(mode):
            return name
    return "special file"


class NotARegularFile(OSError):
    """A path that data names exists but is not a regular file (FIFO, socket, device,
    folder). ``path``: the path as given; ``kind``: :func:`file_kind` of it. An
    ``OSError`` (errno ``EISDIR`` for a folder, else ``EINVAL``) whose ``strerror`` is
    ``"it is a <kind>, not a regular file"``; ``str()`` is ``"<path>: it is a …"``."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        self.path = os.fspath(path)
        self.kind = kind
        code = errno.EISDIR if kind == "folder" else errno.EINVAL
        super().__init__(code, f"it is a {kind}, not a regular file", self.path)

    def __str__(self) -> str:
        return f"{self.path}: {self.strerror}"


def check_regular_file(path: str | os.PathLike[str]) -> os.stat_result:
    """``os.stat(path)`` (links followed) when ``path`` is a regular file.

    Raises ``FileNotFoundError`` (or another ``OSError`` from ``stat``, e.g. a link loop)
    when it cannot be looked at, and :class:`NotARegularFile` when it is anything else
    than a regular file. Never opens the path."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotARegularFile(path, file_kind(st.st_mode))
    return st


def regular_file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be read as a data file — ``"image file not found"``-style text:
    ``"file not found"``, ``"it is a FIFO (named pipe), not a regular file"``, the
    ``stat`` error — or ``None`` for a regular file. Never raises, never opens."""
    try:
        check_regular_file(path)
    except FileNotFoundError:
        return "file not found"
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


@overload
def open_regular(path: str | os.PathLike[str], mode: Literal["rb"] = "rb", *,
                 encoding: None = None, errors: None = None, newline: None = None
                 ) -> io.BufferedReader: ...
@overload
def open_regular(path: str | os.PathLike[str], mode: Literal["r"], *,
                 encoding: str = "utf-8", errors: str | None = None,
                 newline: str | None = None) -> io.TextIOWrapper: ...
def open_regular(path: str | os.PathLike[str], mode: str = "rb", *,
                 encoding: str | None = None, errors: str | None = None,
                 newline: str | None = None) -> IO[bytes] | IO[str]:
    """Open the regular file ``path`` for reading (``mode`` ``"rb"`` or ``"r"``).

    The path is first looked at with :func:`check_regular_file`; then the descriptor
    is opened with ``O_NONBLOCK`` (an ``open`` of a FIFO returns at once
    instead of waiting for a writer) and checked with ``fstat``; anything but a regular
    file is closed again and refused with :class:`NotARegularFile`. ``O_NONBLOCK`` has
    no effect on reads of a regular file. Other failures raise as ``open`` does."""
    if mode not in ("rb", "r"):
        raise ValueError(f"open_regular reads only ('rb' or 'r'), not {mode!r}")
    check_regular_file(path)  # names a socket (whose open fails with ENXIO) as such
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOCTTY | _CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(path, file_kind(st.st_mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
        if mode == "rb":
            return os.fdopen(fd, "rb")
        return os.fdopen(fd, "r", encoding=encoding or "utf-8", errors=errors,
                         newline=newline)
    except BaseException:
        os.close(fd)
        raise


def read_regular_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`; raises as it)."""
    with open_regular(path) as fh:
        return fh.read()


def read_regular_text(path: str | os.PathLike[str], encoding: str = "utf-8",
                      errors: str | None = None) -> str:
    """The text of the regular file ``path`` as ``Path.read_text`` gives it (universal
    newlines); raises as :func:`open_regular`, ``UnicodeDecodeError`` for bad bytes."""
    with open_regular(path, "r", encoding=encoding, errors=errors) as fh:
        return fh.read()


def resolve_data_path(root: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                      reference: str | os.PathLike[str], *,
                      base: str | os.PathLike[str] | None = None,
                      allow_outside: bool | None = None, must_exist: bool = True) -> str:
    """The path ``reference`` names, joined to ``base`` (default: the first root), after
    both parts of the rule: confined to ``root`` (a folder or several; raises
    :class:`~heritage_eval.core.paths.PathOutsideRoot`, skipped when ``allow_outside`` —
    ``None``: the process policy) and a regular file (raises :class:`NotARegularFile`;
    ``FileNotFoundError`` when missing, unless ``must_exist=False``, which lets a
    missing path through so the caller can word its own "not found").

    Returns the joined path as written (``os.path.join``, not resolved), so records keep
    the layout's own names."""
    roots: Sequence[str | os.PathLike[str]] = (
        (root,) if isinstance(root, str | os.PathLike) else root)
    joined = joined_inside([Path(r) for r in roots], os.fspath(reference), allow_outside,
                           base=None if base is None else os.fspath(base))
    try:
        check_regular_file(joined)
    except FileNotFoundError:
        if must_exist:
            raise
    return joined


def confined(root: str | os.PathLike[str], path: str | os.PathLike[str],
             allow_outside: bool | None = None) -> str:
    """``path`` (a file found under ``root`` by listing or globbing, not named by a
    reference) checked as :func:`resolve_data_path` checks a reference: a symbolic link
    among its parts leading out of ``root`` raises ``PathOutsideRoot``; and a regular
    file. Returns ``os.fspath(path)``."""
    return resolve_data_path(root, os.path.abspath(path), allow_outside=allow_outside)
