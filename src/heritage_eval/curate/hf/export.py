"""One ``export hf`` from an :class:`~.spec.ExportSource` to a finished folder.

Atomic: everything is written into a hidden temporary sibling of ``out``
(``.<name>.tmp-<owner>-XXXX``, see :mod:`.tempdirs`) and renamed into place at the end;
a failed or interrupted export leaves ``out`` as it was (the temporary folder is
removed; one left by a killed run is removed by the next export to the same ``out``).
With ``overwrite`` a previous ``out`` is moved aside first and deleted only once the
new one is in place. :func:`out_conflict` keeps ``out`` away from the source.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_eval.core.redact import redact
from heritage_eval.curate.hf.card import render_card
from heritage_eval.curate.hf.features import FORMAT
from heritage_eval.curate.hf.spec import ExportSource
from heritage_eval.curate.hf.tempdirs import (
    make_temp_dir,
    owner_name,
    remove_stale,
    temp_pattern,
)
from heritage_eval.curate.hf.write import ShardedWriter

CARD = "README.md"


@dataclass(frozen=True)
class ExportResult:
    """``out``: the folder written; ``rows``: rows per config; ``shards``: shard paths
    relative to ``out``."""

    out: Path
    rows: dict[str, int]
    shards: list[Path]


def out_conflict(out: Path, inputs: Iterable[Path]) -> str | None:
    """Why ``out`` may not be written, given what the export reads (``inputs``: files
    and folders), else ``None``. Paths are compared resolved (symlinks followed).
    Refused: ``out`` is an input, or holds one (replacing ``out`` would delete it), or
    is an existing non-empty folder inside an input folder (replacing it would delete
    part of the source). A new or empty folder inside an input is allowed: nothing of
    the source is removed."""
    target = Path(out).resolve()
    for given in inputs:
        src = Path(given).resolve()
        if target == src:
            return f"--out {out} is the source {given}: refused (it would be replaced)"
        if src.is_relative_to(target):
            return (f"--out {out} contains the source {given}: refused (replacing --out "
                    "would delete the source)")
        if target.is_relative_to(src) and target.is_dir() and any(target.iterdir()):
            return (f"--out {out} is a non-empty folder inside the source {given}: "
                    "refused (replacing it would delete part of the source)")
    return None


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
    ``overwrite`` or an ``out`` that :func:`out_conflict` refuses (nothing is written),
    ``OSError`` when writing fails."""
    from tqdm import tqdm

    out = Path(out)
    if not out.name:  # '.', '/': name the folder itself
        out = out.resolve()
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"--out {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise FileExistsError(f"--out {out} is not empty; nothing was written (use "
                              "another --out, or --overwrite to replace it)")
    conflict = out_conflict(out, src.inputs)
    if conflict:
        raise FileExistsError(conflict)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(out.parent, temp_pattern(re.escape(out.name)))  # a killed export's
    tmp = make_temp_dir(out.parent, out.name)
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
            old = owner_name(out.parent, out.name, "old")
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
