"""One batch of ``samples.jsonl`` lines made into what the site shows: parsed, images
registered (thumbnails made), detail HTML rendered, index items encoded.

:func:`render_batch` is what a build runs for every batch of lines, in the build's
process or in a worker process (:mod:`heritage_eval.viewer.site` decides). It gets
raw lines and returns plain data (strings, numbers), so that batches can be rendered in
parallel and written in order. A line is read by the rules of
:func:`heritage_eval.core.records_io.iter_records` (not JSON, another schema or not a
valid record: skipped, named ``file:line``).

Thumbnails are made by whichever process first needs them; the files are named by a hash
of the image (:mod:`.images`) and written atomically, so two workers making the same one
write the same bytes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from heritage_eval.core.record import SampleRecord
from heritage_eval.viewer.images import WEB_SUFFIXES, ImageEntry, ImageStore
from heritage_eval.viewer.index_columns import dump
from heritage_eval.viewer.pages import SHORT_ANSWER, STATES, search_text, short_text
from heritage_eval.viewer.renderers import RenderContext, render_sample
from heritage_eval.viewer.textio import encode_text

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


def has_cjk(texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` holds a CJK character (blocks of ``_CJK``)."""
    return any(_CJK.search(t) for t in texts)


class Ctx(RenderContext):
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


def register(rec: SampleRecord, ctx: Ctx) -> ImageEntry | None:
    """Register every image of ``rec``; return the one the list shows (``None``: no
    image)."""
    entries = [(im.role, ctx.image(rec, im.path, im.page, width=im.width, height=im.height))
               for turn in rec.turns for im in turn.images]
    first = next((e for role, e in entries if role in ("target", "artwork")),
                 entries[0][1] if entries else None)
    paths: list[str] = []
    _detail_images(rec.details, paths)
    for p in paths:  # pre-make what exists; a renderer that shows a missing one marks it
        if not p.startswith("@") and os.path.isfile(ctx.resolve(rec, p)):
            ctx.image(rec, p)
    return first


def parse_line(raw: bytes, where: str) -> SampleRecord | str | None:
    """One ``samples.jsonl`` line: the record, ``None`` for a blank line, else the note
    ``"<where>: skipped: <reason>"`` (:func:`~heritage_eval.core.records_io.parse_record_line`)."""
    from heritage_eval.core.records_io import parse_record_line

    return parse_record_line(raw, where)


@dataclass
class Row:
    """One record as the site needs it: ``html`` (its detail view as a JSON string item of
    a data page, UTF-8 with :func:`~heritage_eval.viewer.textio.encode_text`: encoded
    here, in the worker, so the building process only joins bytes), ``search`` (JSON
    item of the search shards, encoded the same way), ``items`` (JSON items of the index
    columns id, state, answer, reference, thumbnail; the run and model are coded by the
    build), ``model``, ``groups``, ``scores``, ``key`` (the
    :class:`~heritage_eval.viewer.compare.KeySpool` facts: benchmark, id, state)."""

    html: bytes
    search: bytes
    items: tuple[str, str, str, str, str]
    model: str
    groups: dict[str, str]
    scores: dict[str, float | None]
    key: tuple[str, str, str]


@dataclass
class Batch:
    """What :func:`render_batch` returns: ``rows`` in line order, ``notes`` (skipped
    lines, in line order), ``missing`` (missing-image notes), ``images`` (``(source,
    missing)`` of every image registered, for ``originals.txt``), thumbnails ``made`` /
    ``reused``, ``cjk`` (some row's detail HTML holds CJK text: one is enough, so the
    rows after the first such are not searched)."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    images: list[tuple[str, bool]] = field(default_factory=list)
    made: int = 0
    reused: int = 0
    cjk: bool = False


def _row(rec: SampleRecord, html: str, first: ImageEntry | None) -> Row:
    thumb = "" if first is None else "!" if first.missing else first.key
    state = rec.state.value
    return Row(encode_text(dump(html)), encode_text(dump(search_text(rec))),
               (dump(rec.id), str(STATES.index(state)),
                dump(short_text(rec.answer if rec.answer is not None else rec.response_text,
                                SHORT_ANSWER)),
                dump(short_text(rec.reference, SHORT_ANSWER)), dump(thumb)),
               rec.model, rec.groups, rec.scores, (rec.benchmark, rec.id, state))


def render_batch(lines: list[tuple[int, bytes | str]], where: str, run_dir: str,
                 store: ImageStore, threads: int | None = None) -> Batch:
    """Render ``lines`` (``(line number, raw bytes)``, or a note for a line that could
    not be read, kept in order) of the ``samples.jsonl`` at ``where`` of the run folder
    ``run_dir``, registering images in ``store`` (new thumbnails made with ``threads``
    threads)."""
    out = Batch()
    ctx = Ctx(store, run_dir)
    known, made, reused = len(store.entries_by_key), store.made, store.reused
    recs: list[SampleRecord] = []
    for lineno, raw in lines:
        got = raw if isinstance(raw, str) else parse_line(raw, f"{where}:{lineno}")
        if isinstance(got, SampleRecord):
            recs.append(got)
        elif got is not None:
            out.notes.append(got)
    store.defer = True
    firsts = [register(rec, ctx) for rec in recs]
    store.make_pending(threads)
    for rec, first in zip(recs, firsts, strict=True):
        html = render_sample(rec, ctx)
        out.cjk = out.cjk or has_cjk([html])
        out.rows.append(_row(rec, html, first))
    out.missing = list(ctx.missing)
    out.images = [(e.source, e.missing is not None)
                  for e in list(store.entries_by_key.values())[known:]]
    out.made, out.reused = store.made - made, store.reused - reused
    return out


#: the image store of this worker process, per build (``token``)
_WORKER: dict[str, ImageStore] = {}


def worker_batch(token: str, out_dir: str, copy_images: bool, lock_dir: str, threads: int,
                 lines: list[tuple[int, bytes | str]], where: str, run_dir: str) -> Batch:
    """:func:`render_batch` in a worker process, with the process's own store for the
    build ``token`` (kept between batches: an image is looked at once per process);
    ``lock_dir``: the folder where the workers agree on who makes which image."""
    from pathlib import Path

    store = _WORKER.get(token)
    if store is None:
        _WORKER.clear()
        store = _WORKER[token] = ImageStore(Path(out_dir), copy_images=copy_images)
        store.lock_dir = Path(lock_dir)
    return render_batch(lines, where, run_dir, store, threads)


def group_codes(groups: Mapping[str, str], known: dict[str, dict[str, int]]
                ) -> dict[str, int]:
    """The value index of each group of a record (new values appended to ``known``)."""
    out = {}
    for k, v in groups.items():
        ix = known.setdefault(k, {})
        out[k] = ix.setdefault(v, len(ix))
    return out
