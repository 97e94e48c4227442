"""The columns of ``data/index.js`` (``HE_INDEX.cols``), spooled to disk while the site
is built, so that the build holds one chunk of samples at a time, not every sample.

Each column is a JSON array over every sample in site order (see
:mod:`heritage_eval.viewer.pages` for what each holds). Its items are kept as JSON text
for :data:`CHUNK` samples, then appended to the column's file under a scratch folder;
:meth:`IndexColumns.write` joins the files into ``index.js``. A group key or a score
name first seen at sample ``i`` gets a column whose first ``i`` items are the "absent"
value (``-1`` for a group, ``null`` for a score), as if it had been known from the start.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

from heritage_eval.viewer.textio import encode_text

#: samples whose column items are held before they are appended to the files
CHUNK = 2000
#: the fixed columns, in ``HE_INDEX.cols`` order: run, id, state, model, short answer,
#: short reference, thumbnail key
FIXED = ("r", "id", "st", "m", "a", "ref", "th")
_PAD_BLOCK = 65536
#: one encoder for every item (``json.dumps`` with options builds one per call)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dump(value: object) -> str:
    """``value`` as compact JSON text (non-ASCII kept; NaN as JavaScript's ``NaN``), as
    ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``."""
    return _ENCODER.encode(value)


class SpooledColumn:
    """One column: items as JSON text, appended in chunks to ``path``. ``pad``: how
    many ``default`` items come first (samples before the column was known)."""

    def __init__(self, path: Path, default: str = "null", pad: int = 0) -> None:
        self.path = path
        self.default = default
        self.pad = pad
        self.items: list[str] = []
        self.written = 0

    def flush(self) -> None:
        """Append the padding and the held items to the file."""
        if not self.items and not self.pad:
            return
        with self.path.open("ab") as fh:
            while self.pad:
                k = min(self.pad, _PAD_BLOCK)
                fh.write(((","if self.written else "") + ",".join([self.default] * k)
                          ).encode())
                self.written += k
                self.pad -= k
            if self.items:
                fh.write(encode_text(("," if self.written else "") + ",".join(self.items)))
                self.written += len(self.items)
                self.items = []

    def copy_to(self, out: IO[bytes]) -> None:
        """Write the column as a JSON array to ``out`` (after :meth:`flush`)."""
        self.flush()
        out.write(b"[")
        if self.path.exists():
            with self.path.open("rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
        out.write(b"]")


class IndexColumns:
    """Every column of ``HE_INDEX.cols``, filled one sample at a time (:meth:`add`).

    ``folder``: scratch folder for the column files (created; the caller removes it).
    ``metrics``: the score names known in advance (the summaries' metric specs), in
    order; other names get a column when first seen (:attr:`extra_metrics`)."""

    def __init__(self, folder: Path, metrics: Sequence[str], chunk: int = CHUNK) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.chunk = chunk
        self.n = 0
        self._files = 0
        self.fixed = {name: self._column("null") for name in FIXED}
        self.groups: dict[str, SpooledColumn] = {}
        self.scores: dict[str, SpooledColumn] = {m: self._column("null") for m in metrics}
        self.extra_metrics: list[str] = []

    def _column(self, default: str, pad: int = 0) -> SpooledColumn:
        self._files += 1
        return SpooledColumn(self.folder / f"c{self._files}.part", default, pad)

    def add(self, fixed: Sequence[str], groups: Mapping[str, int],
            scores: Mapping[str, float | None]) -> None:
        """One sample: ``fixed`` the JSON items of :data:`FIXED` in order, ``groups``
        the value index per group key, ``scores`` the raw scores (rounded to 4
        decimals here)."""
        for col, item in zip(self.fixed.values(), fixed, strict=True):
            col.items.append(item)
        for k in groups:
            if k not in self.groups:
                self.groups[k] = self._column("-1", self.n)
        for k, col in self.groups.items():
            g = groups.get(k)
            col.items.append("-1" if g is None else str(g))
        for k in scores:
            if k not in self.scores:
                self.scores[k] = self._column("null", self.n)
                self.extra_metrics.append(k)
        for k, col in self.scores.items():
            sv = scores.get(k)
            col.items.append("null" if sv is None else dump(round(float(sv), 4)))
        self.n += 1
        if self.n % self.chunk == 0:
            self.flush()

    def flush(self) -> None:
        """Append every column's held items to its file."""
        for col in (*self.fixed.values(), *self.groups.values(), *self.scores.values()):
            col.flush()

    def write(self, path: Path, head: Mapping[str, object], dis: Iterable[int]) -> int:
        """Write ``index.js``: ``window.HE_INDEX=`` ``head`` with ``"cols"`` (placed
        where ``head`` has the key ``"cols"``, whose value is ignored) holding every
        column and ``dis``, the per-sample disagreement flags. Returns the size in
        bytes."""
        self.flush()
        flags = self._column("0")
        for k, f in enumerate(dis):
            flags.items.append("1" if f else "0")
            if (k + 1) % self.chunk == 0:
                flags.flush()
        marker = "\0cols\0"
        text = "window.HE_INDEX=" + dump({**head, "cols": marker}) + ";\n"
        before, after = text.split(dump(marker), 1)
        with path.open("wb") as out:
            out.write(encode_text(before))
            out.write(b"{")
            for name, col in self.fixed.items():
                out.write(encode_text(dump(name) + ":"))
                col.copy_to(out)
                out.write(b",")
            for label, cols in (("g", self.groups), ("s", self.scores)):
                out.write(encode_text(dump(label) + ":{"))
                for k, (name, col) in enumerate(cols.items()):
                    out.write(encode_text(("," if k else "") + dump(name) + ":"))
                    col.copy_to(out)
                out.write(b"},")
            out.write(b'"dis":')
            flags.copy_to(out)
            out.write(b"}")
            out.write(encode_text(after))
            return out.tell()
