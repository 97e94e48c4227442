"""The site's data files: a small index loaded first, the sample pages loaded on demand.

All data files are JavaScript assigning to globals (``<script src>`` works from
``file://``, where Chromium blocks ``fetch()`` of local files):

- ``data/index.js`` -> ``window.HE_INDEX``: runs, group values, metric specs and one
  column per field over every sample (run, id, state, model, group value indexes, scores
  rounded to 4 decimals, a short answer and a short reference of :data:`SHORT_ANSWER`
  chars each, the thumbnail key, a "models disagree" flag). This is all the first screen
  needs; the list shows the answer and the reference side by side for every benchmark.
- ``data/search.js`` -> ``window.HE_SEARCH``: per sample a lower-case text (id, groups,
  answer, reference; :data:`SEARCH_CHARS` chars at most), loaded at the first search.
- ``data/r<run>-p<page>.js`` -> ``HE_PAGE(name, [html, …])``: the detail HTML of
  :data:`PAGE_SIZE` samples of one run, loaded when one of them is opened.

Every file is written as the samples come (:class:`PageWriter`, :class:`SearchWriter`,
:class:`~heritage_eval.viewer.index_columns.IndexColumns`): the build holds one data
page of samples at a time. Text is written with
:func:`~heritage_eval.viewer.textio.encode_text` (a lone surrogate as its ``\\uXXXX``
escape, the same character inside a JavaScript string).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from heritage_eval.core.record import SampleRecord
from heritage_eval.viewer.index_columns import dump
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
    """Writes ``r<run>-p<page>.js`` files as detail HTML comes (:meth:`add`), one page of
    ``page_size`` samples held at a time. ``bytes`` / ``n_pages``: written so far."""

    def __init__(self, data_dir: Path, page_size: int | None = None) -> None:
        self.data_dir = data_dir
        self.page_size = page_size or PAGE_SIZE
        self.bytes = 0
        self.n_pages = 0
        self._run = -1
        self._page = 0
        self._items: list[str] = []

    def add(self, run: int, html: str) -> None:
        """The detail HTML of the next sample of run ``run`` (runs in order)."""
        if run != self._run:
            self.flush()
            self._run, self._page = run, 0
        self._items.append(html)
        if len(self._items) >= self.page_size:
            self.flush()

    def flush(self) -> None:
        """Write the held samples as the run's next page (nothing when none)."""
        if not self._items:
            return
        self._page += 1
        name = f"r{self._run}-p{self._page}"
        data = encode_text(f"HE_PAGE({dump(name)},{dump(self._items)});\n")
        (self.data_dir / f"{name}.js").write_bytes(data)
        self.bytes += len(data)
        self.n_pages += 1
        self._items = []


class SearchWriter:
    """Streams ``search.js`` (``window.HE_SEARCH=[text, …];``): one :meth:`add` per
    sample in site order, then :meth:`close`, which returns the size in bytes."""

    def __init__(self, path: Path) -> None:
        self._fh: IO[bytes] = path.open("wb")
        self._fh.write(b"window.HE_SEARCH=[")
        self._first = True

    def add(self, rec: SampleRecord) -> None:
        """The search text of the next sample (:func:`search_text`)."""
        self.add_item(dump(search_text(rec)))

    def add_item(self, item: str) -> None:
        """The next sample's search text, already as a JSON string."""
        self._fh.write(encode_text(item if self._first else "," + item))
        self._first = False

    def close(self) -> int:
        """Finish the file; returns its size in bytes."""
        if self._fh.closed:
            return 0
        self._fh.write(b"];\n")
        size = self._fh.tell()
        self._fh.close()
        return size
