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
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.core.record import SampleRecord

PAGE_SIZE = 500
SHORT_ANSWER = 48
SEARCH_CHARS = 400
STATES = ["scored", "unparsed", "error", "unscored"]
#: a non-0/1 metric "disagrees" when two models' values differ by this much (score units,
#: as ``heritage-eval compare``'s default threshold)
DISAGREE_THRESHOLD = 0.1


@dataclass
class SampleRow:
    """One sample's index entry (see the module docstring)."""

    run: int
    record: SampleRecord
    thumb: str  # thumbnail key, "!" missing, "" none
    html: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def short_text(value: object, n: int) -> str:
    """``value`` on one line, at most ``n`` characters (``…`` when cut)."""
    if value is None:
        return ""
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def disagreements(rows: Sequence[SampleRow]) -> list[int]:
    """Per row 1 when another model's record of the same benchmark and id differs from
    it (another state, a 0/1 metric differing, another metric by at least
    :data:`DISAGREE_THRESHOLD`), else 0; rows without a counterpart are 0."""
    by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_key[(r.record.benchmark, r.record.id)].append(i)
    flags = [0] * len(rows)
    for members in by_key.values():
        if len({(rows[i].run, rows[i].record.model) for i in members}) < 2:
            continue
        recs = [rows[i].record for i in members]
        differ = len({r.state for r in recs}) > 1
        names = {k for r in recs for k in r.scores}
        for name in names:
            vals = [r.scores.get(name) for r in recs]
            nums = [float(v) for v in vals if v is not None]
            if len(nums) < 2:
                continue
            binary = all(v in (0.0, 1.0) for v in nums)
            spread = max(nums) - min(nums)
            if (spread > 0) if binary else spread >= DISAGREE_THRESHOLD - 1e-9:
                differ = True
        if differ:
            for i in members:
                flags[i] = 1
    return flags


def index_data(rows: Sequence[SampleRow], runs: list[dict[str, Any]],
               metrics: list[dict[str, Any]], site_dir: str) -> dict[str, Any]:
    """The ``HE_INDEX`` object (columns over ``rows``)."""
    models: list[str] = []
    model_ix: dict[str, int] = {}
    group_values: dict[str, list[str]] = {}
    group_ix: dict[str, dict[str, int]] = {}
    for r in rows:
        for k, v in r.record.groups.items():
            ix = group_ix.setdefault(k, {})
            if v not in ix:
                ix[v] = len(ix)
                group_values.setdefault(k, []).append(v)
    cols: dict[str, Any] = {"r": [], "id": [], "st": [], "m": [], "a": [], "ref": [], "th": [],
                            "g": {k: [] for k in group_values},
                            "s": {m["name"]: [] for m in metrics}}
    for r in rows:
        rec = r.record
        if rec.model not in model_ix:
            model_ix[rec.model] = len(models)
            models.append(rec.model)
        cols["r"].append(r.run)
        cols["id"].append(rec.id)
        cols["st"].append(STATES.index(rec.state.value))
        cols["m"].append(model_ix[rec.model])
        cols["a"].append(short_text(rec.answer if rec.answer is not None
                                    else rec.response_text, SHORT_ANSWER))
        cols["ref"].append(short_text(rec.reference, SHORT_ANSWER))
        cols["th"].append(r.thumb)
        for k, col in cols["g"].items():
            gv = rec.groups.get(k)
            col.append(-1 if gv is None else group_ix[k][gv])
        for name, col in cols["s"].items():
            sv = rec.scores.get(name)
            col.append(None if sv is None else round(float(sv), 4))
    cols["dis"] = disagreements(rows)
    compare = any(len({(r.run, r.record.model) for r in rows if r.record.benchmark == b}) > 1
                  for b in {r.record.benchmark for r in rows})
    return {"version": 1, "site_dir": site_dir, "page_size": PAGE_SIZE, "runs": runs,
            "states": STATES, "groups": group_values, "metrics": metrics, "models": models,
            "n": len(rows), "compare": compare, "cols": cols}


def search_text(rec: SampleRecord) -> str:
    """The lower-case text a search matches (id, groups, answer, reference, response)."""
    parts = [rec.id, *rec.groups.values(), short_text(rec.answer, 120),
             short_text(rec.reference, 120), short_text(rec.response_text, 120),
             rec.error or ""]
    return " ".join(p for p in parts if p).lower()[:SEARCH_CHARS]


def _js(path: Path, text: str) -> int:
    """Write ``text`` to ``path``; returns its size in bytes. A lone surrogate (a file
    name that is not valid UTF-8) is written as its ``\\uXXXX`` escape, which is the same
    character inside a JavaScript string."""
    data = text.encode("utf-8", "backslashreplace")
    path.write_bytes(data)
    return len(data)


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write_data(data_dir: Path, rows: Sequence[SampleRow], index: dict[str, Any]
               ) -> dict[str, int]:
    """Write index, search and page files under ``data_dir``; returns their sizes in
    bytes: ``{"index": …, "search": …, "pages": …, "n_pages": …}``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("*.js"):
        old.unlink()
    sizes = {"index": _js(data_dir / "index.js", f"window.HE_INDEX={_dump(index)};\n")}
    sizes["search"] = _js(data_dir / "search.js", "window.HE_SEARCH="
                          + _dump([search_text(r.record) for r in rows]) + ";\n")
    by_run: dict[int, list[str]] = defaultdict(list)
    for r in rows:
        by_run[r.run].append(r.html)
    total = n_pages = 0
    for run, htmls in by_run.items():
        for p in range(0, len(htmls), PAGE_SIZE):
            name = f"r{run}-p{p // PAGE_SIZE + 1}"
            total += _js(data_dir / f"{name}.js",
                         f"HE_PAGE({_dump(name)},{_dump(htmls[p:p + PAGE_SIZE])});\n")
            n_pages += 1
    sizes["pages"], sizes["n_pages"] = total, n_pages
    return sizes
