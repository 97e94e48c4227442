"""Run folders that never lose work: configuration check, lock, partial marker, clean-up.

A run folder holds ``run.json`` (schema ``heritage-eval/run/1``): the benchmark, the
configuration fingerprint of the run that owns the folder, its status (``running``,
``complete``, ``partial``, or ``stopped`` / ``failed`` for a run that ended early) and
the files it wrote. Opening a folder for a new run:

- empty or absent: created, the run owns it;
- same configuration: resumed (the response cache answers what was already received);
- another configuration: refused (:class:`RunFolderConflict`, exit 2), naming
  ``--resume`` (keep the cache, replace the results) and ``--overwrite`` (start afresh);
- a complete run and a new ``--limit`` run: refused the same way, since the partial run
  would replace the full one;
- a run that would leave fewer rows than the folder holds (a smaller ``--limit``, fewer
  categories …): refused, also with ``--resume``, naming how many rows of
  ``samples.jsonl`` would be lost (:func:`rows_lost`); only ``--overwrite`` replaces them.
  A larger ``--limit`` (or none) resumes and completes the folder;
- a folder of files that are no run: refused.

A ``--limit`` that cut nothing (every group has fewer samples than the limit) is not
partial (:func:`limit_truncates`).

While a run is open, ``OUT/.lock`` is held with ``fcntl.flock`` (released by the OS when
the process dies, also on ``kill -9``): a second process gets :class:`RunFolderBusy`.
Temporary files left by a killed atomic write (``.NAME.*.tmp``) are removed on open.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import io
import json
import logging
import os
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, Literal

from heritage_eval.core.row_loss import RowLossMemo
from heritage_eval.core.row_loss import rows_lost as rows_lost  # re-exported: the rule
from heritage_eval.core.store import atomic_write_text
from heritage_eval.core.types import stable_hash

RUN_SCHEMA = "heritage-eval/run/1"
RUN_FILE = "run.json"
LOCK_FILE = ".lock"
#: files a run writes besides those listed in run.json (removed by ``--overwrite``)
RUN_FILES = ("samples.jsonl", "summary.json", "summary.md", "cache.sqlite",
             "cache.sqlite-wal", "cache.sqlite-shm", RUN_FILE)

Mode = Literal["refuse", "resume", "overwrite"]
#: ``(option key, recorded value) -> the value as today's option rules read it``
#: (:func:`heritage_eval.core.option_spec.selection_reader`).
Canonical = Callable[[str, Any], Any]


class RunFolderConflict(Exception):
    """The folder holds another run; the message names ``--resume`` / ``--overwrite``."""


class RunFolderBusy(Exception):
    """Another process is writing to the folder."""


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def read_run_file(root: Path) -> dict[str, Any] | None:
    """``run.json`` of ``root`` as a dict, or ``None`` (absent or unreadable)."""
    try:
        data = json.loads((root / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def remove_temp_files(root: Path) -> list[Path]:
    """Delete leftover temporary files of killed atomic writes in ``root``."""
    removed = []
    for p in root.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            p.unlink()
            removed.append(p)
    return removed


class RunSession:
    """An open run folder (lock held). Use :func:`open_run`."""

    def __init__(self, root: Path, benchmark: str, config: dict[str, Any],
                 partial: bool, resumed: bool, n_samples: int | None = None) -> None:
        self.root = root
        self.benchmark = benchmark
        self.config = config
        self.partial = partial
        self.resumed = resumed
        self.n_samples = n_samples
        self.files: list[str] = []

    def record_file(self, name: str) -> None:
        """Note an extra file (plot, table) the run wrote, for ``--overwrite``."""
        if name not in self.files:
            self.files.append(name)

    def write_state(self, status: str) -> None:
        data = {"schema": RUN_SCHEMA, "benchmark": self.benchmark,
                "config_hash": stable_hash(self.config), "config": self.config,
                "status": status, "partial": self.partial, "updated_utc": _now(),
                "files": self.files}
        if self.n_samples is not None:
            data["n_samples"] = self.n_samples
        atomic_write_text(self.root / RUN_FILE,
                          json.dumps(data, ensure_ascii=False, indent=2) + "\n")


#: ``run.json`` statuses of a run that did not finish (results incomplete or stale).
UNFINISHED = ("running", "stopped", "failed")


def ended_status(exc: BaseException) -> str:
    """``run.json``'s status for a run ended by ``exc``: ``"stopped"`` for
    ``KeyboardInterrupt`` (Ctrl-C; the command line turns SIGTERM/SIGHUP into it too),
    ``"failed"`` for anything else."""
    return "stopped" if isinstance(exc, KeyboardInterrupt) else "failed"


def _conflict(root: Path, why: str) -> RunFolderConflict:
    return RunFolderConflict(
        f"--out {root}: {why}. Nothing was changed. Use another --out, or --resume to "
        "continue in this folder with the new settings (answers cached for identical "
        "requests are re-used, the results are replaced), or --overwrite to delete that "
        "run's files and start afresh")


def check_folder(root: Path, benchmark: str, config: dict[str, Any], partial: bool,
                 mode: Mode, defaults: dict[str, Any] | None = None,
                 sample_ids: Collection[str] | None = None, *,
                 id_parts: bool = False, memo: RowLossMemo | None = None,
                 models: Collection[str] | None = None,
                 canonical: Canonical | None = None) -> bool:
    """Raise :class:`RunFolderConflict` if a run of ``config`` may not use ``root``;
    return whether it resumes an existing run. Changes nothing on disk.

    ``canonical``: ``(key, value) -> value`` as today's option rules read it, applied to
    both configurations before they are compared (:func:`_same_config`), so that a
    folder recorded with another spelling of the same selection resumes.

    ``sample_ids``: the ids of every sample the new run plans (``None``: not known, the
    caller gets the older rule: a ``partial`` run may not follow a complete one). Given,
    the folder may not shrink: unless ``mode`` is ``"overwrite"``, a run that would not
    rewrite some row of ``samples.jsonl`` (:func:`rows_lost`) is refused, naming how many.
    ``id_parts``: see :func:`rows_lost`. ``memo``: answers of an earlier check of the
    same folder in the same ``open_run`` (:class:`RowLossMemo`). ``models``: the models
    a folder of several models' rows is re-scored for (:func:`rows_lost`).
    """
    if not root.exists():
        return False
    if not root.is_dir():
        raise RunFolderConflict(f"--out {root} exists and is not a folder")
    entries = [p.name for p in root.iterdir() if p.name != LOCK_FILE
               and not (p.name.startswith(".") and p.name.endswith(".tmp"))]
    if not entries or mode == "overwrite":
        return False
    state = read_run_file(root)
    if mode == "resume":
        _refuse_shrink(root, sample_ids, id_parts, memo, models)
    if state is None:
        if mode == "resume":
            return True
        if {"samples.jsonl", "summary.json", "cache.sqlite"} & set(entries):
            raise _conflict(root, "it holds a run of an earlier heritage-eval version (no "
                            f"{RUN_FILE})")
        raise _conflict(root, "it is not empty and holds no heritage-eval run")
    if mode == "resume":
        return True
    if state.get("benchmark") != benchmark:
        raise _conflict(root, f"it holds a {state.get('benchmark')} run, not {benchmark}")
    old_config = state.get("config") or {}
    if state.get("config_hash") != stable_hash(config) and \
            not _same_config(old_config, config, defaults or {}, canonical):
        diff = _differences(old_config, config, canonical)
        raise _conflict(root, "it holds a run of another configuration ("
                        + "; ".join(diff[:4]) + ")")
    if sample_ids is not None:
        _refuse_shrink(root, sample_ids, id_parts, memo, models)
    elif partial and state.get("status") == "complete":
        raise _conflict(root, "it holds a complete run and this one has --limit (a "
                        "partial run would replace it)")
    return True


def _refuse_shrink(root: Path, sample_ids: Collection[str] | None,
                   id_parts: bool = False, memo: RowLossMemo | None = None,
                   models: Collection[str] | None = None) -> None:
    """Raise :class:`RunFolderConflict` when a run planning ``sample_ids`` would leave
    fewer rows than ``root`` holds (:func:`rows_lost`)."""
    if sample_ids is None:
        return
    lost, rows = (memo or RowLossMemo()).rows_lost(root, sample_ids, id_parts, models)
    if lost:
        plans = f"{len(sample_ids)} sample(s)" + (
            f" for {len(models)} model(s)" if models is not None else "")
        raise RunFolderConflict(
            f"--out {root}: it holds {rows} row(s) with an answer in samples.jsonl and "
            f"this run plans {plans}: {lost} row(s) would be lost (a smaller --limit, "
            "less data, or fewer models or tasks). Nothing was changed. Use a --limit "
            "that covers them, or none (the run then resumes and keeps every row), "
            "another --out, or --overwrite to "
            "delete that run's files and keep only this run's rows")


def limit_truncates(limit: int | None, n_loaded: int,
                    load_count: Callable[[int], int]) -> bool:
    """Whether a run with ``--limit limit`` that loaded ``n_loaded`` samples left any out,
    i.e. is PARTIAL. ``limit`` caps each group (or the whole data) at ``limit`` samples, so
    fewer samples than ``limit`` in all means nothing was cut; otherwise
    ``load_count(limit + 1)`` (the number of samples loaded with a limit one higher, its
    messages and log silenced) tells: the same number means nothing was cut. A probe that
    fails counts as cut (PARTIAL is the safe side). ``None``: no limit, not partial."""
    if limit is None:
        return False
    if n_loaded < limit:
        return False
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stderr(io.StringIO()), \
                contextlib.redirect_stdout(io.StringIO()):
            more = load_count(limit + 1)
    except Exception:
        return True
    finally:
        logging.disable(previous)
    return more != n_loaded


def _same_config(old: dict[str, Any], new: dict[str, Any], defaults: dict[str, Any],
                 canonical: Canonical | None = None) -> bool:
    """Equal, ignoring options one side does not know: an option added by a later version
    (absent from ``old``) that is at its default, and an option since removed (absent from
    ``new``) — so that upgrading never turns a run into 'another configuration'. Values
    are compared as ``canonical`` reads them (the same names of a selection in another
    order or spelling are one configuration)."""
    read = canonical or _as_is
    keys = set(old) | set(new)
    for k in keys:
        if k in old and k in new:
            if read(k, old[k]) != read(k, new[k]):
                return False
        elif k in new and (k not in defaults or new[k] != defaults[k]):
            return False
    return True


def _as_is(key: str, value: Any) -> Any:
    return value


def _differences(old: dict[str, Any], new: dict[str, Any],
                 canonical: Canonical | None = None) -> list[str]:
    read = canonical or _as_is
    keys = sorted(set(old) | set(new))
    absent = "(not set)"
    out = [f"{k}: {old.get(k, absent)!r} there, {new.get(k, absent)!r} now" for k in keys
           if k not in old or k not in new or read(k, old[k]) != read(k, new[k])]
    return out or ["settings differ"]


def _overwrite(root: Path) -> None:
    state = read_run_file(root) or {}
    names = set(RUN_FILES) | {str(n) for n in state.get("files", []) if isinstance(n, str)}
    base = root.resolve()
    for name in names:
        p = root / name
        if p.is_file() and base in p.resolve().parents:
            p.unlink()


@contextlib.contextmanager
def open_run(root: str | Path, benchmark: str, config: dict[str, Any], *,
             partial: bool = False, mode: Mode = "refuse",
             defaults: dict[str, Any] | None = None,
             sample_ids: Collection[str] | None = None,
             id_parts: bool = False,
             models: Collection[str] | None = None,
             canonical: Canonical | None = None) -> Iterator[RunSession]:
    """Open ``root`` for a run of ``config`` (see the module docstring); ``sample_ids``:
    the samples the run plans, for the rule that a folder never shrinks
    (:func:`check_folder`; their number is kept in ``run.json`` as ``n_samples``);
    ``id_parts``: the benchmark's records add ``#<part>`` to their sample's id
    (:func:`rows_lost`); ``models``: the models a folder of several models' rows is
    written for (``score``: a row of a model left out would be lost); ``canonical``:
    how option values are read for the comparison (:func:`check_folder`).

    Raises :class:`RunFolderConflict` / :class:`RunFolderBusy` before anything is
    written. On normal exit the status becomes ``complete`` or ``partial``; on an
    exception it becomes ``stopped`` (Ctrl-C or a stop signal) or ``failed`` (any other
    error but :class:`RunFolderConflict`, a refusal that puts back what it changed), see
    :func:`ended_status`; either way the next run of the same configuration
    resumes. A process killed outright (``kill -9``, power loss) leaves ``running``.
    """
    path = Path(root)
    memo = RowLossMemo()  # the second check reads samples.jsonl only if it changed
    check_folder(path, benchmark, config, partial, mode, defaults,  # refuse early
                 sample_ids, id_parts=id_parts, memo=memo, models=models,
                 canonical=canonical)
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    lock_path = path / LOCK_FILE
    had_lock = lock_path.exists()
    lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    acquired = False
    try:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(lock_fd, 200, 0).decode("utf-8", "replace").strip()
            raise RunFolderBusy(
                f"--out {path}: another heritage-eval run is writing to this folder "
                f"({holder or 'pid unknown'}); wait for it to finish or use another --out"
                ) from None
        acquired = True
        try:  # under the lock: nobody else changes the folder while it is checked
            resumed = check_folder(path, benchmark, config, partial, mode, defaults,
                                   sample_ids, id_parts=id_parts, memo=memo,
                                   models=models, canonical=canonical)
        except RunFolderConflict:
            if not had_lock:
                lock_path.unlink(missing_ok=True)
            if created:
                with contextlib.suppress(OSError):
                    path.rmdir()
            raise
        os.ftruncate(lock_fd, 0)
        os.pwrite(lock_fd, f"pid {os.getpid()}, since {_now()}".encode(), 0)
        remove_temp_files(path)
        if mode == "overwrite":
            _overwrite(path)
        session = RunSession(path, benchmark, config, partial, resumed,
                             None if sample_ids is None else len(sample_ids))
        # checked: this frame lives as long as the run; it holds the ids no longer (at
        # 270,000 samples a set of them is ~25 MiB)
        sample_ids = memo = None  # type: ignore[assignment]
        old = read_run_file(path)
        if old and mode != "overwrite":
            session.files = [str(n) for n in old.get("files", []) if isinstance(n, str)]
        session.write_state("running")
        try:
            yield session
        except RunFolderConflict:  # a refusal: its raiser left run.json as it should be
            raise
        except BaseException as exc:  # the status says how the run ended; work is kept
            with contextlib.suppress(OSError):
                session.write_state(ended_status(exc))
            raise
        session.write_state("partial" if partial else "complete")
    finally:
        if acquired:  # never wipe the holder's details when the lock was not ours
            with contextlib.suppress(OSError):
                os.ftruncate(lock_fd, 0)
        os.close(lock_fd)
