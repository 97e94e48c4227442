"""Streamed, sharded parquet writing: rows in, ``data/<config>/test-NNNNN-of-MMMMM.parquet``
out.

Rows are buffered per config and written as a row group as soon as the buffer holds
``row_group_bytes`` (or :data:`MAX_GROUP_ROWS` rows), so memory holds at most one row
group per config, never the whole benchmark. A shard is closed and the next one opened
when the next row group would take it past ``max_shard_bytes`` (sizes are the cells'
uncompressed bytes, :func:`~.features.cell_bytes`; images are stored as they are, so
compression changes them little). Shard names follow the Hugging Face Hub's convention
(``<split>-<index>-of-<count>.parquet``); the count is known only at the end, so shards
are written as ``part-<index>.parquet`` and renamed by :meth:`ShardedWriter.close`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from heritage_eval.curate.hf.features import Column, arrow_schema, cell_bytes

#: The one split of every export: the benchmarks are evaluation sets.
SPLIT = "test"
#: Most rows in one row group (text-only rows are small).
MAX_GROUP_ROWS = 1000
#: Folder under the export root holding one sub-folder of shards per config.
DATA_DIR = "data"


@dataclass
class _Open:
    """The shard being written for one config and its pending rows."""

    index: int = 0
    writer: pq.ParquetWriter | None = None
    shard_bytes: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)
    pending_bytes: int = 0
    paths: list[Path] = field(default_factory=list)
    n_rows: int = 0


class ShardedWriter:
    """Write rows of ``columns`` under ``root/data/<config>/``.

    ``max_shard_bytes``: largest shard (uncompressed cell bytes, > 0);
    ``row_group_bytes``: row group cut (default: a quarter of a shard, at most 64 MB);
    ``meta``: JSON-able provenance stored in every shard's schema metadata.
    Raises ``ValueError`` for a config name that is not a plain folder name."""

    def __init__(self, root: Path, columns: Sequence[Column], meta: dict[str, Any],
                 max_shard_bytes: int, row_group_bytes: int | None = None) -> None:
        if max_shard_bytes <= 0:
            raise ValueError(f"max shard size must be > 0 bytes, got {max_shard_bytes}")
        self.root = Path(root)
        self.columns = list(columns)
        self.schema = arrow_schema(self.columns, meta)
        self.max_shard_bytes = max_shard_bytes
        self.row_group_bytes = row_group_bytes or max(1, min(max_shard_bytes // 4, 64 << 20))
        self._open: dict[str, _Open] = {}

    def add(self, config: str, row: dict[str, Any]) -> None:
        """Queue one row (every column's value, ``None`` for null) of ``config``."""
        if not config or "/" in config or "\\" in config or config in (".", ".."):
            raise ValueError(f"config name {config!r} is not a plain folder name")
        state = self._open.setdefault(config, _Open())
        state.rows.append({c.name: row.get(c.name) for c in self.columns})
        state.pending_bytes += sum(cell_bytes(v) for v in row.values())
        if state.pending_bytes >= self.row_group_bytes or len(state.rows) >= MAX_GROUP_ROWS:
            self._flush(config, state)

    def _flush(self, config: str, state: _Open) -> None:
        if not state.rows:
            return
        if state.writer is not None and state.shard_bytes > 0 and \
                state.shard_bytes + state.pending_bytes > self.max_shard_bytes:
            state.writer.close()
            state.writer = None
            state.index += 1
            state.shard_bytes = 0
        if state.writer is None:
            path = self.root / DATA_DIR / config / f"part-{state.index:05d}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            state.writer = pq.ParquetWriter(str(path), self.schema)
            state.paths.append(path)
        table = pa.Table.from_pylist(state.rows, schema=self.schema)
        state.writer.write_table(table)
        state.shard_bytes += state.pending_bytes
        state.n_rows += len(state.rows)
        state.rows, state.pending_bytes = [], 0

    def close(self) -> dict[str, tuple[int, list[Path]]]:
        """Flush, close every shard and give them their final names. Returns
        ``{config: (row count, [shard paths relative to root])}`` in the order configs
        were first added."""
        out: dict[str, tuple[int, list[Path]]] = {}
        for config, state in self._open.items():
            self._flush(config, state)
            if state.writer is not None:
                state.writer.close()
            count = len(state.paths)
            final: list[Path] = []
            for i, path in enumerate(state.paths):
                target = path.with_name(f"{SPLIT}-{i:05d}-of-{count:05d}.parquet")
                path.rename(target)
                final.append(target.relative_to(self.root))
            out[config] = (state.n_rows, final)
        return out

    def abort(self) -> None:
        """Close open shards without renaming (the caller removes the folder)."""
        for state in self._open.values():
            if state.writer is not None:
                state.writer.close()
                state.writer = None
