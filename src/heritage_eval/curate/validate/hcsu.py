"""``validate hcsu``: an HCSU release (``bei/``, ``tie/`` and their annotation files).

Layout and record schema are the loader's (:mod:`heritage_eval.benchmarks.hcsu.loader`,
:class:`~heritage_eval.benchmarks.hcsu.schema.HcsuRecord`). Checked: each annotation file
is a JSON list (malformed JSON: error at its line); each record (``file:line`` of the
record) has the required fields (``filename``, ``char``, ``calligrapher``,
``script_type``, ``quality``), a filename inside its domain folder, named once, in the
folder of its ``<calligrapher>-<script>`` class; annotation without image and image
without annotation; every image decodes; classes large enough for the K-way task
(HCSU §4.1: each candidate shows a reference image other than the target, so a class
needs 2 usable images, and each target needs K - 1 distractor classes in its pool, as
:func:`~heritage_eval.benchmarks.hcsu.discrimination.check_feasible` demands); classes
without an expert description; near-duplicate images (perceptual hash).
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import ValidationError

from heritage_eval.benchmarks.hcsu.discrimination import DEFAULT_K, distractor_pool
from heritage_eval.benchmarks.hcsu.loader import IMAGE_SUFFIXES, _relative
from heritage_eval.benchmarks.hcsu.schema import (
    DOMAIN_FOLDERS,
    Domain,
    HcsuDataset,
    HcsuImage,
    HcsuRecord,
    build_classes,
)
from heritage_eval.core.datapath import confined, read_regular_text, resolve_data_path
from heritage_eval.core.paths import PathOutsideRoot
from heritage_eval.core.unicode_text import unusable_file_name
from heritage_eval.curate.validate.imagecheck import (
    DEFAULT_PHASH_DISTANCE,
    find_duplicates,
    inspect_all,
)
from heritage_eval.curate.validate.jsonpos import read_list_with_lines
from heritage_eval.curate.validate.report import Report

REQUIRED = ("filename", "char", "calligrapher", "script_type", "quality")


class HcsuLayoutError(Exception):
    """The folder holds no HCSU domain (usage error, exit status 2)."""


def validate_hcsu(root: Path, k: int = DEFAULT_K, pool: Literal["domain", "all"] = "domain",
                  phash_distance: int = DEFAULT_PHASH_DISTANCE, progress: bool = True
                  ) -> Report:
    """Check the HCSU release at ``root`` for the ``k``-way task with distractors from
    ``pool`` (module doc). Raises :class:`HcsuLayoutError` when ``root`` is not a folder
    or has neither ``bei/`` nor ``tie/`` nor their annotation files."""
    if not root.is_dir():
        raise HcsuLayoutError(f"HCSU data folder not found: {root}")
    present = [d for d, name in DOMAIN_FOLDERS.items()
               if (root / name).is_dir() or (root / f"{name}_annotations.json").is_file()]
    if not present:
        zips = [f"{n}.zip" for n in DOMAIN_FOLDERS.values() if (root / f"{n}.zip").is_file()]
        hint = (f"; found {', '.join(zips)}: extract with 'heritage-eval run "
                "hcsu-discrimination --extract-to DIR' or unzip first") if zips else ""
        raise HcsuLayoutError(f"no HCSU data under {root}: expected bei/ or tie/ with "
                              f"bei_annotations.json / tie_annotations.json{hint}")
    report = Report(f"hcsu {root}")
    images: list[HcsuImage] = []
    for domain in present:
        images += _check_domain(report, root, domain)
    checked = _check_images(report, images, phash_distance, progress)
    _check_classes(report, root, checked, k, pool)
    return report


def _check_domain(report: Report, root: Path, domain: Domain) -> list[HcsuImage]:
    name = DOMAIN_FOLDERS[domain]
    folder, ann = root / name, root / f"{name}_annotations.json"
    if not os.path.lexists(ann):
        report.error(ann, None, "annotations-missing", f"{folder} is present but its "
                                                       "annotation file is not")
        return []
    if not folder.is_dir():
        report.error(folder, None, "domain-folder-missing", f"{ann.name} is present but "
                                                            f"the image folder is not")
        return []
    report.count("files")
    try:
        # inside the data and a regular file: a FIFO or device is refused, never opened
        parsed = read_list_with_lines(read_regular_text(confined(root, ann),
                                                        encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        report.error(ann, exc.lineno, "json-malformed", f"malformed JSON ({exc.msg}: "
                                                        f"column {exc.colno})")
        return []
    except PathOutsideRoot as exc:
        report.error(ann, None, "path-outside", f"cannot read: {exc}")
        return []
    except (OSError, UnicodeDecodeError) as exc:
        report.error(ann, None, "file-unreadable", f"cannot read: {exc}")
        return []
    if parsed is None:
        report.error(ann, 1, "not-list", "expected a JSON list of records")
        return []
    records, lines = parsed
    if not records:
        report.warning(ann, 1, "empty-list", f"no records: domain {domain} has no images")
    found: list[HcsuImage] = []
    seen: dict[str, int] = {}
    for raw, line in zip(records, lines, strict=True):
        report.count("records")
        image = _check_record(report, ann, line, raw, domain, folder, seen)
        if image is not None:
            found.append(image)
    listed = {i.path for i in found} | _named(records, folder, domain)
    for path in sorted(p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES
                       and p.is_file() and p.resolve() not in listed):
        report.warning(path, None, "image-unannotated", f"no record of {ann.name} names "
                                                        "this image: it is not used")
    return found


def _refusal(folder: Path, rel: str) -> tuple[str, str] | None:
    """``(code, message)`` when ``folder/rel`` is a symlink leading out of the data
    (``path-outside``; unless ``--allow-outside-paths``) or not a regular file
    (``image-not-file``), else ``None`` (``docs/paths.md``)."""
    try:
        resolve_data_path(folder, rel, must_exist=False)
    except PathOutsideRoot as exc:
        return "path-outside", str(exc)
    except OSError as exc:
        return "image-not-file", f"image {exc}"
    return None


def _named(records: list[object], folder: Path, domain: Domain) -> set[Path]:
    """Resolved paths every record's ``filename`` names, valid record or not (an invalid
    record is reported itself; its image is not "without annotation")."""
    out: set[Path] = set()
    for raw in records:
        name = raw.get("filename") if isinstance(raw, dict) else None
        if isinstance(name, str) and unusable_file_name(name) is None and (
                rel := _relative(name, folder, f"{DOMAIN_FOLDERS[domain]}/")):
            out.add((folder / rel).resolve())
    return out


def _check_record(report: Report, ann: Path, line: int, raw: object, domain: Domain,
                  folder: Path, seen: dict[str, int]) -> HcsuImage | None:
    if not isinstance(raw, dict):
        report.error(ann, line, "not-object", f"record is not a JSON object: {raw!r:.40}")
        return None
    try:
        rec = HcsuRecord.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            fld = ".".join(str(p) for p in err["loc"])
            code = "field-missing" if err["type"] == "missing" else "field-invalid"
            report.error(ann, line, code, f"field {fld!r}: {err['msg']} (required: "
                                          f"{', '.join(REQUIRED)})")
        return None
    for fld in ("calligrapher", "script_type"):
        if not str(getattr(rec, fld)).strip():
            report.error(ann, line, "field-empty", f"empty {fld!r}: the record has no "
                                                   "style class")
            return None
    if not rec.char.strip():
        report.warning(ann, line, "field-empty", f"empty 'char' for {rec.filename!r}: the "
                                                 "anti-leakage rule cannot compare it")
    if not rec.quality.strip():
        report.warning(ann, line, "field-empty", f"empty 'quality' for {rec.filename!r}")
    if (unusable := unusable_file_name(rec.filename)) is not None:
        report.error(ann, line, "filename-unusable",
                     f"filename holds {unusable}: not a usable file name")
        return None
    rel = _relative(rec.filename, folder, f"{DOMAIN_FOLDERS[domain]}/")
    if rel is None:
        report.error(ann, line, "path-outside", f"filename {rec.filename!r} leaves the "
                                                f"{domain} folder {folder}")
        return None
    if rel in seen:
        report.error(ann, line, "duplicate-record", f"filename {rec.filename!r} is already "
                                                    f"annotated on line {seen[rel]}")
        return None
    seen[rel] = line
    parts = PurePosixPath(rel).parts
    if len(parts) > 1 and parts[0] != rec.style:
        report.warning(ann, line, "class-folder-mismatch",
                       f"{rec.filename!r} lies in folder {parts[0]!r} but the record's "
                       f"class is {rec.style!r} (calligrapher-script_type)")
    path = (folder / rel).resolve()
    error = None
    if (refused := _refusal(folder, rel)) is not None:  # a symlink out, a FIFO …
        error = refused[0]
        report.error(ann, line, error, refused[1])
    elif not path.is_file():
        error = "image-missing"
        report.error(ann, line, "image-missing", f"annotation without image: {path}")
    return HcsuImage(id=f"{domain}/{PurePosixPath(rel).with_suffix('')}", domain=domain,
                     record=rec, path=path, source=f"{ann}:{line}", load_error=error)


def _check_images(report: Report, images: list[HcsuImage], phash_distance: int,
                  progress: bool) -> list[HcsuImage]:
    """Decode every present image; returns the images with ``load_error`` set on the
    unusable ones (for the class checks)."""
    present = [img for img in images if not img.load_error]
    checks = dict(zip((img.id for img in present),
                      inspect_all([img.path for img in present], progress), strict=True))
    out: list[HcsuImage] = []
    hashes: list[int | None] = []
    for img in images:
        if img.load_error:
            out.append(img)
            hashes.append(None)
            continue
        report.count("images")
        check = checks[img.id]
        file, _, line = img.source.rpartition(":")
        if check.code:
            report.error(file, int(line), check.code, check.message or "")
            img = HcsuImage(img.id, img.domain, img.record, img.path, img.source, check.code)
        out.append(img)
        hashes.append(check.phash)
    for dup in find_duplicates(hashes, phash_distance):
        a, b = out[dup.first], out[dup.second]
        file, _, line = b.source.rpartition(":")
        report.warning(file, int(line), "duplicate-image",
                       f"{b.path} looks like {a.path} ({a.source}; perceptual hashes "
                       f"{dup.distance} bit(s) apart, at most {phash_distance} counted as "
                       "a duplicate)")
    return out


def _check_classes(report: Report, root: Path, images: list[HcsuImage], k: int,
                   pool: Literal["domain", "all"]) -> None:
    classes = build_classes(images)
    dataset = HcsuDataset(root=root, images=images, classes=classes)
    report.count("classes", len(classes))
    short: dict[Domain, list[tuple[str, int]]] = {}
    for key, cls in classes.items():
        ann = root / f"{DOMAIN_FOLDERS[cls.domain]}_annotations.json"
        if len(cls.images) < 2:
            report.error(ann, None, "class-too-small",
                         f"class {key} has {len(cls.images)} usable image(s): a K-way "
                         "question needs 2 (the target and another image of its class as "
                         "the reference)")
        if cls.description is None:
            report.warning(ann, None, "description-missing",
                           f"class {key} has no expert 'description': the discrimination "
                           "task (expert descriptions) cannot show it")
        offered = len(distractor_pool(dataset, cls, pool))
        if offered < k - 1:
            short.setdefault(cls.domain, []).append((key, offered))
    for domain, rows in short.items():
        ann = root / f"{DOMAIN_FOLDERS[domain]}_annotations.json"
        n = min(offered for _, offered in rows)
        where = f"domain {domain}" if pool == "domain" else "the data"
        report.error(ann, None, "k-infeasible",
                     f"K={k} needs {k - 1} distractor classes per target, but {where} "
                     f"offers only {n} for {', '.join(key for key, _ in rows)}; lower --k "
                     f"to at most {n + 1}"
                     + (" or use --distractor-pool all" if pool == "domain" else ""))
