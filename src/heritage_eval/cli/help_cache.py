"""The ``--help`` text of a command, kept from the last time it was built and checked
against everything it was built from, so that ``heritage-eval run NAME --help`` prints
in tens of milliseconds instead of importing the benchmark (pydantic, numpy, Pillow …).

How it stays right (never stale silently):

- Only a plain help request of the process's own command line is served:
  ``heritage-eval [WORD [WORD]] --help`` (or ``-h``), the words naming commands
  (:func:`help_words`). Anything else builds the parser as always.
- The first such request builds the parser and prints its help as always, while
  :class:`Recorder` notes every file the process reads (Python's audit events ``open``,
  ``os.listdir``, ``os.scandir``: module sources, entry-point metadata, data files) and
  every imported module's file. The text is kept (:func:`store`) only when the help
  printed with exit status 0 and nothing was written to stderr (no plug-in warning).
- A later request is served (:func:`cached_help`) only when its key is the same (this
  heritage-eval and Python, the interpreter, ``sys.path``, the words, the terminal
  width, stdout being a terminal, the locale and colour variables) and every recorded
  file still has the same modification time, change time and size (every recorded
  folder the same modification time: a package installed or removed changes
  ``site-packages``); a file that was missing must still be missing. Anything else:
  the parser is built again and the entry rewritten. An entry is not kept when a
  recorded file changed in the last :data:`RACY_S` seconds (an edit in the same clock
  tick could otherwise go unseen, as in git's "racy" index entries).

Assumption: the help text depends only on those files and that key, not on other
environment variables (none of heritage-eval's does).

Where: ``$HERITAGE_EVAL_HELP_CACHE`` (an absolute folder; empty, ``off`` in any case or
a relative path turns the cache off), else ``$XDG_CACHE_HOME/heritage-eval/help`` (when
absolute), else ``~/.cache/heritage-eval/help``; one
small JSON file per command and environment, at most :data:`MAX_ENTRIES`. A folder
that cannot be written is ignored (no cache, no message). This module imports only the
standard library's ``os``, ``sys``, ``json`` and ``zlib`` when serving an entry.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

ENV = "HERITAGE_EVAL_HELP_CACHE"
#: Version of the entry format (part of the key).
FORMAT = 1
HELP_FLAGS = ("-h", "--help")
#: Most command words before the help flag (``run NAME``, ``muse analyze``).
MAX_WORDS = 2
#: Environment variables that change how argparse words or lays out a help text.
FORMAT_ENV = ("COLUMNS", "LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "NO_COLOR",
              "FORCE_COLOR", "PYTHON_COLORS", "TERM")
#: A file modified this recently (seconds) when the help was built: the entry is not kept.
RACY_S = 2.0
#: Most entries kept in the folder (the oldest are removed when a new one is written).
MAX_ENTRIES = 200
#: Files under these are not signatures of anything (device, process, kernel files).
_VOLATILE = ("/proc/", "/dev/", "/sys/")


def help_words(argv: Sequence[str]) -> tuple[str, ...] | None:
    """The command words of a plain help request (``["run", "ancient-bench", "--help"]``
    -> ``("run", "ancient-bench")``; ``["--help"]`` -> ``()``), or ``None`` when ``argv``
    is anything else (another option, more than :data:`MAX_WORDS` words)."""
    if not argv or argv[-1] not in HELP_FLAGS:
        return None
    words = tuple(argv[:-1])
    if len(words) > MAX_WORDS or any(not w or w.startswith("-") for w in words):
        return None
    return words


def folder() -> str | None:
    """The cache folder (see the module docstring), or ``None`` when turned off."""
    given = os.environ.get(ENV)
    if given is not None:  # "off" in any case, or a relative path: no cache (a relative
        # folder would follow the working directory; XDG_CACHE_HOME has the same rule)
        off = given.strip().lower() in ("", "off", "0", "no", "false")
        return None if off or not os.path.isabs(given) else given
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):  # no home folder known: no cache
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "heritage-eval", "help")


def _columns() -> int:
    """``shutil.get_terminal_size().columns`` (what argparse lays help out to) without
    importing :mod:`shutil`; :func:`store` checks that both agree."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


def _key(words: tuple[str, ...]) -> list[Any]:
    from heritage_eval import __version__

    try:
        tty = bool(sys.stdout.isatty())
    except (AttributeError, ValueError):
        tty = False
    return [FORMAT, __version__, sys.version, sys.executable, list(sys.path), list(words),
            _columns(), tty, [os.environ.get(name) for name in FORMAT_ENV]]


def _entry_path(root: str, words: tuple[str, ...], key: list[Any]) -> str:
    import json
    import zlib

    digest = zlib.crc32(json.dumps(key).encode("utf-8", "surrogatepass"))
    name = "-".join(w for w in words if w.replace("-", "").replace("_", "").isalnum())
    return os.path.join(root, f"{name or 'heritage-eval'}.{digest:08x}.json")


def _signature(path: str) -> list[int] | None:
    """``[mtime_ns, ctime_ns, size]`` of a file (the change time too: a file replaced by
    one with the same size and a restored modification time still differs), ``None``
    when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size]


def unchanged(files: dict[str, list[int] | None], dirs: dict[str, int | None]) -> bool:
    """Whether every file still has its recorded signature (``None``: still missing) and
    every folder its recorded modification time (``None``: still missing)."""
    for path, sig in files.items():
        if _signature(path) != sig:
            return False
    for path, mtime in dirs.items():
        sig = _signature(path)
        if (sig[0] if sig is not None else None) != mtime:
            return False
    return True


def cached_help(words: tuple[str, ...]) -> str | None:
    """The kept help text of ``heritage-eval WORDS --help``, or ``None`` when there is
    none or it may be stale (see the module docstring). Never raises."""
    import json

    root = folder()
    if root is None:
        return None
    key = _key(words)
    try:
        with open(_entry_path(root, words, key), encoding="utf-8") as fh:
            entry = json.load(fh)
        if entry.get("key") != json.loads(json.dumps(key)):
            return None
        if not unchanged(entry["files"], entry["dirs"]):
            return None
        text = entry["text"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return text if isinstance(text, str) and text else None


class _CountingStream:
    """Passes writes through to ``stream``, noting that something was written."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.written = False

    def write(self, text: str) -> int:
        if text:
            self.written = True
        return int(self._stream.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Recorder:
    """Notes the files and folders the process reads from :meth:`start` on (an audit
    hook, inert once :meth:`stop` is called) and whether anything reached stderr."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.dirs: set[str] = set()
        self.active = False
        self._stderr: _CountingStream | None = None
        self._saved_stderr: Any = None

    def start(self) -> Recorder:
        """Begin recording (the audit hook stays installed for the process, inert once
        stopped). Returns ``self``."""
        self.active = True
        self._saved_stderr = sys.stderr
        self._stderr = _CountingStream(sys.stderr)
        sys.stderr = self._stderr
        sys.addaudithook(self._hook)
        return self

    def stop(self) -> bool:
        """Stop recording; returns whether anything was written to stderr meanwhile."""
        self.active = False
        if self._stderr is not None and sys.stderr is self._stderr:
            sys.stderr = self._saved_stderr
        return bool(self._stderr is not None and self._stderr.written)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active or event not in ("open", "os.listdir", "os.scandir"):
            return
        path: Any = args[0] if args else None
        if path is None and event != "open":
            path = "."  # listing the current folder
        if not (isinstance(path, str | bytes) or hasattr(path, "__fspath__")):
            return  # a file descriptor
        (self.files if event == "open" else self.dirs).add(os.fsdecode(os.fspath(path)))


def _kept(path: str, root: str) -> bool:
    return not (path.startswith(_VOLATILE) or path.startswith(root)
                or path.endswith(".pyc") or f"{os.sep}__pycache__{os.sep}" in path)


def store(recorder: Recorder, words: tuple[str, ...], parser: argparse.ArgumentParser
          ) -> None:
    """Keep the help text of ``WORDS`` (the parser reached by those sub-command words)
    with the signatures of what ``recorder`` saw plus every imported module's file; call
    it after argparse printed that help and exited with status 0. Nothing is kept when
    something reached stderr, a word is no sub-command, or the cache cannot be written.
    Never raises ``OSError``."""
    import json
    import shutil
    import time

    wrote_stderr = recorder.stop()
    root = folder()
    target = _sub_parser(parser, words)
    if wrote_stderr or root is None or target is None:
        return
    if shutil.get_terminal_size().columns != _columns():
        return
    paths = set(recorder.files)
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            paths.add(file)
    root_abs = os.path.abspath(root)
    files = {p: _signature(p) for p in sorted({os.path.abspath(p) for p in paths})
             if _kept(p, root_abs + os.sep)}
    dirs = {}
    for d in sorted({os.path.abspath(d) for d in recorder.dirs}):
        if _kept(d + os.sep, root_abs + os.sep):
            sig = _signature(d)
            dirs[d] = sig[0] if sig is not None else None
    newest = max([max(s[0], s[1]) for s in files.values() if s]
                 + [m for m in dirs.values() if m], default=0)
    if newest > time.time_ns() - RACY_S * 1e9:
        return  # something changed just now: an edit in the same tick would be unseen
    key = _key(words)
    entry = {"key": key, "text": target.format_help(), "files": files, "dirs": dirs}
    path = _entry_path(root, words, key)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(root, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(entry, fh)
        os.replace(tmp, path)
        _prune(root, keep=MAX_ENTRIES)
    except (OSError, ValueError):
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _prune(root: str, keep: int) -> None:
    """Remove the least recently written entries beyond ``keep`` (one per command and
    environment: other terminal widths, other ``sys.path`` … accumulate)."""
    with os.scandir(root) as it:
        entries = [(e.stat().st_mtime_ns, e.path) for e in it if e.name.endswith(".json")]
    for _, path in sorted(entries, reverse=True)[keep:]:
        os.unlink(path)


def _sub_parser(parser: argparse.ArgumentParser, words: tuple[str, ...]
                ) -> argparse.ArgumentParser | None:
    """The parser that ``WORDS`` lead to through sub-command choices, or ``None``."""
    import argparse

    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if len(subs) != 1 or word not in subs[0].choices:
            return None
        parser = subs[0].choices[word]
    return parser


__all__ = ["ENV", "Recorder", "cached_help", "folder", "help_words", "store", "unchanged"]
