"""The index columns (``HE_INDEX.cols`` in the page), spooled to disk while the site is
built and written as shards: ``data/index-NNNN.js``, each holding every column for
:data:`SHARD_SIZE` samples (the last one the rest), so that the page renders from the
first shard while the others load.

A shard file is ``HE_SHARD(k,{"r":[…],"id":[…],…,"g":{key:[…]},"s":{name:[…]},
"dis":[…]});`` (see :mod:`heritage_eval.viewer.pages` for what each column holds); every
shard holds every column known at the end of the build, in the same order. Column items
are kept as JSON text for :data:`CHUNK` samples, then appended to the column's part file
of the current shard under a scratch folder; :meth:`IndexColumns.write_shards` joins
them. A group key or a score name first seen at sample ``i`` reads as the "absent" value
(``-1`` for a group, ``null`` for a score) for every sample before ``i``, as if it had
been known from the start. Memory: :data:`CHUNK` samples' items and one shard's flags.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

from heritage_eval.viewer.textio import encode_text

#: samples whose column items are held before they are appended to the files
CHUNK = 2000
#: samples per index shard (``data/index-NNNN.js``; about 8 MiB of an Ancient-Bench run)
SHARD_SIZE = 50_000
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


def shard_name(kind: str, k: int) -> str:
    """The file name of shard ``k`` (from 0) of ``kind`` (``"index"`` or ``"search"``):
    ``index-0000.js``; 4 digits at least (app.js pads the same way)."""
    return f"{kind}-{k:04d}.js"


class SpooledColumn:
    """One column of one shard: items as JSON text, appended in chunks to ``path``.
    ``pad``: how many ``default`` items come first (samples of the shard before the
    column was known)."""

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
        """Write the column as a JSON array to ``out`` (after :meth:`flush`); the part
        file is removed."""
        self.flush()
        out.write(b"[")
        if self.path.exists():
            with self.path.open("rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
            self.path.unlink()
        out.write(b"]")


class IndexColumns:
    """Every column of ``HE_INDEX.cols``, filled one sample at a time (:meth:`add`) and
    cut into shards of ``shard_size`` samples (default :data:`SHARD_SIZE`).

    ``folder``: scratch folder for the column files (created; the caller removes it).
    ``metrics``: the score names known in advance (the summaries' metric specs), in
    order; other names get a column when first seen (:attr:`extra_metrics`).
    Raises :class:`ValueError` when ``shard_size`` < 1."""

    def __init__(self, folder: Path, metrics: Sequence[str], chunk: int = CHUNK,
                 shard_size: int | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.chunk = chunk
        self.shard_size = SHARD_SIZE if shard_size is None else shard_size
        if self.shard_size < 1:
            raise ValueError(f"shard size must be at least 1, not {self.shard_size}")
        self.n = 0
        #: samples per shard, in order (the last one still filling)
        self.shard_counts: list[int] = []
        self.group_keys: list[str] = []
        self.score_keys: list[str] = list(metrics)
        self.extra_metrics: list[str] = []
        self._files = 0
        # per shard: fixed columns (FIXED order), group and score columns by key
        self._shards: list[tuple[list[SpooledColumn], dict[str, SpooledColumn],
                                 dict[str, SpooledColumn]]] = []

    def _column(self, default: str, pad: int = 0) -> SpooledColumn:
        self._files += 1
        return SpooledColumn(self.folder / f"c{self._files}.part", default, pad)

    def _new_shard(self) -> None:
        if self._shards:
            self._flush_shard(self._shards[-1])
        self._shards.append(([self._column("null") for _ in FIXED],
                             {k: self._column("-1") for k in self.group_keys},
                             {k: self._column("null") for k in self.score_keys}))
        self.shard_counts.append(0)

    def add(self, fixed: Sequence[str], groups: Mapping[str, int],
            scores: Mapping[str, float | None]) -> None:
        """One sample: ``fixed`` the JSON items of :data:`FIXED` in order, ``groups``
        the value index per group key, ``scores`` the raw scores (rounded to 4
        decimals here)."""
        if not self.shard_counts or self.shard_counts[-1] >= self.shard_size:
            self._new_shard()
        at = self.shard_counts[-1]
        fcols, gcols, scols = self._shards[-1]
        for col, item in zip(fcols, fixed, strict=True):
            col.items.append(item)
        for k in groups:
            if k not in gcols:
                gcols[k] = self._column("-1", at)
                self.group_keys.append(k)
        for k, col in gcols.items():
            g = groups.get(k)
            col.items.append("-1" if g is None else str(g))
        for k in scores:
            if k not in scols:
                scols[k] = self._column("null", at)
                self.score_keys.append(k)
                self.extra_metrics.append(k)
        for k, col in scols.items():
            sv = scores.get(k)
            col.items.append("null" if sv is None else dump(round(float(sv), 4)))
        self.n += 1
        self.shard_counts[-1] = at + 1
        if (at + 1) % self.chunk == 0:
            self._flush_shard(self._shards[-1])

    @staticmethod
    def _flush_shard(shard: tuple[list[SpooledColumn], dict[str, SpooledColumn],
                                  dict[str, SpooledColumn]]) -> None:
        fcols, gcols, scols = shard
        for col in (*fcols, *gcols.values(), *scols.values()):
            col.flush()

    def write_shards(self, data_dir: Path, dis: Iterable[int]) -> list[int]:
        """Write ``data_dir/index-NNNN.js`` for every shard (:func:`shard_name`), each
        with its slice of ``dis``, the per-sample disagreement flags in site order (one
        per sample). Returns each file's size in bytes, in shard order (no file and
        ``[]`` when there is no sample)."""
        flags = iter(dis)
        sizes = []
        for k, (count, (fcols, gcols, scols)) in enumerate(zip(self.shard_counts,
                                                               self._shards, strict=True)):
            with (data_dir / shard_name("index", k)).open("wb") as out:
                out.write(f"HE_SHARD({k},{{".encode())
                for name, col in zip(FIXED, fcols, strict=True):
                    out.write(encode_text(dump(name) + ":"))
                    col.copy_to(out)
                    out.write(b",")
                for label, keys, cols, default in (("g", self.group_keys, gcols, "-1"),
                                                   ("s", self.score_keys, scols, "null")):
                    out.write(encode_text(dump(label) + ":{"))
                    for j, key in enumerate(keys):
                        out.write(encode_text(("," if j else "") + dump(key) + ":"))
                        part = cols.get(key)
                        if part is None:  # first seen in a later shard
                            out.write(("[" + ",".join([default] * count) + "]").encode())
                        else:
                            part.copy_to(out)
                    out.write(b"},")
                out.write(b'"dis":[')
                out.write(",".join("1" if f else "0"
                                   for f in itertools.islice(flags, count)).encode())
                out.write(b"]});\n")
                sizes.append(out.tell())
        return sizes
