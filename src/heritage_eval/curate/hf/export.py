"""One ``export hf`` from an :class:`~.spec.ExportSource` to a finished folder.

Atomic: everything is written into a hidden temporary sibling of ``out``
(``.<name>.tmp-XXXX``) and renamed into place at the end; a failed or interrupted
export leaves ``out`` as it was (the temporary folder is removed). With ``overwrite`` a
previous ``out`` is moved aside first and deleted only once the new one is in place.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_eval.core.redact import redact
from heritage_eval.curate.hf.card import render_card
from heritage_eval.curate.hf.features import FORMAT
from heritage_eval.curate.hf.spec import ExportSource
from heritage_eval.curate.hf.write import ShardedWriter

CARD = "README.md"


@dataclass(frozen=True)
class ExportResult:
    """``out``: the folder written; ``rows``: rows per config; ``shards``: shard paths
    relative to ``out``."""

    out: Path
    rows: dict[str, int]
    shards: list[Path]


def provenance(src: ExportSource, license_id: str) -> dict[str, Any]:
    """The card's provenance block: the source's, plus tool version, UTC date, licence."""
    from heritage_eval import __version__

    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    return {"benchmark": src.benchmark, **src.provenance,
            "tool": f"heritage-eval {__version__} (export hf, {FORMAT})",
            "date": now, "license": license_id}


def write_export(src: ExportSource, out: Path, license_id: str, max_shard_bytes: int,
                 overwrite: bool = False, progress: bool = True) -> ExportResult:
    """Write ``src`` to ``out`` (parquet shards under ``out/data/<config>/`` and the card
    ``out/README.md``). Raises ``FileExistsError`` for a non-empty ``out`` without
    ``overwrite`` (nothing is written), ``OSError`` when writing fails."""
    from tqdm import tqdm

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"--out {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise FileExistsError(f"--out {out} is not empty; nothing was written (use "
                              "another --out, or --overwrite to replace it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=str(out.parent)))
    prov = provenance(src, license_id)
    meta = {"format": FORMAT, "benchmark": src.benchmark, **src.meta}
    writer = ShardedWriter(tmp, src.columns, meta, max_shard_bytes)
    try:
        tty = sys.stderr.isatty()
        with tqdm(total=src.total, desc=f"export hf {src.benchmark}", unit="row",
                  file=sys.stderr, disable=not progress or src.total == 0,
                  mininterval=0.1 if tty else 30.0) as bar:
            for config, row in src.rows():
                writer.add(config, row)
                bar.update(1)
        shards = writer.close()
        card = redact(render_card(src, shards, license_id, prov))
        (tmp / CARD).write_text(card, encoding="utf-8")
        old: Path | None = None
        if out.exists():
            old = out.with_name(f".{out.name}.old-{tmp.name.rsplit('-', 1)[-1]}")
            out.rename(old)
        tmp.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        writer.abort()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    paths = [out / p for _, ps in shards.values() for p in ps]
    return ExportResult(out=out, rows={c: n for c, (n, _) in shards.items()},
                        shards=[p.relative_to(out) for p in paths])
