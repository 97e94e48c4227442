"""Load an HCSU release (or a collection in the same layout) into an :class:`HcsuDataset`.

Layout (per domain, ``bei`` and ``tie``)::

    ROOT/bei/<calligrapher>-<script>/<file>.png     ROOT/bei_annotations.json
    ROOT/tie/<calligrapher>-<script>/<file>.png     ROOT/tie_annotations.json

Instead of the folder, ``ROOT/bei.zip`` / ``ROOT/tie.zip`` (password-protected) may be
present: it is extracted into ``extract_to/bei`` (see :mod:`.archive`). The raw Wild
subset loads the same way. An annotation file is a JSON list of records
(:class:`~.schema.HcsuRecord`); a malformed record or a record whose image is missing is
listed in ``HcsuDataset.problems`` and the rest loads.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from heritage_eval.benchmarks.hcsu.archive import extract_domain_zip
from heritage_eval.benchmarks.hcsu.schema import (
    DOMAIN_FOLDERS,
    DOMAINS,
    Domain,
    HcsuDataset,
    HcsuImage,
    HcsuRecord,
    build_classes,
)


class HcsuDataError(Exception):
    """The release cannot be loaded at all (no domain found, unreadable annotation file)."""


def _domain_folder(root: Path, domain: Domain, extract_to: Path | None,
                   password: str | None) -> tuple[Path | None, list[str]]:
    name = DOMAIN_FOLDERS[domain]
    folder = root / name
    if folder.is_dir():
        return folder, []
    archive = root / f"{name}.zip"
    if not archive.is_file():
        return None, []
    if extract_to is None:
        raise HcsuDataError(f"{archive} must be extracted: give a folder to extract into")
    target = extract_to / name
    refused = extract_domain_zip(archive, target, password)
    return target, [f"{archive}: refused unsafe member path {m!r}" for m in refused]


def _read_records(path: Path) -> list[object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HcsuDataError(f"cannot read annotation file {path}: {exc}") from exc
    if not isinstance(data, list):
        raise HcsuDataError(f"{path}: expected a JSON list of records, got "
                            f"{type(data).__name__}")
    return data


def _load_domain(root: Path, domain: Domain, folder: Path, problems: list[str]
                 ) -> list[HcsuImage]:
    ann = root / f"{DOMAIN_FOLDERS[domain]}_annotations.json"
    if not ann.is_file():
        problems.append(f"{folder} present but {ann.name} missing: domain {domain} skipped")
        return []
    images: list[HcsuImage] = []
    seen: set[str] = set()
    for index, raw in enumerate(_read_records(ann)):
        where = f"{ann.name} record {index}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        try:
            rec = HcsuRecord.model_validate(raw)
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
            problems.append(f"{where}: invalid or missing field(s) {fields}")
            continue
        rel = rec.filename.replace("\\", "/").lstrip("/")
        prefix = f"{DOMAIN_FOLDERS[domain]}/"
        if not (folder / rel).is_file() and rel.startswith(prefix):
            rel = rel[len(prefix):]
        sample_id = f"{domain}/{PurePosixPath(rel).with_suffix('')}"
        if sample_id in seen:
            problems.append(f"{where}: duplicate filename {rec.filename!r} (first kept)")
            continue
        seen.add(sample_id)
        path = (folder / rel).resolve()
        error = None if path.is_file() else f"image file not found: {path} ({where})"
        if error:
            problems.append(error)
        images.append(HcsuImage(id=sample_id, domain=domain, record=rec, path=path,
                                source=where, load_error=error))
    return images


def load_hcsu(root: str | Path, domains: tuple[Domain, ...] = DOMAINS,
              extract_to: str | Path | None = None, password: str | None = None
              ) -> HcsuDataset:
    """Load the release at ``root``.

    ``domains``: which domains to load. ``extract_to``: folder for extracting release
    zips (required only when a domain exists as a zip). ``password``: zip password
    (never stored). Raises :class:`HcsuDataError` when no domain can be loaded or an
    annotation file is unreadable, and :class:`~.archive.ArchiveError` for a bad archive.
    """
    root = Path(root)
    if not root.is_dir():
        raise HcsuDataError(f"data folder not found: {root}")
    problems: list[str] = []
    images: list[HcsuImage] = []
    for domain in domains:
        folder, notes = _domain_folder(root, domain,
                                       Path(extract_to) if extract_to else None, password)
        problems.extend(notes)
        if folder is not None:
            images.extend(_load_domain(root, domain, folder, problems))
    if not images:
        raise HcsuDataError(f"no HCSU data under {root}: expected bei/ or tie/ (or bei.zip / "
                            "tie.zip) with bei_annotations.json / tie_annotations.json")
    return HcsuDataset(root=root, images=images, classes=build_classes(images),
                       problems=problems)
