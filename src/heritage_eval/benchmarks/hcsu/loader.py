"""Load an HCSU release (or a collection in the same layout) into an :class:`HcsuDataset`.

Layout (per domain, ``bei`` and ``tie``)::

    ROOT/bei/<calligrapher>-<script>/<file>.png     ROOT/bei_annotations.json
    ROOT/tie/<calligrapher>-<script>/<file>.png     ROOT/tie_annotations.json

Instead of the folder, ``ROOT/bei.zip`` / ``ROOT/tie.zip`` (password-protected) may be
present: it is extracted into ``extract_to/bei`` (see :mod:`.archive`). The raw Wild
subset loads the same way. An annotation file is a JSON list of records
(:class:`~.schema.HcsuRecord`), UTF-8 with or without a byte-order mark.

Everything odd is listed in ``HcsuDataset.problems`` and the rest loads:

- an annotation file that is unreadable, malformed or not a list, or a release zip that
  is truncated or cannot be decrypted: that domain is not loaded (the other one is);
- a malformed record, a duplicate filename, an empty list of records;
- a ``filename`` that leaves the domain folder (``../bei/…``, absolute): refused, the
  record is skipped; one that is a symbolic link leading out of the data (unless
  ``--allow-outside-paths``), or a FIFO, socket, device or folder: the image keeps its
  record with ``load_error`` naming it (``docs/paths.md``; nothing is opened);
- an annotation file that is a FIFO, socket, device or folder, or a symlink leading
  out of the data: unreadable, as above;
- a record whose image is missing, or corrupt (each image is opened and verified with
  Pillow at load, which reads the file without decoding the pixels): the image keeps
  its record with ``load_error`` set, so as a target it becomes an ``error`` row naming
  the file, and it is never used as a reference or shot;
- an empty ``char`` (warning: the anti-leakage rule cannot compare its character);
- an image file on disk that no record names (warning: it is not used).
"""

from __future__ import annotations

import json
import os
import posixpath
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

from PIL import Image
from pydantic import ValidationError

from heritage_eval.benchmarks.hcsu.archive import ArchiveError, extract_domain_zip
from heritage_eval.benchmarks.hcsu.schema import (
    DOMAIN_FOLDERS,
    DOMAINS,
    Domain,
    HcsuDataset,
    HcsuImage,
    HcsuRecord,
    build_classes,
)
from heritage_eval.core.datapath import (
    confined,
    open_regular,
    read_regular_text,
    regular_file_problem,
)
from heritage_eval.core.paths import PathOutsideRoot, joined_inside
from heritage_eval.core.unicode_text import unusable_file_name


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
    capped: list[str] = []  # members over a size cap (docs/limits.md)
    refused = extract_domain_zip(archive, target, password, capped)
    return target, [f"{archive}: refused unsafe member path {m!r}" for m in refused] + capped


def _read_records(path: Path, root: Path) -> list[object]:
    try:
        # inside the data root and a regular file: a FIFO or device is never opened
        data = json.loads(read_regular_text(confined(root, path), encoding="utf-8-sig"))
    except (OSError, PathOutsideRoot, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HcsuDataError(f"cannot read annotation file {path}: {exc}") from exc
    if not isinstance(data, list):
        raise HcsuDataError(f"{path}: expected a JSON list of records, got "
                            f"{type(data).__name__}")
    return data


#: File suffixes counted as images when looking for files no record names.
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})


def image_problem(path: Path) -> str | None:
    """Why the image at ``path`` is unusable (missing, not an image, truncated or failing
    its checksums under Pillow's ``verify``), else ``None``. Cheap: pixels are not
    decoded."""
    if (problem := regular_file_problem(path)) is not None:  # never opens a FIFO
        return "image file not found" if problem == "file not found" else problem
    try:
        with open_regular(path) as fh, Image.open(fh) as im:
            im.verify()
    except Exception as exc:  # PIL raises many types for broken files
        return f"corrupt or unreadable image ({type(exc).__name__}: {exc})"
    return None


def _relative(filename: str, folder: Path, prefix: str) -> str | None:
    """The record's path relative to the domain folder, or ``None`` when it leaves it."""
    rel = filename.replace("\\", "/")
    if rel.startswith("/") or PurePosixPath(rel).is_absolute() or ":" in rel.split("/")[0]:
        return None
    rel = posixpath.normpath(rel)
    if rel == ".." or rel.startswith("../"):
        return None
    if not (folder / rel).is_file() and rel.startswith(prefix):
        rel = rel[len(prefix):]
    return rel


def _unlisted(folder: Path, listed: set[Path]) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p.suffix.lower() in IMAGE_SUFFIXES and p.resolve() not in listed:
                out.append(str(p))
    return out


def _load_domain(root: Path, domain: Domain, folder: Path, problems: list[str]
                 ) -> list[HcsuImage]:
    ann = root / f"{DOMAIN_FOLDERS[domain]}_annotations.json"
    if not os.path.lexists(ann):
        problems.append(f"{folder} present but {ann.name} missing: domain {domain} skipped")
        return []
    records = _read_records(ann, root)
    if not records:
        problems.append(f"{ann.name}: the annotation list is empty (no records): domain "
                        f"{domain} has no images")
    found: list[tuple[str, HcsuRecord, Path, str]] = []
    outside: dict[str, str] = {}
    seen: set[str] = set()
    prefix = f"{DOMAIN_FOLDERS[domain]}/"
    for index, raw in enumerate(records):
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
        if (unusable := unusable_file_name(rec.filename)) is not None:
            problems.append(f"{where}: filename holds {unusable}: not a usable file name, "
                            "record skipped")
            continue
        rel = _relative(rec.filename, folder, prefix)
        if rel is None:
            problems.append(f"{where}: filename {rec.filename!r} leaves the {domain} folder "
                            f"{folder}: refused, record skipped")
            continue
        sample_id = f"{domain}/{PurePosixPath(rel).with_suffix('')}"
        if sample_id in seen:
            problems.append(f"{where}: duplicate filename {rec.filename!r} (first kept)")
            continue
        seen.add(sample_id)
        if not rec.char.strip():
            problems.append(f"{where}: empty 'char' for {rec.filename!r} (warning: the "
                            "anti-leakage rule cannot compare its character)")
        try:  # a symlink leading out of the data is refused (docs/paths.md); ``rel`` is
            # joined to ``folder`` here, once: a relative ``root`` must not be joined twice
            joined_inside([root, folder], rel, base=folder)
        except PathOutsideRoot as exc:
            outside[sample_id] = str(exc)
        found.append((sample_id, rec, (folder / rel).resolve(), where))
    with ThreadPoolExecutor(max_workers=8) as pool:
        checks = list(pool.map(lambda f: outside.get(f[0]) or image_problem(f[2]), found))
    images: list[HcsuImage] = []
    for (sample_id, rec, path, where), problem in zip(found, checks, strict=True):
        error = f"{problem}: {path} ({where})" if problem else None
        if error:
            problems.append(error)
        images.append(HcsuImage(id=sample_id, domain=domain, record=rec, path=path,
                                source=where, load_error=error))
    for path_text in _unlisted(folder, {path for _, _, path, _ in found}):
        problems.append(f"{path_text}: image on disk has no record in {ann.name} "
                        "(warning: not used)")
    return images


def parent_hint(root: Path) -> str:
    """``"; … pass its parent …"`` when ``root`` is itself a domain folder (``bei/`` or
    ``tie/`` beside its ``*_annotations.json``, or holding ``<calligrapher>-<script>/``
    image folders), else ``""``."""
    name = root.resolve().name
    parent = root.resolve().parent
    if name.casefold() in {d.casefold() for d in DOMAIN_FOLDERS.values()} or (
            parent / f"{name}_annotations.json").is_file():
        return (f"; {root} looks like one domain folder: pass its parent {parent} (the "
                "folder holding bei/, tie/ and their annotation files)")
    return ""


def load_hcsu(root: str | Path, domains: tuple[Domain, ...] = DOMAINS,
              extract_to: str | Path | None = None, password: str | None = None
              ) -> HcsuDataset:
    """Load the release at ``root``.

    ``domains``: which domains to load. ``extract_to``: folder for extracting release
    zips (required only when a domain exists as a zip). ``password``: zip password
    (never stored). A domain whose annotation file is unreadable, malformed or not a
    list, or whose archive is truncated / cannot be extracted, is not loaded: the reason
    (naming the file) goes into ``problems`` and the other domain loads. Raises
    :class:`HcsuDataError` (with a parent-folder hint when ``root`` is a domain folder)
    when no domain can be loaded — the single failure itself when there was one
    (:class:`HcsuDataError` or :class:`~.archive.ArchiveError`). An ``export hf`` folder
    is read back first (an installed data format:
    :func:`heritage_eval.core.plugins.materialise`).
    """
    from heritage_eval.core.plugins import DataFormatError, materialise

    try:
        root = materialise(Path(root), "hcsu")
    except DataFormatError as exc:
        raise HcsuDataError(str(exc)) from exc
    if not root.is_dir():
        raise HcsuDataError(f"data folder not found: {root}")
    problems: list[str] = []
    images: list[HcsuImage] = []
    failures: list[HcsuDataError | ArchiveError] = []
    for domain in domains:
        try:
            folder, notes = _domain_folder(root, domain,
                                           Path(extract_to) if extract_to else None, password)
            problems.extend(notes)
            if folder is not None:
                images.extend(_load_domain(root, domain, folder, problems))
        except (HcsuDataError, ArchiveError) as exc:
            # one unreadable part (annotation file, archive) costs only its domain
            failures.append(exc)
            problems.append(f"{exc}: domain {domain} not loaded")
    if not images:
        if failures:
            if len(failures) == 1:
                raise failures[0]
            raise HcsuDataError("no HCSU domain could be loaded: "
                                + "; ".join(str(f) for f in failures))
        raise HcsuDataError(f"no HCSU data under {root}: expected bei/ or tie/ (or bei.zip / "
                            "tie.zip) with bei_annotations.json / tie_annotations.json"
                            f"{parent_hint(root)}")
    return HcsuDataset(root=root, images=images, classes=build_classes(images),
                       problems=problems)
