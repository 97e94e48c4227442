"""Build the static results site of one or several run folders.

``build_site(run_dirs, out_dir)`` writes::

    out_dir/index.html        header of every run (static HTML) + the sample browser
    out_dir/static/           app.js, style.css (local; no CDN, no network)
    out_dir/data/             index.js (manifest), index-NNNN.js / search-NNNN.js
                              (shards), r<run>-p<page>.js (see pages.py)
    out_dir/thumbs/, views/   thumbnails and zoom copies (cached; see images.py)
    out_dir/plots/r<run>/     the runs' PNG plots
    out_dir/originals.txt     originals the site links to (what --serve may send)

The records are streamed: ``samples.jsonl`` is read in batches of a data page, each
batch rendered (in worker processes for large runs, :func:`build`'s ``processes``) and
written at once, so memory does not grow with the number of records; thumbnails are made
once per distinct image.

The site opens from ``file://``. Bad input (missing images, truncated lines, an unknown
schema version) never stops the build: it is marked on the page and in
:attr:`SiteInfo.problems`.

Missing CJK font: when the pages show Chinese, Japanese or Korean text
(:func:`has_cjk`) and the building machine has no CJK font
(:func:`heritage_eval.report.fonts.cjk_family` is ``None``), the page header carries a
notice naming the font packages to install (:func:`font_notice`); the browser may lack
the font even when the building machine has one, so ``app.js`` also checks in the page
(two different CJK characters drawn alike = boxes) and shows the same notice.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from heritage_eval.core.sizecap import LongLine, iter_lines
from heritage_eval.viewer.compare import KeySpool
from heritage_eval.viewer.header import metric_specs, run_header
from heritage_eval.viewer.html import esc
from heritage_eval.viewer.images import ImageStore, url_path
from heritage_eval.viewer.index_columns import IndexColumns, dump
from heritage_eval.viewer.outdir import check_site_folder, mark_site
from heritage_eval.viewer.pages import STATES, PageWriter, SearchWriter, clear_data
from heritage_eval.viewer.render_batch import (
    Batch,
    group_codes,
    has_cjk,
    render_batch,
    worker_batch,
)
from heritage_eval.viewer.runs import RunData, ViewerError, read_runs
from heritage_eval.viewer.textio import encode_path_line, write_text

STATIC_FILES = ("app.js", "style.css")
#: the package's script parts (``static/``), joined in this order into the site's one
#: ``static/app.js``: the column helpers and the zoom view, then the sample browser
APP_PARTS = ("columns.js", "zoom.js", "app.js")
#: samples.jsonl bytes (all runs) above which the records are rendered in worker
#: processes by default (about 5,000 records of an Ancient-Bench run)
PARALLEL_BYTES = 8 << 20
#: The install hint of the notice (Debian/Ubuntu package first: what ``make fonts`` and
#: the CI image use).
FONT_HINT = ("install a CJK font, e.g. <code>sudo apt install fonts-noto-cjk</code> "
             "(Debian/Ubuntu), <code>google-noto-sans-cjk-fonts</code> (Fedora) or any "
             "Noto Sans CJK / Source Han Sans font, then reload the page")


@dataclass
class SiteInfo:
    """What a build did: ``index`` (path of index.html), ``n_samples``, data ``sizes``:
    bytes of ``index`` (manifest and every shard), ``manifest``, ``first_shard``,
    ``search`` (every shard) and ``pages``, and the counts ``n_shards``, ``n_pages``;
    images ``made`` / ``reused`` (with worker processes, an image two workers needed at
    the same time counts once per worker), ``problems`` (every run's notes),
    ``seconds``, ``benchmarks`` (each run's benchmark, in the order given; ``None`` where
    the run does not say)."""

    index: Path
    n_samples: int = 0
    sizes: dict[str, int] = field(default_factory=dict)
    made: int = 0
    reused: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    benchmarks: list[str | None] = field(default_factory=list)


def font_notice(need_cjk: bool) -> str:
    """The header notice for a missing CJK font: ``""`` when the pages show no CJK text
    (``need_cjk`` false) or the building machine has a CJK font (checked with
    :func:`~heritage_eval.report.fonts.has_cjk_font`, which also honours
    ``$HERITAGE_EVAL_CJK_FONT`` and needs no matplotlib); else an HTML paragraph naming
    the packages."""
    if not need_cjk:
        return ""
    from heritage_eval.report import fonts

    if fonts.has_cjk_font():
        return ""
    return ('<p class="font-notice" id="font-notice" data-source="build">No CJK font was '
            "found when this site was built, so Chinese/Japanese/Korean text may show as "
            f"empty boxes: {FONT_HINT}.</p>")


def _copy_plots(run: RunData, index: int, out_dir: Path) -> list[str]:
    dest = out_dir / "plots" / f"r{index}"
    shown = []
    for i, p in enumerate(run.plots):
        dest.mkdir(parents=True, exist_ok=True)
        name = f"{i:02d}-{p.name}"
        try:
            shutil.copyfile(p, dest / name)
        except OSError:
            continue
        shown.append(url_path(f"plots/r{index}/{name}"))
    return shown


def _page(title: str, headers: str, n_runs: int, notice: str = "") -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="static/style.css">
<script>window.HE_T0 = performance.now();</script>
</head><body>
<header class="top"><h1>heritage-eval viewer</h1><span class="muted">{esc(title)}</span>
</header>
{notice}<main>
<div class="runs{' many' if n_runs > 1 else ''}">{headers}</div>
<section id="browser"><div id="controls"></div><div id="count" class="muted"></div>
<div id="list"></div><div id="pager"></div></section>
</main>
<div id="detail" hidden><div class="detail-bar"><button id="d-prev" title="previous (←)">←</button>
<button id="d-next" title="next (→)">→</button><span id="d-title"></span>
<button id="d-close" title="close (Esc)">✕</button></div><div id="d-body"></div></div>
<div id="zoom" hidden><div id="z-stage"></div><div class="z-help">wheel: zoom · drag: pan ·
double-click: reset · Esc: close <button id="z-close">✕</button></div></div>
<noscript><p class="problem">The sample browser needs JavaScript; the run headers above
are plain HTML.</p></noscript>
<script src="data/index.js"></script>
<script src="static/app.js"></script>
</body></html>
"""


def build_site(run_dirs: list[str | Path] | list[Path] | list[str], out_dir: str | Path,
               *, copy_images: bool = False, workers: int | None = None,
               processes: int | None = None, shard_size: int | None = None,
               overwrite: bool = False) -> Path:
    """Write the static site of ``run_dirs`` (run folders, one benchmark or several)
    into ``out_dir`` and return the path of its ``index.html``.

    ``copy_images``: copy original images into the site (default: link them by a path
    relative to the site). ``workers``: threads for thumbnails (default: CPUs, ≤ 8).
    ``processes``: worker processes rendering the samples (0: none, render here;
    default: one per CPU, ≤ 8, for runs over :data:`PARALLEL_BYTES` of samples, else
    0); the site is the same either way. ``shard_size``: samples per index / search
    shard (default :data:`~heritage_eval.viewer.index_columns.SHARD_SIZE`, 50,000; at
    least 1). ``overwrite``: build into a non-empty ``out_dir`` that holds no earlier
    site (:mod:`.outdir`; the site's files are replaced, other files kept); an earlier
    site is rebuilt without it.
    Raises :class:`~heritage_eval.viewer.runs.ViewerError` when a path is not a run
    folder at all, holds the stale results of an unfinished ``--resume`` with new
    settings, or no run is given, and when ``out_dir`` is a file or a non-empty folder
    that is not a site (without ``overwrite``); :class:`ValueError` for a shard size
    below 1 (nothing written in any of these cases); everything else is reported on the
    page. Runs of different benchmarks are shown together, each under its own header;
    "where models disagree" pairs records of one benchmark only."""
    return build(run_dirs, out_dir, copy_images=copy_images, workers=workers,
                 processes=processes, shard_size=shard_size, overwrite=overwrite).index


def _line_batches(run: RunData, size: int) -> Iterator[list[tuple[int, bytes | str]]]:
    """The lines of ``run``'s ``samples.jsonl`` in batches of ``size``; a line over the
    size cap is its note (never held). An unreadable file ends the stream with a note."""
    if run.samples is None:
        return
    batch: list[tuple[int, bytes | str]] = []
    try:
        with run.samples.open("rb") as fh:
            for lineno, line in iter_lines(fh, str(run.samples)):
                batch.append((lineno, line.error if isinstance(line, LongLine) else line))
                if len(batch) >= size:
                    yield batch
                    batch = []
    except OSError as exc:
        run.note([f"{run.samples}: unreadable: {exc}"])
    if batch:
        yield batch


def _processes(runs: list[RunData], processes: int | None) -> int:
    """Worker processes for rendering: ``processes`` when given, else one per CPU (at
    most 8) when the runs hold over :data:`PARALLEL_BYTES` of samples, else 0 (render
    in this process)."""
    if processes is not None:
        return max(0, processes)
    size = sum(r.samples.stat().st_size for r in runs if r.samples is not None)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(8, cpus or 1) if size > PARALLEL_BYTES and (cpus or 1) > 1 else 0


class _Stream:
    """The one pass over every record: data pages, search texts, index columns and the
    disagreement facts written in site order as the batches come back."""

    def __init__(self, out: Path, scratch: Path, metrics: list[str],
                 shard_size: int | None) -> None:
        from heritage_eval.viewer import pages

        self.scratch = scratch
        self.page_size = pages.PAGE_SIZE
        self.pages = PageWriter(out / "data", self.page_size)
        self.cols = IndexColumns(scratch / "cols", metrics, shard_size=shard_size)
        self.search = SearchWriter(out / "data", self.cols.shard_size)
        self.state_counts = [0] * len(STATES)
        self.keys = KeySpool(scratch / "keys.jsonl")
        self.groups: dict[str, dict[str, int]] = {}
        self.models: dict[str, int] = {}
        self.images: dict[str, bool] = {}
        self.need_cjk = False
        self.made = self.reused = 0

    def add(self, index: int, run: RunData, missing: dict[str, None], batch: Batch) -> None:
        """Write batch ``batch`` of run ``index`` (batches in file order)."""
        run.note(batch.notes)
        missing.update(dict.fromkeys(batch.missing))
        for source, gone in batch.images:
            self.images.setdefault(source, gone)
        self.made += batch.made
        self.reused += batch.reused
        self.need_cjk = self.need_cjk or batch.cjk
        for row in batch.rows:
            run.n += 1
            run.record_models.setdefault(row.model, None)
            self.pages.add_item(index, row.html)
            self.search.add_item(row.search)
            bench, sample_id, state = row.key
            self.keys.add(bench, sample_id, index, row.model, state, row.scores)
            model = self.models.setdefault(row.model, len(self.models))
            sid, st, a, ref, th = row.items
            self.state_counts[int(st)] += 1
            self.cols.add((str(index), sid, st, str(model), a, ref, th),
                          group_codes(row.groups, self.groups), row.scores)

    def run_all(self, runs: list[RunData], ctxs: list[dict[str, None]], store: ImageStore,
                processes: int, threads: int | None) -> None:
        """Render every run's batches (in ``processes`` workers, or here when 0) and
        write them in order; at most two batches per worker are in flight."""
        jobs = ((i, r, batch) for i, r in enumerate(runs)
                for batch in _line_batches(r, self.page_size))
        if processes == 0:
            for i, r, lines in jobs:
                self.add(i, r, ctxs[i], render_batch(lines, str(r.samples),
                                                     str(r.path.resolve()), store, threads))
            return
        token = uuid.uuid4().hex
        locks = self.scratch / "locks"
        locks.mkdir()
        ctx = multiprocessing.get_context("fork" if "fork" in
                                          multiprocessing.get_all_start_methods() else None)
        with ProcessPoolExecutor(processes, mp_context=ctx) as pool:
            pending: collections.deque[tuple[int, RunData, Future[Batch]]] = collections.deque()
            for i, r, lines in jobs:
                pending.append((i, r, pool.submit(
                    worker_batch, token, str(store.out_dir), store.copy_images, str(locks), 1,
                    lines,
                    str(r.samples), str(r.path.resolve()))))
                if len(pending) >= 2 * processes:
                    j, rj, fut = pending.popleft()
                    self.add(j, rj, ctxs[j], fut.result())
            while pending:
                j, rj, fut = pending.popleft()
                self.add(j, rj, ctxs[j], fut.result())


def _static_files(out: Path) -> None:
    """Write :data:`STATIC_FILES` under ``out/static``: ``app.js`` joined from
    :data:`APP_PARTS`, ``style.css`` as it is."""
    (out / "static").mkdir(exist_ok=True)
    src = resources.files("heritage_eval.viewer").joinpath("static")
    (out / "static" / "app.js").write_bytes(
        b"\n".join(src.joinpath(name).read_bytes() for name in APP_PARTS))
    (out / "static" / "style.css").write_bytes(src.joinpath("style.css").read_bytes())


def build(run_dirs: list[str | Path] | list[Path] | list[str], out_dir: str | Path, *,
          copy_images: bool = False, workers: int | None = None,
          processes: int | None = None, shard_size: int | None = None,
          overwrite: bool = False) -> SiteInfo:
    """:func:`build_site`, returning a :class:`SiteInfo` (sizes, timings, problems).

    The records are streamed (one data page of them held at a time); memory grows with
    the distinct images, group values and models, not with the number of records
    (comparing runs adds one small entry per shared question: :mod:`.compare`)."""
    t0 = time.perf_counter()
    if not run_dirs:
        raise ViewerError("no run folder given")
    if shard_size is not None and shard_size < 1:  # before anything is written
        raise ValueError(f"shard size must be at least 1, not {shard_size}")
    out = Path(out_dir).resolve()
    runs = read_runs([Path(p) for p in run_dirs], exclude=out)
    check_site_folder(out, overwrite)
    out.mkdir(parents=True, exist_ok=True)
    mark_site(out)  # first: an interrupted build is still recognised as a site
    clear_data(out / "data")
    store = ImageStore(out, copy_images=copy_images)
    ctxs: list[dict[str, None]] = [{} for _ in runs]  # missing images per run
    metrics: dict[str, dict[str, Any]] = {}
    for r in runs:
        for spec in metric_specs(r.summary):
            metrics.setdefault(spec["name"], {k: spec.get(k) for k in
                                              ("name", "label", "scale", "decimals")})
    with tempfile.TemporaryDirectory(prefix=".build-", dir=out) as scratch:
        stream = _Stream(out, Path(scratch), list(metrics), shard_size)
        with stream.keys:
            stream.run_all(runs, ctxs, store, _processes(runs, processes), workers)
        stream.pages.flush()
        search_bytes = stream.search.close()
        run_meta: list[dict[str, Any]] = []
        headers: list[str] = []
        all_problems: list[str] = []
        start = 0
        for i, r in enumerate(runs):
            if r.unlisted:
                r.problems.append(f"… and {r.unlisted} more lines skipped (not listed)")
            problems = [*r.problems, *(f"image missing: {m}" for m in ctxs[i])]
            all_problems.extend(f"{r.name}: {p}" for p in problems)
            if r.refused:
                all_problems.append(f"{r.name}: {r.refused}")
            headers.append(run_header(r, i, _copy_plots(r, i, out), problems))
            run_meta.append({"name": r.name, "benchmark": r.benchmark, "models": r.models,
                             "n": r.n, "start": start, "refused": r.refused})
            start += r.n
        for name in stream.cols.extra_metrics:
            metrics[name] = {"name": name, "label": name, "scale": 1.0, "decimals": 3}
        need_cjk = stream.need_cjk or has_cjk(headers)
        notice = font_notice(need_cjk)
        head = {"version": 1, "page_size": stream.page_size,
                "runs": run_meta, "states": STATES,
                "groups": {k: list(v) for k, v in stream.groups.items()},
                "metrics": list(metrics.values()), "models": list(stream.models),
                "n": stream.cols.n, "compare": stream.keys.compare,
                "shards": stream.cols.shard_counts, "counts": stream.state_counts,
                "cjk": need_cjk, "cjk_notice": bool(notice)}
        shards = stream.cols.write_shards(out / "data", stream.keys.flags())
        manifest = write_text(out / "data" / "index.js",
                              "window.HE_INDEX=" + dump(head) + ";\n")
        sizes = {"index": manifest + sum(shards), "manifest": manifest,
                 "first_shard": shards[0] if shards else 0, "n_shards": len(shards),
                 "search": search_bytes, "pages": stream.pages.bytes,
                 "n_pages": stream.pages.n_pages}
    _static_files(out)
    with (out / "originals.txt").open("wb") as fh:
        fh.writelines(encode_path_line(src) for src, gone in stream.images.items() if not gone)
    title = " · ".join(f"{r.name} ({r.benchmark or '?'})" for r in runs)
    write_text(out / "index.html", _page(title, "".join(headers), len(runs), notice))
    return SiteInfo(index=out / "index.html", n_samples=start, sizes=sizes,
                    made=stream.made, reused=stream.reused, problems=all_problems,
                    seconds=time.perf_counter() - t0,
                    benchmarks=[r.benchmark for r in runs])


__all__ = ["FONT_HINT", "SiteInfo", "ViewerError", "build", "build_site", "font_notice",
           "has_cjk"]
