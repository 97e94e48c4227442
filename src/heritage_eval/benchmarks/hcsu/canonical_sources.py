"""Which source file each canonicalized output was made from: the staleness rule of
:func:`~.canonical_batch.canonicalize_tree`.

Rule: an existing output under ``DST`` is reused only when ``DST/canonicalize.sources.jsonl``
says it was made, with the same settings (:func:`~.canonical_batch.settings_hash`), from
the source file that is there now: the same *stat identity* — absolute path, size,
``st_mtime_ns``, ``st_ctime_ns`` and inode number all equal (one ``stat`` per file: an
unchanged re-run reads no image) — and the output's own size and ``st_mtime_ns`` still
what was recorded.

Anything else is made again: an output with no record (made by an older version, or by
a run killed before its result was recorded), an edited, replaced or renamed source, a
touched or copied one (its bytes are not compared: hashing every source on a first run
cost 6 % of the canonicalization's CPU, more than remaking the rare touched image), an
output edited by hand. ``ctime`` cannot be set back by ``os.utime``, so an in-place edit
is caught even when the size and mtime are restored. Not caught: content changed while
path, size, mtime, ctime and inode all stay equal (setting the system clock back, or
writing the disk beneath the file system), and file systems that keep no
nanosecond-exact or no change time (FAT) where an edit keeps the size within one clock
tick.

The file is a JSON-lines journal (ASCII, so any file name survives): one line per
recorded output, appended as each image is finished (so a killed run keeps what it
finished), rewritten compactly at the end of a run that changed it; a torn or unreadable
line is ignored. The outputs of vanished sources are removed by :mod:`.canonical_batch`
with their ``_stages`` images (:func:`discard_output`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from heritage_eval.benchmarks.hcsu.canonical_archives import STAGES_DIR
from heritage_eval.core.atomic_write import atomic_write_bytes

SOURCES = "canonicalize.sources.jsonl"
#: Names of the intermediate stages :func:`.canonical.canonicalize_bgr` can keep.
STAGE_NAMES = ("inverted", "binary", "denoised", "masked")
_STAT_KEYS = ("src", "size", "mtime_ns", "ctime_ns", "ino")


def stat_identity(path: str) -> dict[str, Any] | None:
    """The stat identity of source ``path`` (links followed): ``src`` (``path`` made
    absolute; an absolute ``path`` is kept as given),
    ``size`` (bytes), ``mtime_ns``, ``ctime_ns`` (ns since the epoch), ``ino``; ``None``
    when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return {"src": path if os.path.isabs(path) else os.path.abspath(path),
            "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
            "ino": st.st_ino}


def stage_files(dst: Path, out_rel: str) -> list[Path]:
    """The ``_stages`` images that belong to output ``out_rel`` (POSIX, relative to
    ``dst``): ``dst/_stages/<folder>/<stage>/<name>`` for each of :data:`STAGE_NAMES`."""
    rel = Path(out_rel)
    return [dst / STAGES_DIR / rel.parent / stage / rel.name for stage in STAGE_NAMES]


def discard_output(dst: Path, key: str, record: SourceRecord, has_stages: bool) -> bool:
    """Remove output ``dst/key`` (POSIX, relative), its stage images (when
    ``has_stages``) and its record; True when the output existed. Folders left empty are
    removed, up to ``dst``."""
    record.drop(key)
    existed = False
    for i, path in enumerate([dst / key, *(stage_files(dst, key) if has_stages else [])]):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        existed = existed or i == 0
        parent = path.parent
        while parent != dst and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    return existed


def _output_stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class SourceRecord:
    """The journal of ``dst`` (module docstring) for outputs made with ``settings``
    (a :func:`~.canonical_batch.settings_hash`); entries of other settings are dropped."""

    def __init__(self, dst: Path, settings: str) -> None:
        self.dst, self.settings = dst, settings
        self._dst = os.fspath(dst)
        self.path = dst / SOURCES
        self.entries: dict[str, dict[str, Any]] = {}
        self.changed = False
        self._journal: IO[str] | None = None
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            lines = []
        for line in lines:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # torn by a kill
            if isinstance(entry, dict) and isinstance(entry.get("out"), str):
                if entry.get("settings") == settings:
                    self.entries[entry["out"]] = entry
                else:  # a removal line, or another settings' entry
                    self.entries.pop(entry["out"], None)
        self.changed = len(lines) != len(self.entries)

    def is_current(self, out_rel: str, src: str) -> bool:
        """True when the output ``dst/out_rel`` exists and was made from ``src`` as it is
        now (the rule in the module docstring). Updates the record when only the stat
        identity changed."""
        entry = self.entries.get(out_rel)
        if entry is None or _output_stat(os.path.join(self._dst, out_rel)) != (
                entry.get("out_size"), entry.get("out_mtime_ns")):
            return False
        now = stat_identity(src)
        if now is None:
            return False
        return all(entry.get(k) == now[k] for k in _STAT_KEYS)

    def add(self, out_rel: str, ident: dict[str, Any]) -> None:
        """Record that ``dst/out_rel`` (just written) was made from the source of stat
        identity ``ident`` (taken before it was read)."""
        out = _output_stat(os.path.join(self._dst, out_rel))
        if out is not None:
            self._append({"out": out_rel, "settings": self.settings, **ident,
                          "out_size": out[0], "out_mtime_ns": out[1]})

    def drop(self, out_rel: str) -> None:
        """Forget ``out_rel`` (its output is being made again, or was removed)."""
        if self.entries.pop(out_rel, None) is not None:
            self._write_line({"out": out_rel, "removed": True})

    def _append(self, entry: dict[str, Any]) -> None:
        self.entries[entry["out"]] = entry
        self._write_line(entry)

    def _write_line(self, entry: dict[str, Any]) -> None:
        self.changed = True
        if self._journal is None:
            self.dst.mkdir(parents=True, exist_ok=True)
            self._journal = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self._journal.write(json.dumps(entry) + "\n")
        self._journal.flush()

    def close(self) -> None:
        """End the run: rewrite the journal compactly (atomically) when it changed."""
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        if self.changed:
            text = "".join(json.dumps(self.entries[k]) + "\n"
                           for k in sorted(self.entries))
            atomic_write_bytes(self.path, text.encode("utf-8"))
            self.changed = False
