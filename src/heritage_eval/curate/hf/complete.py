"""Is an ``export hf`` folder complete? Checked before it is read back.

Two records say what should be there:

* the shard names: ``<split>-<i>-of-<N>.parquet`` (Hugging Face Hub convention, written
  by :mod:`.write`) — every index ``0 … N-1`` of each series (same folder, split and
  ``N``) must be present;
* the dataset card's ``dataset_info`` (written by :mod:`.card`): for each config the
  ``test`` split's ``num_examples`` must equal the rows of the shards its ``configs``
  entry's ``data_files`` pattern matches (row counts from the parquet footers: no data
  page is read). The total over every shard must equal ``num_examples`` of the
  ``default`` config. (A config whose pattern matches no shard is skipped when that
total is right: the shards were re-arranged, e.g. moved to the folder's top.)

A folder without a card, or a card without ``dataset_info``, is checked by the shard
names only (the card is optional for :func:`.read.materialise`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from heritage_eval.curate.hf.spec import HfReadError

_SERIES = re.compile(r"^(?P<split>.+)-(?P<i>\d{5,})-of-(?P<n>\d{5,})\.parquet$")


def missing_shards(root: Path, files: Iterable[Path]) -> list[str]:
    """Relative paths of the shards a series names but that are absent, sorted."""
    series: dict[tuple[str, str, int], set[int]] = {}
    width: dict[tuple[str, str, int], int] = {}
    for f in files:
        m = _SERIES.match(f.name)
        if not m:
            continue
        key = (f.parent.relative_to(root).as_posix(), m.group("split"), int(m.group("n")))
        series.setdefault(key, set()).add(int(m.group("i")))
        width[key] = len(m.group("n"))
    gone: list[str] = []
    for key, seen in sorted(series.items()):
        folder, split, n = key
        w = width[key]
        for i in range(n):
            if i not in seen:
                name = f"{split}-{i:0{w}d}-of-{n:0{w}d}.parquet"
                gone.append(name if folder == "." else f"{folder}/{name}")
    return gone


def shard_rows(files: Iterable[Path]) -> dict[Path, int]:
    """Rows per shard from its footer; raises :class:`HfReadError` naming a shard whose
    footer cannot be read."""
    import pyarrow.parquet as pq

    rows: dict[Path, int] = {}
    for f in files:
        try:
            rows[f] = pq.ParquetFile(str(f)).metadata.num_rows
        except Exception as exc:  # ArrowInvalid, OSError …
            raise HfReadError(f"{f}: not a readable parquet file ({exc})") from exc
    return rows


def _card_counts(card: dict[str, Any]) -> list[tuple[str, list[str], int]]:
    """``(config, data_files patterns of split test, num_examples)`` per config the card
    describes in both ``configs`` and ``dataset_info``."""
    patterns: dict[str, list[str]] = {}
    for c in card.get("configs") or []:
        if isinstance(c, dict) and isinstance(c.get("data_files"), list):
            patterns[str(c.get("config_name"))] = [
                str(d["path"]) for d in c["data_files"]
                if isinstance(d, dict) and d.get("split") == "test" and "path" in d]
    out: list[tuple[str, list[str], int]] = []
    for info in card.get("dataset_info") or []:
        if not isinstance(info, dict):
            continue
        name = str(info.get("config_name"))
        n = next((s.get("num_examples") for s in info.get("splits") or []
                  if isinstance(s, dict) and s.get("name") == "test"), None)
        if isinstance(n, int) and name in patterns:
            out.append((name, patterns[name], n))
    return out


def check_complete(root: Path, files: list[Path], card: dict[str, Any] | None) -> None:
    """Raise :class:`HfReadError` naming ``root`` and every missing shard, or every
    config whose row count differs from the card (see the module docstring)."""
    gone = missing_shards(root, files)
    if gone:
        raise HfReadError(f"{root}: incomplete export: {len(gone)} shard(s) missing: "
                          + ", ".join(gone[:20]) + (" …" if len(gone) > 20 else "")
                          + "; re-copy the export folder")
    if not card:
        return
    rows = shard_rows(files)
    counts = _card_counts(card)
    total = sum(rows.values())
    total_ok = all(n == total for name, _, n in counts if name == "default")
    bad: list[str] = []
    for name, patterns, expected in counts:
        matched = {f for pattern in patterns for f in root.glob(pattern) if f in rows}
        found = total if name == "default" else sum(rows[f] for f in matched)
        if name != "default" and not matched and total_ok:
            continue  # shards moved out of data/<config>/ (re-arranged), none lost
        if found != expected:
            bad.append(f"config {name!r}: {found} row(s) in "
                       f"{len(rows) if name == 'default' else len(matched)} shard(s), "
                       f"the card says {expected}")
    if bad:
        raise HfReadError(f"{root}: incomplete export (rows missing or added against "
                          f"{root / 'README.md'}): " + "; ".join(bad))
