"""HCSU <-> parquet rows: one row per annotated character image, one config per domain
(``bei`` stone rubbings, ``tie`` ink manuscripts).

Export reads the release with :func:`heritage_eval.benchmarks.hcsu.loader.load_hcsu`
(zips are extracted into a temporary folder first), so the rows are the records
``run hcsu-*`` would use. Each row carries the typed annotation fields and, in
``record``, the annotation record exactly as given (extra fields included), so the
read-back rewrites ``<domain>_annotations.json`` record for record, in the source order.
An image that is missing or corrupt is exported with a null image (the read-back then
reports the same unusable image); records the loader skipped
or flagged are listed as problems (``export hf`` exits with status 1).
"""

from __future__ import annotations

import json
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

NAME = "hcsu"
#: Annotation fields exported as their own string columns (years as text: the release
#: writes them as numbers or strings).
FIELDS = ("char", "calligrapher", "script_type", "quality", "dynasty", "birth_year",
          "death_year", "source_type", "stroke_style", "ink_style", "description")
COLUMNS = [
    Column("id", "string", "sample id, `<Bei|Tie>/<calligrapher>-<script>/<file stem>`"),
    Column("domain", "string", "`Bei` (stone rubbing) or `Tie` (ink manuscript)"),
    Column("style_class", "string", "style class key `<domain>/<calligrapher>-<script>`"),
    Column("filename", "string", "image path relative to the domain folder"),
    Column("image", "image", "the character image: the source file's bytes"),
    *(Column(f, "string", f"annotation field `{f}`") for f in FIELDS),
    Column("record", "string", "the annotation record as given (JSON object)"),
    Column("record_index", "int64", "position of the record in its annotation file"),
]


def _cell(value: Any) -> str | None:
    return None if value is None else str(value)


def _record_index(where: str, fallback: int) -> int:
    """The record number of a loader ``source`` (``"bei_annotations.json record 12"``),
    else ``fallback`` (the position in load order, which is the file order too)."""
    tail = where.rsplit(" ", 1)[-1]
    return int(tail) if tail.isdigit() else fallback


def source(root: Path, extract_to: Path, password: str | None = None) -> ExportSource:
    """The export of the HCSU release at ``root`` (``extract_to``: where release zips
    are extracted). Raises :class:`~.spec.HfExportError` when nothing can be loaded."""
    from heritage_eval.benchmarks.hcsu.archive import ArchiveError
    from heritage_eval.benchmarks.hcsu.loader import HcsuDataError, load_hcsu
    from heritage_eval.benchmarks.hcsu.schema import DOMAIN_FOLDERS, MEDIUM

    try:
        ds = load_hcsu(root, extract_to=extract_to, password=password)
    except (HcsuDataError, ArchiveError) as exc:
        raise HfExportError(str(exc)) from exc
    problems = list(ds.problems)  # records skipped or odd (as 'stats hcsu' counts them)
    images = list(ds.images)
    too_big: set[str] = set()
    for img in images:
        if img.load_error:
            problems.append(f"exported without its image: {img.load_error}")
        elif (big := oversized_image(img.path)) is not None:  # docs/limits.md
            problems.append(f"exported without its image: {big}")
            too_big.add(img.id)

    def rows() -> Iterator[Row]:
        for position, img in enumerate(images):
            rel = img.id.split("/", 1)[1] + img.path.suffix
            data = None if img.load_error or img.id in too_big else image_bytes(img.path)
            rec = img.record
            row: dict[str, Any] = {
                "id": img.id, "domain": img.domain, "style_class": img.class_key,
                "filename": rel, "image": image_cell(data, rel),
                "record": json.dumps(rec.model_dump(mode="json", exclude_unset=True),
                                     ensure_ascii=False),
                "record_index": _record_index(img.source, position)}
            row.update({f: _cell(getattr(rec, f, None)) for f in FIELDS})
            yield DOMAIN_FOLDERS[img.domain], row

    per_class: dict[str, int] = {}
    for img in images:
        per_class[img.class_key] = per_class.get(img.class_key, 0) + 1
    domains = [d for d in DOMAIN_FOLDERS if any(i.domain == d for i in images)]
    dom_table = StatTable("Images per domain", ("domain", "medium", "images", "classes",
                                                "distinct characters"), [])
    for d in domains:
        mine = [i for i in images if i.domain == d]
        dom_table.rows.append((d, MEDIUM[d], str(len(mine)),
                               str(len({i.class_key for i in mine})),
                               str(len({i.char for i in mine}))))
    cls_table = StatTable("Images per style class", ("class", "images"),
                          [(k, str(v)) for k, v in sorted(per_class.items())])
    return ExportSource(
        benchmark=NAME, columns=COLUMNS, total=len(images), rows=rows,
        provenance={"source": str(root)},
        tables=[dom_table, cls_table], problems=problems, inputs=[Path(root)],
        config_docs={DOMAIN_FOLDERS[d]: f"{MEDIUM[d]}: {r[2]} images"
                     for d, r in zip(domains, dom_table.rows, strict=True)},
        pretty_name="HCSU (export)",
        description="Historical calligraphy style understanding: one character image "
                    "with its calligrapher, script and style annotation per row; one "
                    "config per domain.")


def materialise(rows: Iterable[dict[str, Any]], dest: Path) -> int:
    """Write ``dest/<domain>/<filename>`` images and ``dest/<domain>_annotations.json``
    (records in their source order) from exported rows. Returns the number of rows.
    Raises :class:`~.spec.HfReadError` for an unknown domain or an unsafe file name."""
    from heritage_eval.benchmarks.hcsu.schema import DOMAIN_FOLDERS

    records: dict[str, list[tuple[int, Any]]] = {}
    n = 0
    for row in rows:
        where = f"row {row.get('id')!r}"
        domain = row.get("domain")
        if domain not in DOMAIN_FOLDERS:
            raise HfReadError(f"{where}: domain {domain!r} is not Bei or Tie")
        folder = DOMAIN_FOLDERS[domain]
        rel = safe_relative(str(row["filename"]), f"{where}: filename")
        image = row.get("image")
        if image is not None and image.get("bytes") is not None:
            target = dest / folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(image["bytes"])
        try:
            record = json.loads(str(row["record"]))
        except json.JSONDecodeError as exc:
            raise HfReadError(f"{where}: 'record' is not JSON ({exc.msg})") from exc
        index = row.get("record_index")
        records.setdefault(folder, []).append((int(index) if index is not None else n,
                                               record))
        n += 1
    dest.mkdir(parents=True, exist_ok=True)
    for folder, items in records.items():
        (dest / folder).mkdir(parents=True, exist_ok=True)
        body = [rec for _, rec in sorted(items, key=lambda t: t[0])]
        (dest / f"{folder}_annotations.json").write_text(
            json.dumps(body, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return n
