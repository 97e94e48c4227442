"""Ancient-Bench <-> parquet rows: one row per image, one config per medium folder.

Export reads the release with the benchmark's own loader
(:func:`heritage_eval.benchmarks.ancient_bench.loader.load_release`), so what is
exported is exactly what ``run ancient-bench`` would evaluate. A sample whose image is
missing (or outside the release) is exported with a null image (the read-back then
reports the same missing image); a line without an image name or ground truth
cannot be represented and is left out; both are listed as problems (exit status 1).
The read-back writes ``<medium>/conv.jsonl`` (lines in the source's line order) and
``<medium>/images/<image name>``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from heritage_eval.curate.hf.features import image_bytes, image_cell, oversized_image
from heritage_eval.curate.hf.spec import (
    Column,
    ExportSource,
    HfExportError,
    HfReadError,
    Row,
    StatTable,
    safe_relative,
)

NAME = "ancient-bench"
METADATA_FIELDS = ("script", "period", "institution")
COLUMNS = [
    Column("id", "string", "sample id, `<medium folder>/<image stem>` (as `run ancient-bench`)"),
    Column("medium", "string", "medium (category) folder name, e.g. `seals`"),
    Column("medium_name", "string", "the paper's name of the medium"),
    Column("image", "image", "the artifact image: the source file's bytes, not re-encoded"),
    Column("image_name", "string", "image file name as written in `conv.jsonl`"),
    Column("image_stem", "string", "image file name without its suffix"),
    Column("human_gt", "string", "ground-truth transcription; `\\n` separates columns "
           "(lines), read right to left; `□` damaged character, `<unrecognizable>` "
           "unencoded character"),
    *(Column(f, "string", f"`{f}` of the `conv.jsonl` line, when given") for f in
      METADATA_FIELDS),
    Column("line", "int64", "line number in the source `conv.jsonl`"),
]


def _target_chars(gt: str) -> int:
    from heritage_eval.benchmarks.ancient_bench.normalize import PROTOCOLS, target_tokens

    return len(target_tokens(gt, PROTOCOLS["official"]))


def source(root: Path) -> ExportSource:
    """The export of the release at ``root``. Raises :class:`HfExportError` when it is
    not an Ancient-Bench release (the loader's message)."""
    from heritage_eval.benchmarks.ancient_bench.categories import medium_name
    from heritage_eval.benchmarks.ancient_bench.loader import load_release

    try:
        release = load_release(root)
    except (FileNotFoundError, ValueError) as exc:
        raise HfExportError(str(exc)) from exc
    warnings = list(release.warnings)
    problems: list[str] = []
    kept = []
    for s in release.samples:
        name = s.metadata.get("image_name")
        if s.load_error and (not name or s.target is None):
            problems.append(f"not exported: {s.load_error}")
            continue
        if s.load_error:
            problems.append(f"exported without its image: {s.load_error}")
        elif (big := oversized_image(str(s.image))) is not None:  # docs/limits.md
            problems.append(f"exported without its image: {big}")
            s.load_error = big
        kept.append(s)

    def rows() -> Iterator[Row]:
        for s in kept:
            name = str(s.metadata["image_name"])
            data = None if s.load_error else image_bytes(str(s.image))
            row: dict[str, Any] = {
                "id": s.id, "medium": s.category, "medium_name": medium_name(s.category),
                "image": image_cell(data, name), "image_name": name,
                "image_stem": os.path.splitext(name)[0], "human_gt": s.target,
                "line": s.metadata.get("line")}
            row.update({f: s.metadata.get(f) for f in METADATA_FIELDS})
            yield s.category, row

    per: dict[str, list[int]] = {}
    for s in kept:
        per.setdefault(s.category, []).append(_target_chars(str(s.target)))
    table = StatTable("Samples per medium", ("medium", "paper name", "samples",
                                             "characters (GT tokens)", "mean per sample"),
                      [(m, medium_name(m), str(len(v)), str(sum(v)),
                        f"{sum(v) / len(v):.1f}") for m, v in per.items()])
    total_chars = sum(sum(v) for v in per.values())
    table.rows.append(("**all**", "", str(len(kept)), str(total_chars),
                       f"{total_chars / max(1, len(kept)):.1f}"))
    return ExportSource(
        benchmark=NAME, columns=COLUMNS, total=len(kept), rows=rows,
        provenance={"source": str(root),
                    "categories": release.categories},
        tables=[table], warnings=warnings, problems=problems, inputs=[Path(root)],
        config_docs={m: f"{medium_name(m)} ({len(v)} samples)" for m, v in per.items()},
        pretty_name="Ancient-Bench (export)",
        description="Ancient Chinese artifact text recognition: one image and its "
                    "ground-truth transcription per row; one config per medium.")


def materialise(rows: Iterable[dict[str, Any]], dest: Path) -> int:
    """Write the release layout under ``dest`` from exported rows (any order): images
    as they come, then each ``conv.jsonl`` in line order. Returns the number of
    samples. Raises :class:`~.spec.HfReadError` for an unsafe medium or image name."""
    lines: dict[str, list[tuple[int, str]]] = {}
    n = 0
    for row in rows:
        medium = str(row["medium"])
        if len(safe_relative(medium, f"row {row.get('id')!r}: medium").parts) != 1:
            raise HfReadError(f"row {row.get('id')!r}: medium {medium!r} is not a folder "
                              "name: refused")
        name = str(row["image_name"])
        rel = safe_relative(name, f"row {row.get('id')!r}: image_name")
        image = row.get("image")
        if image is not None and image.get("bytes") is not None:
            target = dest / medium / "images" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(image["bytes"])
        item: dict[str, Any] = {"image": name, "human_gt": row["human_gt"]}
        item.update({f: row[f] for f in METADATA_FIELDS if row.get(f) not in (None, "")})
        line = row.get("line")
        lines.setdefault(medium, []).append((int(line) if line is not None else n,
                                             json.dumps(item, ensure_ascii=False)))
        n += 1
    for medium, items in lines.items():
        folder = dest / medium
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "conv.jsonl").write_text(
            "".join(text + "\n" for _, text in sorted(items, key=lambda t: t[0])),
            encoding="utf-8")
    return n
