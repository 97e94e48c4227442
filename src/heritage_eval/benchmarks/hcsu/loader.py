"""Load an HCSU release (or a collection in the same layout) into an :class:`HcsuDataset`.

Layout (per domain, ``bei`` and ``tie``)::

    ROOT/bei/<calligrapher>-<script>/<file>.png     ROOT/bei_annotations.json
    ROOT/tie/<calligrapher>-<script>/<file>.png     ROOT/tie_annotations.json

Instead of the folder, ``ROOT/bei.zip`` / ``ROOT/tie.zip`` (password-protected) may be
present: it is extracted into ``extract_to/bei`` (see :mod:`.archive`). The raw Wild
subset loads the same way. An annotation file is a JSON list of records
(:class:`~.schema.HcsuRecord`), UTF-8 with or without a byte-order mark. It is read one
record at a time (:mod:`.annotation_stream`; a file that is not one JSON list is read
whole again, for the error message) and each image kept compact
(:meth:`~.schema.HcsuImage.from_facts`): the load holds about 0.5 kB per image.

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
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from PIL import Image
from pydantic import ValidationError

from heritage_eval.benchmarks.hcsu.annotation_stream import NotAStreamableArray, iter_json_array
from heritage_eval.benchmarks.hcsu.archive import ArchiveError, extract_domain_zip
from heritage_eval.benchmarks.hcsu.schema import (
    DOMAIN_FOLDERS,
    DOMAINS,
    Domain,
    HcsuDataset,
    HcsuImage,
    HcsuRecord,
    build_classes,
    file_name_of,
    record_facts,
)
from heritage_eval.core.datapath import (
    confined,
    open_regular,
    read_regular_text,
    regular_file_problem,
)
from heritage_eval.core.images import decode_problem
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
        return f"corrupt or unreadable image ({decode_problem(path, exc)})"
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


def _unlisted(folder: Path, listed: dict[str, set[str]]) -> list[str]:
    """Image files under ``folder`` whose resolved path is not in ``listed`` (resolved
    folder -> file names, compared as ``os.path.normcase`` gives them)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            # os.path, not pathlib: a Path per file would intern every file name
            if os.path.splitext(name)[1].lower() in IMAGE_SUFFIXES:
                path = os.path.join(dirpath, name)
                where, file = os.path.split(os.path.normcase(os.path.realpath(path)))
                if file not in listed.get(where, ()):
                    out.append(str(Path(path)))
    return out


#: Records whose images are checked together (one batch of the thread pool).
CHECK_BATCH = 2048


class _Shared:
    """One object per distinct value met while loading (folders, class keys, repeated
    field values), so that 100,000 images hold each repeated text once."""

    def __init__(self) -> None:
        self._seen: dict[tuple[type, object], object] = {}
        self._keys: dict[tuple[str, ...], tuple[str, ...]] = {}

    def value(self, value: object) -> object:
        """``value``, or the equal one (same type) met before; lists, dicts: as given."""
        if isinstance(value, (list, dict)):
            return value
        return self._seen.setdefault((type(value), value), value)

    def text(self, value: str) -> str:
        """:meth:`value` of a text."""
        got = self.value(value)
        assert isinstance(got, str)
        return got

    def facts(self, raw: dict[str, object], rec: HcsuRecord
              ) -> tuple[tuple[str, ...], tuple[object, ...]]:
        """:func:`~.schema.record_facts` with the keys and repeated values shared (the
        file name, unique, is kept as is)."""
        keys, values = record_facts(raw, rec)
        keys = self._keys.setdefault(keys, keys)
        return keys, tuple(v if k == "filename" else self.value(v)
                           for k, v in zip(keys, values, strict=True))


class _Found(NamedTuple):
    """A record that passed the checks, its image not yet looked at."""

    sample_id: str
    class_key: str
    keys: tuple[str, ...]
    values: tuple[object, ...]
    folder: str
    name: str
    number: int
    derived: bool  # ``name`` is the file name of the row's ``filename``


def _load_domain(root: Path, domain: Domain, folder: Path, problems: list[str]
                 ) -> list[HcsuImage]:
    ann = root / f"{DOMAIN_FOLDERS[domain]}_annotations.json"
    if not os.path.lexists(ann):
        problems.append(f"{folder} present but {ann.name} missing: domain {domain} skipped")
        return []
    try:
        return _load_records(root, domain, folder, ann, _stream_records(ann, root),
                             problems)
    except NotAStreamableArray:  # read it whole: the old errors (or the old result)
        return _load_records(root, domain, folder, ann, iter(_read_records(ann, root)),
                             problems)


def _stream_records(path: Path, root: Path) -> Iterator[object]:
    """The records of the annotation file ``path``, one at a time
    (:func:`~.annotation_stream.iter_json_array`); any failure to read them as one JSON
    array raises :class:`NotAStreamableArray`."""
    try:
        with open_regular(confined(root, path), "r", encoding="utf-8-sig") as fh:
            yield from iter_json_array(fh)
    except (OSError, PathOutsideRoot, UnicodeDecodeError, ValueError) as exc:
        raise NotAStreamableArray from exc


def _load_records(root: Path, domain: Domain, folder: Path, ann: Path,
                  records: Iterator[object], problems: list[str]) -> list[HcsuImage]:
    """The images of the records read from ``ann`` (problems added to ``problems`` only
    once every record was read: a file that turns out unreadable adds none)."""
    found: list[_Found] = []
    outside: dict[str, str] = {}
    seen: set[str] = set()
    noted: list[str] = []  # the records' problems, in record order
    errors: list[str] = []  # the images' problems, after them (as when all were listed)
    images: list[HcsuImage] = []
    listed: dict[str, set[str]] = {}
    shared = _Shared()
    prefix = f"{DOMAIN_FOLDERS[domain]}/"
    count = 0
    with ThreadPoolExecutor(max_workers=8) as pool:
        def check(batch: list[_Found]) -> None:
            paths = [os.path.join(f.folder, f.name) for f in batch]
            checks = pool.map(lambda f, p: outside.get(f.sample_id) or image_problem(Path(p)),
                              batch, paths)
            for f, path, problem in zip(batch, paths, checks, strict=True):
                where = f"{ann.name} record {f.number}"
                error = f"{problem}: {path} ({where})" if problem else None
                if error:
                    errors.append(error)
                images.append(HcsuImage.from_facts(f.sample_id, domain, f.class_key,
                                                   f.keys, f.values, f.folder,
                                                   None if f.derived else f.name,
                                                   f.number, error))
            batch.clear()

        for index, raw in enumerate(records):
            count += 1
            got = _one_record(root, domain, folder, ann, prefix, index, raw, seen, outside,
                              noted, shared)
            if got is not None:
                found.append(got)
                where, file = os.path.split(os.path.normcase(
                    os.path.join(got.folder, got.name)))
                listed.setdefault(where, set()).add(file)
                if len(found) >= CHECK_BATCH:
                    check(found)
        check(found)
    if not count:
        problems.append(f"{ann.name}: the annotation list is empty (no records): domain "
                        f"{domain} has no images")
    problems.extend(noted)
    problems.extend(errors)
    for path_text in _unlisted(folder, listed):
        problems.append(f"{path_text}: image on disk has no record in {ann.name} "
                        "(warning: not used)")
    return images


def _one_record(root: Path, domain: Domain, folder: Path, ann: Path, prefix: str,
                index: int, raw: object, seen: set[str], outside: dict[str, str],
                noted: list[str], shared: _Shared) -> _Found | None:
    """Record ``index`` checked (its problems added to ``noted``): ``None`` when skipped."""
    where = f"{ann.name} record {index}"
    if not isinstance(raw, dict):
        noted.append(f"{where}: not a JSON object")
        return None
    try:
        rec = HcsuRecord.model_validate(raw)
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
        noted.append(f"{where}: invalid or missing field(s) {fields}")
        return None
    if (unusable := unusable_file_name(rec.filename)) is not None:
        noted.append(f"{where}: filename holds {unusable}: not a usable file name, "
                     "record skipped")
        return None
    rel = _relative(rec.filename, folder, prefix)
    if rel is None:
        noted.append(f"{where}: filename {rec.filename!r} leaves the {domain} folder "
                     f"{folder}: refused, record skipped")
        return None
    sample_id = f"{domain}/{PurePosixPath(rel).with_suffix('')}"
    if sample_id in seen:
        noted.append(f"{where}: duplicate filename {rec.filename!r} (first kept)")
        return None
    seen.add(sample_id)
    if not rec.char.strip():
        noted.append(f"{where}: empty 'char' for {rec.filename!r} (warning: the "
                     "anti-leakage rule cannot compare its character)")
    try:  # a symlink leading out of the data is refused (docs/paths.md); ``rel`` is
        # joined to ``folder`` here, once: a relative ``root`` must not be joined twice
        joined_inside([root, folder], rel, base=folder)
    except PathOutsideRoot as exc:
        outside[sample_id] = str(exc)
    where_dir, name = os.path.split(str((folder / rel).resolve()))
    keys, values = shared.facts(raw, rec)
    return _Found(sample_id, shared.text(f"{domain}/{rec.style}"), keys, values,
                  shared.text(where_dir), name, index,
                  name == file_name_of(rec.filename))  # then the image need not keep it


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
