"""The site's data files: a small index loaded first, the sample pages loaded on demand.

All data files are JavaScript assigning to globals (``<script src>`` works from
``file://``, where Chromium blocks ``fetch()`` of local files):

- ``data/index.js`` -> ``window.HE_INDEX``: the manifest: runs, group values, metric
  specs, the count of samples per state (``counts``, in ``states`` order) and
  ``shards``, the number of samples in each index shard.
- ``data/index-NNNN.js`` -> ``HE_SHARD(k, cols)``: index shard ``k``
  (:data:`~heritage_eval.viewer.index_columns.SHARD_SIZE` samples) with one column per
  field (run, id, state, model, group value indexes, scores rounded to 4 decimals, a
  short answer and a short reference of :data:`SHORT_ANSWER` chars each, the thumbnail
  key, a "models disagree" flag). The first shard is all the first screen needs (the
  page renders from it, then loads the others one after another, adding their samples
  to the list and the filters' results as they come); the list shows the answer and the
  reference side by side for every benchmark.
- ``data/search-NNNN.js`` -> ``HE_SEARCH_SHARD(k, [text, …])``: per sample of index
  shard ``k`` a lower-case text (id, groups, answer, reference; :data:`SEARCH_CHARS`
  chars at most), loaded at the first search or once the index is loaded.
- ``data/r<run>-p<page>.js`` -> ``HE_PAGE(name, [html, …])``: the detail HTML of
  :data:`PAGE_SIZE` samples of one run, loaded when one of them is opened.

Every file is written as the samples come (:class:`PageWriter`, :class:`SearchWriter`,
:class:`~heritage_eval.viewer.index_columns.IndexColumns`): the build holds one data
page of samples at a time (the index shards are spooled and written at the end, when
the disagreement flags are known). Text is written with
:func:`~heritage_eval.viewer.textio.encode_text` (a lone surrogate as its ``\\uXXXX``
escape, the same character inside a JavaScript string).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from heritage_eval.core.record import SampleRecord
from heritage_eval.viewer.index_columns import SHARD_SIZE, dump, shard_name
from heritage_eval.viewer.textio import encode_text

PAGE_SIZE = 500
SHORT_ANSWER = 48
SEARCH_CHARS = 400
STATES = ["scored", "unparsed", "error", "unscored"]


def short_text(value: object, n: int) -> str:
    """``value`` on one line, at most ``n`` characters (``…`` when cut)."""
    if value is None:
        return ""
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def search_text(rec: SampleRecord) -> str:
    """The lower-case text a search matches (id, groups, answer, reference, response)."""
    parts = [rec.id, *rec.groups.values(), short_text(rec.answer, 120),
             short_text(rec.reference, 120), short_text(rec.response_text, 120),
             rec.error or ""]
    return " ".join(p for p in parts if p).lower()[:SEARCH_CHARS]


def clear_data(data_dir: Path) -> None:
    """Create ``data_dir`` and remove the ``*.js`` of an earlier build."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("*.js"):
        old.unlink()


class PageWriter:
    """Writes ``r<run>-p<page>.js`` files as detail HTML comes (:meth:`add`, or
    :meth:`add_item` for HTML already a JSON string), one page of ``page_size`` samples
    held at a time. ``bytes`` / ``n_pages``: written so far."""

    def __init__(self, data_dir: Path, page_size: int | None = None) -> None:
        self.data_dir = data_dir
        self.page_size = page_size or PAGE_SIZE
        self.bytes = 0
        self.n_pages = 0
        self._run = -1
        self._page = 0
        self._items: list[bytes] = []

    def add(self, run: int, html: str) -> None:
        """The detail HTML of the next sample of run ``run`` (runs in order)."""
        self.add_item(run, encode_text(dump(html)))

    def add_item(self, run: int, item: bytes) -> None:
        """:meth:`add` with the HTML as a JSON string already, UTF-8 encoded with
        :func:`~heritage_eval.viewer.textio.encode_text`."""
        if run != self._run:
            self.flush()
            self._run, self._page = run, 0
        self._items.append(item)
        if len(self._items) >= self.page_size:
            self.flush()

    def flush(self) -> None:
        """Write the held samples as the run's next page (nothing when none)."""
        if not self._items:
            return
        self._page += 1
        name = f"r{self._run}-p{self._page}"
        data = b"".join((encode_text(f"HE_PAGE({dump(name)},["), b",".join(self._items),
                         b"]);\n"))
        (self.data_dir / f"{name}.js").write_bytes(data)
        self.bytes += len(data)
        self.n_pages += 1
        self._items = []


class SearchWriter:
    """Streams the search shards ``data/search-NNNN.js`` (``HE_SEARCH_SHARD(k,[text, …]);``,
    ``shard_size`` samples each, aligned with the index shards): one :meth:`add` per
    sample in site order, then :meth:`close`, which returns the total size in bytes."""

    def __init__(self, data_dir: Path, shard_size: int | None = None) -> None:
        self.data_dir = data_dir
        self.shard_size = shard_size or SHARD_SIZE
        self.n_shards = 0
        self.bytes = 0
        self._fh: IO[bytes] | None = None
        self._n = 0

    def add(self, rec: SampleRecord) -> None:
        """The search text of the next sample (:func:`search_text`)."""
        self.add_item(encode_text(dump(search_text(rec))))

    def add_item(self, item: bytes) -> None:
        """The next sample's search text, already as a JSON string, UTF-8 encoded with
        :func:`~heritage_eval.viewer.textio.encode_text`."""
        if self._fh is None or self._n >= self.shard_size:
            self._end()
            self._fh = (self.data_dir / shard_name("search", self.n_shards)).open("wb")
            self._fh.write(f"HE_SEARCH_SHARD({self.n_shards},[".encode())
            self.n_shards += 1
            self._n = 0
        if self._n:
            self._fh.write(b",")
        self._fh.write(item)
        self._n += 1

    def _end(self) -> None:
        if self._fh is not None and not self._fh.closed:
            self._fh.write(b"]);\n")
            self.bytes += self._fh.tell()
            self._fh.close()

    def close(self) -> int:
        """Finish the last shard; returns the size of every shard in bytes."""
        self._end()
        return self.bytes
