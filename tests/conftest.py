"""Session checks shared by every test package, and the one way tests reach the real
sample data (:func:`realdata`).

A test that needs ``../shared/realdata`` (beside the checkout) gets its paths from
:func:`realdata`. On a machine without that folder (a fresh clone) such a test is
skipped with the reason naming the missing path; with ``CI=true`` in the environment it
fails instead (the parity and real-data tests are required there), and the session
refuses to start at all when the whole folder is absent.
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest

# A test session started in the background (`make test &` in a script, `nohup`) inherits
# SIGINT ignored, and so would every command the tests start: the Ctrl-C tests would see
# nothing happen. The tests stand for a user at a terminal, so Ctrl-C is restored (its
# children then start with the default disposition, as from a terminal).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Subprocess `--help` calls made by tests keep their help cache (cli/help_cache.py) in a
# folder of this session, never in the user's ~/.cache.
os.environ["HERITAGE_EVAL_HELP_CACHE"] = tempfile.mkdtemp(prefix="he-help-cache-")

#: Real sample data (parity set, real images) beside the checkout: ../shared/realdata.
SHARED_REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"


def in_ci() -> bool:
    """True when ``$CI`` is set to anything but empty / ``0`` / ``false``."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_realdata(path: Path) -> Path:
    """``path`` when it exists; else skip the calling test (reason: the missing path)
    or, under ``CI=true``, fail it with that message."""
    if path.exists():
        return path
    message = (f"shared real data missing: {path} (the real sample lies in "
               f"{SHARED_REALDATA}, beside the checkout)")
    if in_ci():
        pytest.fail(f"{message}; CI=true requires it", pytrace=False)
    pytest.skip(message)
    raise AssertionError("unreachable")  # pytest.skip raises


class RealDataPath(os.PathLike[str]):
    """A path under a *missing* :data:`SHARED_REALDATA` folder, checked when it is used.

    ``/`` joins lazily (module constants and default arguments cost nothing);
    ``exists()`` / ``is_dir()`` / ``is_file()`` answer without checking (for ``skipif``
    conditions) and f-string formatting gives the plain path (for messages); every other
    use — ``str()``, ``os.fspath()``, ``open()``, any other
    :class:`~pathlib.Path` method — goes through :func:`require_realdata`, so the test
    using it skips (or fails under ``CI=true``) with the missing path as the reason.
    """

    _QUERIES = frozenset({"exists", "is_dir", "is_file", "name", "suffix", "stem", "parts"})

    def __init__(self, path: Path) -> None:
        self._path = path

    def __truediv__(self, other: str | os.PathLike[str]) -> RealDataPath:
        return RealDataPath(self._path / other)

    @property
    def unchecked(self) -> Path:
        """The plain path, not checked."""
        return self._path

    def __fspath__(self) -> str:
        return str(require_realdata(self._path))

    def __str__(self) -> str:
        return self.__fspath__()

    def __format__(self, spec: str) -> str:
        # f-strings are for messages (a skip reason naming the path): not a use, unchecked
        return format(str(self._path), spec)

    def __repr__(self) -> str:
        return f"RealDataPath({str(self._path)!r})"

    def __eq__(self, other: object) -> bool:
        target = other._path if isinstance(other, RealDataPath) else other
        return self._path == target

    def __hash__(self) -> int:
        return hash(self._path)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # introspection (pytest, inspect): not a use of the path
            raise AttributeError(name)
        if name in self._QUERIES:
            return getattr(self._path, name)
        return getattr(require_realdata(self._path), name)


def realdata(*parts: str) -> Path | RealDataPath:
    """The real-data folder ``SHARED_REALDATA/parts…``: ``REAL = realdata("muse")`` at
    module level, ``REAL / "annotations.json"`` in a test. When it exists this is a plain
    :class:`~pathlib.Path`; when it is missing, a :class:`RealDataPath` whose first use
    skips the test using it (fails under ``CI=true``) with the missing folder as reason."""
    path = SHARED_REALDATA.joinpath(*parts)
    return path if path.exists() else RealDataPath(path)


@pytest.fixture
def realdata_path() -> Any:
    """The function form as a fixture: ``realdata_path("muse", "images")`` returns the
    checked :class:`~pathlib.Path` (skips / fails when it is missing)."""
    return lambda *parts: require_realdata(SHARED_REALDATA.joinpath(*parts))


def pytest_sessionstart(session: pytest.Session) -> None:
    """In CI the parity and real-data tests must run, never silently skip."""
    if in_ci() and not SHARED_REALDATA.is_dir():
        raise pytest.UsageError(f"CI run without the shared real data at {SHARED_REALDATA}: "
                                "the parity and real-data tests would all be skipped")


def pytest_report_header(config: pytest.Config) -> str:
    found = "found" if SHARED_REALDATA.is_dir() else "MISSING (real-data tests will skip)"
    return f"shared real data: {SHARED_REALDATA} ({found})"
