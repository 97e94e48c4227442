"""Build the static results site of one or several run folders.

``build_site(run_dirs, out_dir)`` writes::

    out_dir/index.html        header of every run (static HTML) + the sample browser
    out_dir/static/           app.js, style.css (local; no CDN, no network)
    out_dir/data/             index.js, search.js, r<run>-p<page>.js (see pages.py)
    out_dir/thumbs/, views/   thumbnails and zoom copies (cached; see images.py)
    out_dir/plots/r<run>/     the runs' PNG plots
    out_dir/originals.txt     originals the site links to (what --serve may send)

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

import os
import re
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from heritage_eval.core.record import SampleRecord
from heritage_eval.viewer.header import metric_specs, run_header
from heritage_eval.viewer.html import esc
from heritage_eval.viewer.images import WEB_SUFFIXES, ImageEntry, ImageStore
from heritage_eval.viewer.pages import SampleRow, index_data, write_data
from heritage_eval.viewer.renderers import RenderContext, render_sample
from heritage_eval.viewer.runs import RunData, ViewerError, read_runs

STATIC_FILES = ("app.js", "style.css")
_IMAGE_SUFFIXES = WEB_SUFFIXES | {".tif", ".tiff", ".pdf"}
#: CJK text (Unicode blocks; a Latin-only system font has none of them): Hangul jamo
#: (and extensions A, B), CJK radicals, CJK symbols and punctuation except the ideographic
#: space (the diff view pads with it), kana (and the supplement), bopomofo, kanbun,
#: strokes, enclosed CJK, Han (extension A, unified, compatibility, planes 2-3 =
#: extensions B-I), Hangul syllables, CJK compatibility forms, full-width forms,
#: counting rods (ideographic tally marks).
_CJK = re.compile("[\u1100-\u11ff\u2e80-\u2fff\u3001-\u9fff\ua960-\ua97f"
                  "\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
                  "\U0001aff0-\U0001b16f\U0001d360-\U0001d37f\U00020000-\U0003ffff]")
#: The install hint of the notice (Debian/Ubuntu package first: what ``make fonts`` and
#: the CI image use).
FONT_HINT = ("install a CJK font, e.g. <code>sudo apt install fonts-noto-cjk</code> "
             "(Debian/Ubuntu), <code>google-noto-sans-cjk-fonts</code> (Fedora) or any "
             "Noto Sans CJK / Source Han Sans font, then reload the page")


@dataclass
class SiteInfo:
    """What a build did: ``index`` (path of index.html), ``n_samples``, data ``sizes`` in
    bytes (index / search / pages), images ``made`` / ``reused``, ``problems`` (every
    run's notes), ``seconds``."""

    index: Path
    n_samples: int = 0
    sizes: dict[str, int] = field(default_factory=dict)
    made: int = 0
    reused: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


class _Ctx(RenderContext):
    """A render context that remembers the missing images of its run."""

    def __init__(self, store: ImageStore, run_dir: str) -> None:
        super().__init__(store, run_dir)
        self.missing: dict[str, None] = {}

    def image(self, record: SampleRecord, path: str, page: int = 0, *,
              width: int | None = None, height: int | None = None) -> ImageEntry:
        e = super().image(record, path, page, width=width, height=height)
        if e.missing:
            self.missing[e.missing] = None
        return e


def _detail_images(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        if os.path.splitext(value)[1].lower() in _IMAGE_SUFFIXES and "\n" not in value:
            out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _detail_images(v, out)
    elif isinstance(value, list):
        for v in value:
            _detail_images(v, out)


def _register(rec: SampleRecord, ctx: _Ctx) -> str:
    """Register every image of ``rec``; return its list thumbnail key."""
    entries = [(im.role, ctx.image(rec, im.path, im.page, width=im.width, height=im.height))
               for turn in rec.turns for im in turn.images]
    first = next((e for role, e in entries if role in ("target", "artwork")),
                 entries[0][1] if entries else None)
    paths: list[str] = []
    _detail_images(rec.details, paths)
    for p in paths:  # pre-make what exists; a renderer that shows a missing one marks it
        if not p.startswith("@") and os.path.isfile(ctx.resolve(rec, p)):
            ctx.image(rec, p)
    if first is None:
        return ""
    return "!" if first.missing else first.key


def has_cjk(texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` holds a CJK character (blocks of ``_CJK``)."""
    return any(_CJK.search(t) for t in texts)


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
        shown.append(f"plots/r{index}/{name}")
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
               *, copy_images: bool = False, workers: int | None = None) -> Path:
    """Write the static site of ``run_dirs`` (run folders, one benchmark or several)
    into ``out_dir`` and return the path of its ``index.html``.

    ``copy_images``: copy original images into the site (default: link them by a path
    relative to the site). ``workers``: threads for thumbnails (default: CPUs, ≤ 8).
    Raises :class:`~heritage_eval.viewer.runs.ViewerError` when a path is not a run
    folder at all or no run is given; everything else is reported on the page."""
    return build(run_dirs, out_dir, copy_images=copy_images, workers=workers).index


def build(run_dirs: list[str | Path] | list[Path] | list[str], out_dir: str | Path, *,
          copy_images: bool = False, workers: int | None = None) -> SiteInfo:
    """:func:`build_site`, returning a :class:`SiteInfo` (sizes, timings, problems)."""
    t0 = time.perf_counter()
    if not run_dirs:
        raise ViewerError("no run folder given")
    out = Path(out_dir).resolve()
    runs = read_runs([Path(p) for p in run_dirs], exclude=out)
    out.mkdir(parents=True, exist_ok=True)
    store = ImageStore(out, copy_images=copy_images)
    ctxs = [_Ctx(store, str(r.path.resolve())) for r in runs]
    rows = [SampleRow(i, rec, _register(rec, ctxs[i]))
            for i, r in enumerate(runs) for rec in r.records]
    store.make_all(workers)
    for row in rows:
        row.html = render_sample(row.record, ctxs[row.run])
    metrics: dict[str, dict[str, Any]] = {}
    run_meta: list[dict[str, Any]] = []
    headers: list[str] = []
    all_problems: list[str] = []
    start = 0
    for i, r in enumerate(runs):
        for spec in metric_specs(r.summary):
            metrics.setdefault(spec["name"], {k: spec.get(k) for k in
                                              ("name", "label", "scale", "decimals")})
        problems = [*r.problems, *(f"image missing: {m}" for m in ctxs[i].missing)]
        all_problems.extend(f"{r.name}: {p}" for p in problems)
        if r.refused:
            all_problems.append(f"{r.name}: {r.refused}")
        headers.append(run_header(r, i, _copy_plots(r, i, out), problems))
        run_meta.append({"name": r.name, "benchmark": r.benchmark, "models": r.models,
                         "n": len(r.records), "start": start, "refused": r.refused})
        start += len(r.records)
    for rec_names in {n for row in rows for n in row.record.scores} - set(metrics):
        metrics[rec_names] = {"name": rec_names, "label": rec_names, "scale": 1.0,
                              "decimals": 3}
    index = index_data(rows, run_meta, list(metrics.values()), out.as_posix())
    need_cjk = has_cjk(row.html for row in rows) or has_cjk(headers)
    notice = font_notice(need_cjk)
    index["cjk"], index["cjk_notice"] = need_cjk, bool(notice)
    sizes = write_data(out / "data", rows, index)
    (out / "static").mkdir(exist_ok=True)
    for name in STATIC_FILES:
        data = resources.files("heritage_eval.viewer").joinpath("static", name).read_bytes()
        (out / "static" / name).write_bytes(data)
    (out / "originals.txt").write_text(
        "".join(e.source + "\n" for e in store.entries if not e.missing), encoding="utf-8")
    title = " · ".join(f"{r.name} ({r.benchmark or '?'})" for r in runs)
    (out / "index.html").write_text(_page(title, "".join(headers), len(runs), notice),
                                    encoding="utf-8")
    return SiteInfo(index=out / "index.html", n_samples=len(rows), sizes=sizes,
                    made=store.made, reused=store.reused, problems=all_problems,
                    seconds=time.perf_counter() - t0)


__all__ = ["FONT_HINT", "SiteInfo", "ViewerError", "build", "build_site", "font_notice",
           "has_cjk"]
