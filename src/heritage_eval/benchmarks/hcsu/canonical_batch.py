"""Canonicalize a whole image tree on every core: idempotent, never touching an input.

``canonicalize_tree(SRC, DST)`` mirrors every image under ``SRC`` to ``DST`` (same
relative path, ``.png``), copies the ``*_annotations.json`` files so ``DST`` loads as an
HCSU release, and writes ``DST/canonicalize.json`` (settings, counts, per-file errors).
The domain of an image is its top folder (``bei/…`` = Bei, ``tie/…`` = Tie), else
``default_domain``. Re-running with the same settings reuses an output only when it was
made from the source file that is there now (recorded in ``DST/canonicalize.sources.jsonl``;
the rule and what it cannot detect: :mod:`.canonical_sources`); any other is made again,
and the outputs (with their stages) of sources that are gone are removed, as are annotation
copies without a source. Different settings refuse to mix into the same ``DST`` unless
``force`` is set, which remakes every output.
A run first removes the stale temporary files a killed run left in ``DST``
(:func:`heritage_eval.core.atomic_write.remove_stale_temps`: only the atomic writer's
own names, only inside ``DST``).

Name collisions (decision): inputs that would share one output name (``dup.png`` and
``dup.jpg`` both -> ``dup.png``) are all kept. The ``.png`` input (else the first in
sorted order) keeps the plain name; each other one keeps its suffix in the name
(``dup.jpg`` -> ``dup.jpg.png``), its annotation record is pointed at that file, and the
collision is listed in :attr:`TreeReport.collisions`. Intermediate stages, on request,
go to ``DST/_stages/<domain>/<class>/<stage>/<file>.png`` (the canonical variant only:
Wild-Resize has no intermediate stage).

Archives (no silent drop): canonicalize reads image files only, never an archive. A
top-level ``bei.zip`` / ``tie.zip`` without its ``bei/`` / ``tie/`` folder, or a Wild
archive (``wild.zip.001`` …) with no release folder beside it, holds images the run would
leave out: refused (:class:`CanonicalizeError`, exit 2, saying to extract it first). Any
other archive in the tree (a zip beside its extracted folder, a stray archive in a class
folder) is named in :attr:`TreeReport.not_read` and in ``canonicalize.json``.

Speed (issue 11): a worker decodes plain 8-bit PNGs with OpenCV (:func:`read_bgr`; other
files through Pillow), runs the pipeline in BGR order (:func:`.canonical.canonicalize_bgr`)
and encodes with OpenCV's default PNG settings: the bytes of the earlier RGB code.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal

from heritage_eval.benchmarks.hcsu.canonical_annotations import (
    IMAGE_SUFFIXES,
    sync_annotations,
)
from heritage_eval.benchmarks.hcsu.canonical_annotations import write_text as _write_text
from heritage_eval.benchmarks.hcsu.canonical_archives import (
    STAGES_DIR,
    archives_not_read,
    is_archive,  # noqa: F401  (re-exported: the archive rule's callers import it here)
)
from heritage_eval.benchmarks.hcsu.canonical_sources import (
    SourceRecord,
    discard_output,
    stat_identity,
)
from heritage_eval.core.atomic_write import remove_stale_temps
from heritage_eval.core.datapath import confined

# tqdm, core.store and core.types (pydantic) are imported where used, in the parent only:
# a spawned worker imports this module, and they were 0.13 s of its 0.35 s CPU start-up
# OpenCV and the pipeline (.canonical, .png_io) are imported where used, so that the HCSU
# benchmarks import this module (CanonicalizeError) without the 'hcsu' extra installed
if TYPE_CHECKING:
    from heritage_eval.benchmarks.hcsu.canonical import CanonParams

Variant = Literal["canonical", "wild-resize"]
MANIFEST = "canonicalize.json"
log = logging.getLogger(__name__)


class CanonicalizeError(Exception):
    """The tree cannot be processed as asked (overlapping folders, settings mismatch)."""


@dataclass(frozen=True)
class TreeJob:
    """One image to process: paths are absolute; ``is_bei`` from its top folder."""

    src: str
    dst: str
    is_bei: bool
    variant: Variant
    size: int
    min_area_frac: float
    stages_dir: str | None


@dataclass
class TreeReport:
    """What :func:`canonicalize_tree` did: counts, ``errors`` (``"path: reason"``) and
    ``no_glyph`` (``"path: no glyph found: reason"``: blank crops, neither written nor
    kept in the copied annotation files)."""

    written: int = 0
    skipped: int = 0
    remade: int = 0
    removed: int = 0
    errors: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    collisions: list[str] = field(default_factory=list)
    no_glyph: list[str] = field(default_factory=list)
    not_read: list[str] = field(default_factory=list)


#: :func:`process_one` outcome kinds besides success.
ERROR, NO_GLYPH = "error", "no_glyph"


def output_path(rel: Path, dst: Path) -> Path:
    """Where the output for source-relative path ``rel`` goes (suffix forced to ``.png``)."""
    return dst / rel.with_suffix(".png")


def output_names(rels: list[Path]) -> tuple[dict[Path, Path], list[str]]:
    """Output path (relative) of every input, resolving name collisions (module doc).

    Returns ``(input -> output, collision messages)``.
    """
    groups: dict[Path, list[Path]] = {}
    for rel in rels:
        groups.setdefault(rel.with_suffix(".png"), []).append(rel)
    out: dict[Path, Path] = {}
    notes: list[str] = []
    for plain, members in groups.items():
        members = sorted(members, key=lambda r: (r.suffix.lower() != ".png", str(r)))
        out[members[0]] = plain
        for other in members[1:]:
            out[other] = other.with_name(other.name + ".png")
            notes.append(f"{other.as_posix()} and {members[0].as_posix()} both map to "
                         f"{plain.as_posix()}: {other.as_posix()} written as "
                         f"{out[other].as_posix()}")
    return out, notes


def list_images(src: Path) -> list[Path]:
    """Image files under ``src`` (recursive, sorted), relative to ``src``; folders named
    ``_stages`` are skipped."""
    out = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d != STAGES_DIR)
        folder = Path(dirpath).relative_to(src)  # once per folder, not per file
        for name in sorted(filenames):
            if _suffix(name).lower() in IMAGE_SUFFIXES:
                out.append(folder / name)
    return out


def _suffix(name: str) -> str:
    """``PurePath(name).suffix`` of a plain file name (no separator), without a path
    object: from the last dot, unless it starts or ends the name."""
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


def _is_bei(rel: Path, default_domain: str) -> bool:
    top = rel.parts[0].casefold() if len(rel.parts) > 1 else ""
    if top in {"bei", "tie"}:
        return top == "bei"
    return default_domain.casefold() == "bei"


def exit_with_parent(parent: int, every_s: float = 0.5) -> None:
    """A pool worker's initializer: a daemon thread ends the worker (``os._exit``) once
    its parent ``parent`` is gone (the worker is re-parented), so a ``kill -9`` of
    ``hcsu canonicalize`` leaves no worker behind (they would otherwise wait on the
    task queue for ever). ``every_s``: seconds between checks."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def process_one(job: TreeJob) -> tuple[str, str] | None:
    """Process one image; returns ``None`` on success, else ``(kind, "path: reason")``
    with kind :data:`ERROR` or :data:`NO_GLYPH` (a blank crop: nothing written). Never
    raises. Works in OpenCV's BGR order from decoding to encoding (:func:`read_bgr`,
    :func:`.canonical.canonicalize_bgr`; Wild-Resize is per channel): the same pixels as
    the RGB functions, without two channel swaps per image."""
    import cv2

    from heritage_eval.benchmarks.hcsu.canonical import (
        CanonParams,
        canonicalize_bgr,
        wild_resize_array,
    )
    from heritage_eval.benchmarks.hcsu.png_io import encode_png_bgr, read_bgr, write_png_atomic

    if cv2.getNumThreads() != 1:
        cv2.setNumThreads(1)  # one process per core already
    try:
        bgr = read_bgr(job.src)
        if job.variant == "wild-resize":
            out = wild_resize_array(bgr, job.size)
        else:
            res = canonicalize_bgr(bgr, job.is_bei, CanonParams(job.size, job.min_area_frac),
                                   keep_stages=job.stages_dir is not None)
            if not res.ok:
                return NO_GLYPH, f"{job.src}: {res.status}: {res.reason}"
            out = res.image
            if job.stages_dir is not None:
                for name, stage in res.stages.items():
                    write_png_atomic(encode_png_bgr(stage),
                              Path(job.stages_dir) / name / Path(job.dst).name)
        write_png_atomic(encode_png_bgr(out), Path(job.dst))
    except Exception as exc:  # one bad image must not end the batch
        # imported here: an ImageLoadError can only come from that module, already loaded
        from heritage_eval.core.images import ImageLoadError

        if isinstance(exc, ImageLoadError):
            return ERROR, f"{job.src}: {exc}"
        return ERROR, f"{job.src}: {type(exc).__name__}: {exc}"
    return None


def _check_folders(src: Path, dst: Path) -> None:
    if not src.is_dir():
        raise CanonicalizeError(f"source folder not found: {src}")
    s, d = src.resolve(), dst.resolve()
    if s == d or s in d.parents or d in s.parents:
        raise CanonicalizeError(f"source {s} and destination {d} overlap; choose a separate "
                                "destination (inputs are never overwritten)")


def _settings(variant: Variant, params: CanonParams, default_domain: str) -> dict[str, object]:
    return {"variant": variant, "size": params.size, "min_area_frac": params.min_area_frac,
            "default_domain": default_domain, "pipeline_version": 3}


def canonicalize_tree(src: Path, dst: Path, variant: Variant = "canonical",
                      params: CanonParams | None = None, workers: int | None = None,
                      save_stages: bool = False, force: bool = False,
                      default_domain: str = "tie", progress: bool = True) -> TreeReport:
    """Process every image under ``src`` into ``dst`` (see the module docstring).

    ``workers``: processes (>= 1; ``None``: all cores). ``save_stages``: also write the
    intermediate stages under ``dst/_stages/<domain>/<class>/<stage>/<file>.png``
    (ignored for Wild-Resize, which has none). An existing output is reused only when it
    was made, with these settings, from the source file that is there now
    (:mod:`.canonical_sources`); ``force`` remakes every output. Raises
    :class:`CanonicalizeError` when the folders overlap, ``workers`` < 1, or ``dst`` holds
    outputs made with other settings (without ``force``). Per-image failures are
    reported, not raised.
    """
    from heritage_eval.benchmarks.hcsu.canonical import CanonParams

    if workers is not None and workers < 1:
        raise CanonicalizeError(f"workers must be at least 1, got {workers}")
    params = params or CanonParams()
    _check_folders(src, dst)
    refusals, not_read = archives_not_read(src)
    if refusals:
        raise CanonicalizeError("; ".join(refusals))
    settings = _settings(variant, params, default_domain)
    manifest_path = dst / MANIFEST
    ours = manifest_path.is_file()  # a canonicalize output folder: its strays are ours
    if ours and not force:
        old = json.loads(manifest_path.read_text(encoding="utf-8")).get("settings")
        if old != settings:
            raise CanonicalizeError(f"{dst} holds outputs made with other settings {old}; use "
                                    "another destination or --force to rewrite them")
    # temporary files of a killed earlier run: only the atomic writer's names, only here
    remove_stale_temps(dst, ".png")
    remove_stale_temps(dst, ".tmp", recursive=False)
    start = time.perf_counter()
    report = TreeReport(not_read=not_read)
    for note in not_read:
        log.warning("%s", note)
    names, report.collisions = output_names(list_images(src))
    record = SourceRecord(dst, settings_hash(settings))
    try:
        blank = _make_outputs(src, dst, names, record, report, ours, variant, params,
                              workers, save_stages, force, default_domain, progress)
    finally:
        record.close()  # what was finished stays recorded, also on an exception
    report.errors.extend(sync_annotations(src, dst, names, blank, prune=ours))
    report.elapsed_s = time.perf_counter() - start
    dst.mkdir(parents=True, exist_ok=True)
    manifest = {"settings": settings, "settings_hash": settings_hash(settings),
                "source": str(src.resolve()), **asdict(report)}
    _write_text(manifest_path, json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
    return report


def _make_outputs(src: Path, dst: Path, names: dict[Path, Path], record: SourceRecord,
                  report: TreeReport, ours: bool, variant: Variant, params: CanonParams,
                  workers: int | None, save_stages: bool, force: bool,
                  default_domain: str, progress: bool) -> set[PurePosixPath]:
    """Remove the outputs of vanished sources, remake the stale ones, make the missing
    ones (filling ``report``); returns the inputs left out of the annotations."""
    has_stages, expected = (dst / STAGES_DIR).is_dir(), {o.as_posix() for o in names.values()}
    gone = set(record.entries) - expected  # and, in an output folder, any stray image:
    gone |= {p.as_posix() for p in list_images(dst)} - expected if ours else set()
    report.removed = sum(discard_output(dst, key, record, has_stages) for key in sorted(gone))
    jobs: list[TreeJob] = []
    idents: dict[str, tuple[str, dict[str, object] | None]] = {}  # output -> record key
    refused: dict[Path, str] = {}  # a link leading out of src, or not a regular file
    root = os.path.abspath(src)
    for rel, out_rel in names.items():
        key, source = out_rel.as_posix(), os.path.join(root, rel)  # its identity's path
        if not force and record.is_current(key, source):
            report.skipped += 1
            continue
        # made from another file or settings, or not recorded: never left to be used
        if discard_output(dst, key, record, has_stages) and not force:
            report.remade += 1
        try:
            confined(src, src / rel)
        except (OSError, ValueError) as exc:  # NotARegularFile; PathOutsideRoot
            refused[rel] = f"{src / rel}: {exc}"
            continue
        stages = (str((dst / STAGES_DIR / rel).parent)
                  if save_stages and variant == "canonical" else None)
        idents[out := str(dst / out_rel)] = (key, stat_identity(source))  # before reading
        jobs.append(TreeJob(str(src / rel), out, _is_bei(rel, default_domain), variant,
                            params.size, params.min_area_frac, stages))

    def done(job: TreeJob) -> None:
        key, ident = idents[job.dst]
        record.add(key, ident) if ident is not None else None

    blank: set[PurePosixPath] = set()
    for job, kind, message in _run_jobs(jobs, workers, progress, done):
        if kind == NO_GLYPH:
            log.warning("%s (excluded from the build)", message)
            report.no_glyph.append(message)
            blank.add(PurePosixPath(Path(job.src).relative_to(src).as_posix()))
        else:
            report.errors.append(message)
    report.written = len(jobs) - len(report.errors) - len(report.no_glyph)
    report.errors += refused.values()  # one error each; left out of the annotations
    return blank | {PurePosixPath(rel.as_posix()) for rel in refused}


def settings_hash(settings: dict[str, object]) -> str:
    """16 hex digits fingerprinting plain JSON ``settings``: what
    ``heritage_eval.core.types.stable_hash`` gives for them (test), without importing
    that module (pydantic: a fifth of a one-worker run's start-up)."""
    blob = json.dumps(settings, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _run_jobs(jobs: list[TreeJob], workers: int | None, progress: bool,
              done: Callable[[TreeJob], None]) -> list[tuple[TreeJob, str, str]]:
    """``(job, kind, message)`` of every job that did not succeed, in job order;
    ``done(job)`` is called for each one that did, as it finishes."""
    if not jobs:
        return []
    n = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    from tqdm import tqdm

    bar = tqdm(total=len(jobs), desc="canonicalize", unit="img", file=sys.stderr,
               dynamic_ncols=True, disable=not progress or None)
    errors: list[tuple[TreeJob, str, str]] = []
    try:
        if n == 1:
            results: Iterable[tuple[str, str] | None] = map(process_one, jobs)
            for job, r in zip(jobs, results, strict=True):
                errors += [(job, *r)] if r else []
                done(job) if r is None else None
                bar.update(1)
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            chunk = max(1, min(64, len(jobs) // (n * 8) or 1))
            # "spawn": a forked child can deadlock on OpenCV / OpenMP thread pools that
            # the parent already started
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=n, mp_context=ctx,
                                     initializer=exit_with_parent,
                                     initargs=(os.getpid(),)) as pool:
                for job, r in zip(jobs, pool.map(process_one, jobs, chunksize=chunk),
                                  strict=True):
                    errors += [(job, *r)] if r else []
                    done(job) if r is None else None
                    bar.update(1)
    finally:
        bar.close()
    return errors
