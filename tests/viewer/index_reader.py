"""Read a built site's sharded index back as one value (for the tests).

A site's index is ``data/index.js`` (the manifest, ``window.HE_INDEX=…``) and the shards
``data/index-NNNN.js`` (``HE_SHARD(k,{…});``); the search texts are the shards
``data/search-NNNN.js`` (``HE_SEARCH_SHARD(k,[…]);``). :func:`read_index` joins the shards'
columns in shard order under ``"cols"`` (where the single-file index of the builder
before sharding had them), so the tests read ``ix["cols"]["id"]`` over every sample;
:func:`old_index_text` / :func:`old_search_text` write the joined value back as that
builder's ``index.js`` / ``search.js`` text (same key order, compact JSON, non-ASCII
kept), which the golden files hold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: manifest keys the builder before sharding did not write
NEW_KEYS = ("shards", "counts")


def _call_args(path: Path, prefix: str) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith(prefix) and text.endswith(");\n"), path
    return list(json.loads("[" + text[len(prefix):-3] + "]"))


def shard_files(site: Path, kind: str) -> list[Path]:
    """The ``kind`` (``index`` / ``search``) shard files of ``site``, in shard order."""
    return sorted((site / "data").glob(f"{kind}-[0-9]*.js"))


def read_index(site: Path) -> dict[str, Any]:
    """The manifest of ``site`` with ``"cols"`` (every shard's columns joined, in the
    place of ``"shards"``; ``NEW_KEYS`` kept). Asserts each shard names its number and
    holds the manifest's count of samples."""
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    assert text.startswith("window.HE_INDEX=") and text.endswith(";\n")
    head = json.loads(text[len("window.HE_INDEX="):-2])
    files = shard_files(site, "index")
    assert len(files) == len(head["shards"])
    cols: dict[str, Any] = {}
    for k, f in enumerate(files):
        got_k, shard = _call_args(f, "HE_SHARD(")
        assert got_k == k and len(shard["r"]) == head["shards"][k], f
        for name, value in shard.items():
            if isinstance(value, dict):
                for key, col in value.items():
                    cols.setdefault(name, {}).setdefault(key, []).extend(col)
            else:
                cols.setdefault(name, []).extend(value)
    if not files:  # no sample: the empty columns
        cols = {**{c: [] for c in ("r", "id", "st", "m", "a", "ref", "th")}, "g": {}, "s": {},
                "dis": []}
    out: dict[str, Any] = {}
    for key, value in head.items():
        if key == "shards":
            out["cols"] = cols
        out[key] = value
    return out


def read_search(site: Path) -> list[str]:
    """Every search text of ``site``, in site order (the shards joined)."""
    out: list[str] = []
    for k, f in enumerate(shard_files(site, "search")):
        got_k, items = _call_args(f, "HE_SEARCH_SHARD(")
        assert got_k == k, f
        out.extend(items)
    return out


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def old_index_text(site: Path) -> str:
    """``site``'s index as the single ``index.js`` of the builder before sharding."""
    ix = {k: v for k, v in read_index(site).items() if k not in NEW_KEYS}
    return "window.HE_INDEX=" + _dump(ix) + ";\n"


def old_search_text(site: Path) -> str:
    """``site``'s search texts as the single ``search.js`` of that builder."""
    return "window.HE_SEARCH=" + _dump(read_search(site)) + ";\n"
