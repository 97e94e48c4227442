"""Typed records of the HCSU release: annotation rows, images, style classes, the dataset.

A *style class* is a (calligrapher, script) pair within one domain (Bei = stone rubbings,
Tie = ink manuscripts); its key is ``"<domain>/<calligrapher>-<script>"``, e.g.
``"Tie/王羲之-行书"``. A sample id is ``"<domain>/<filename without suffix>"``,
e.g. ``"Tie/王羲之-行书/不_1"``; ids depend neither on where the release lies on disk nor on
the image format, so the same question is built for the raw (Wild), Wild-Resize and
canonical copies of an image.
"""

from __future__ import annotations

import os
import posixpath
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

Domain = Literal["Bei", "Tie"]
DOMAINS: tuple[Domain, ...] = ("Bei", "Tie")
#: Folder and annotation-file stem of each domain in the release layout.
DOMAIN_FOLDERS: dict[Domain, str] = {"Bei": "bei", "Tie": "tie"}
#: Human-readable medium of each domain, used in prompts and tables.
MEDIUM: dict[Domain, str] = {"Bei": "stone rubbing (Bei)", "Tie": "ink manuscript (Tie)"}


class HcsuRecord(BaseModel):
    """One row of ``bei_annotations.json`` / ``tie_annotations.json``.

    ``filename`` is relative to the domain folder (``"<calligrapher>-<script>/<file>"``).
    Required: ``filename``, ``char``, ``calligrapher``, ``script_type``, ``quality``; the
    rest is optional, and unknown extra fields are kept (``model_extra``).
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    filename: str
    char: str
    calligrapher: str
    script_type: str
    quality: str
    dynasty: str | None = None
    birth_year: int | str | None = None
    death_year: int | str | None = None
    source_type: str | None = None
    stroke_style: str | None = None
    ink_style: str | None = None
    description: str | None = None

    @property
    def style(self) -> str:
        """``"<calligrapher>-<script>"``, the folder name of the class in the release."""
        return f"{self.calligrapher}-{self.script_type}"


class HcsuImage:
    """One annotated character image (immutable).

    ``id``: sample id. ``domain``: ``"Bei"`` or ``"Tie"``. ``record``: its annotation
    row (:class:`HcsuRecord`). ``path``: absolute path of the image file. ``source``:
    annotation file and record number (for error messages). ``load_error``: why the
    image cannot be used (missing file), else ``None``.

    Compact (decision: a release of 100,000 images is held whole while a run streams):
    the loader builds images with :meth:`from_facts`, which keeps the row as a tuple of
    its values (shared key tuple, repeated values shared) and rebuilds the
    :class:`HcsuRecord` only when :attr:`record` is read; the path is kept as its folder
    (shared by the images of a folder) and file name, the source as its record number.
    The fields read while planning (:attr:`class_key`, :attr:`char`) are stored. About
    0.6 kB an image instead of about 3 kB; equality, hashing and pickling see the same
    six fields as before.
    """

    __slots__ = (
        "_dir",
        "_keys",
        "_name",
        "_record",
        "_source",
        "_values",
        "char",
        "class_key",
        "domain",
        "id",
        "load_error",
    )
    id: str
    domain: Domain
    class_key: str
    char: str
    load_error: str | None
    _dir: str
    _name: str | None
    _source: str | int
    _keys: tuple[str, ...]
    _values: tuple[object, ...]
    _record: HcsuRecord | None

    def __init__(self, id: str, domain: Domain, record: HcsuRecord,
                 path: Path, source: str, load_error: str | None = None) -> None:
        self._set(id, domain, f"{domain}/{record.style}", record.char, load_error,
                  str(path), "", source, (), (), record)

    @classmethod
    def from_facts(cls, id: str, domain: Domain, class_key: str,
                   keys: tuple[str, ...], values: tuple[object, ...], folder: str,
                   name: str | None, source: str | int, load_error: str | None = None
                   ) -> HcsuImage:
        """An image from a validated row kept compact: ``class_key``
        (``"<domain>/<calligrapher>-<script_type>"`` of the row, shared by the images of
        a class), ``keys`` (the row's keys in order) and ``values`` (see
        :func:`record_facts`), its resolved path as ``folder`` and file ``name`` (joined
        with ``os.path.join``; ``None``: :func:`file_name_of` the row's ``filename``,
        for which the caller checked it), ``source`` as the record number (``int``: record ``n`` of
        ``<domain>_annotations.json``) or a text."""
        self = cls.__new__(cls)
        self._set(id, domain, class_key, values[keys.index("char")], load_error, folder,
                  name, source, keys, values, None)
        return self

    def _set(self, *values: object) -> None:
        for slot, value in zip(_SLOT_ORDER, values, strict=True):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"HcsuImage is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"HcsuImage is immutable: cannot delete {name!r}")

    @property
    def record(self) -> HcsuRecord:
        """The annotation row (rebuilt from the compact values when loaded compact)."""
        got: HcsuRecord | None = self._record
        if got is None:
            got = HcsuRecord.model_validate(dict(zip(self._keys, self._values, strict=True)))
        return got

    def fact(self, name: str) -> object:
        """The row's field ``name`` (declared or extra) without rebuilding the record;
        ``None`` when the row does not have it."""
        if self._record is not None:
            return getattr(self._record, name, None) if name in HcsuRecord.model_fields \
                else (self._record.model_extra or {}).get(name)
        try:
            return self._values[self._keys.index(name)]
        except ValueError:
            return None

    @property
    def path(self) -> Path:
        return Path(self.path_text)

    @property
    def path_text(self) -> str:
        """``str(self.path)`` without making a :class:`~pathlib.Path`."""
        name = self._name
        if name is None:  # the file name of the row's filename (checked at load)
            name = file_name_of(str(self._values[self._keys.index("filename")]))
        return os.path.join(self._dir, name) if name else self._dir

    @property
    def source(self) -> str:
        src = self._source
        if isinstance(src, int):
            return f"{DOMAIN_FOLDERS[self.domain]}_annotations.json record {src}"
        return str(src)

    @property
    def style(self) -> str:
        return self.class_key[len(self.domain) + 1:]

    @property
    def calligrapher(self) -> str:
        """The row's ``calligrapher``."""
        return str(self.fact("calligrapher"))

    @property
    def script_type(self) -> str:
        """The row's ``script_type``."""
        return str(self.fact("script_type"))

    @property
    def description(self) -> str | None:
        """The row's ``description`` (``None`` when it has none)."""
        got = self.fact("description")
        return None if got is None else str(got)

    def _fields(self) -> tuple[object, ...]:
        return (self.id, self.domain, self.record, self.path, self.source, self.load_error)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HcsuImage):
            return NotImplemented
        return self is other or self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((self.id, self.domain, self.path_text, self.source, self.load_error))

    def __repr__(self) -> str:
        return (f"HcsuImage(id={self.id!r}, domain={self.domain!r}, path={self.path!r}, "
                f"source={self.source!r}, load_error={self.load_error!r})")

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (_restore_image, tuple(getattr(self, s) for s in _SLOT_ORDER))


#: The order of :meth:`HcsuImage._set`'s values.
_SLOT_ORDER = ("id", "domain", "class_key", "char", "load_error", "_dir", "_name", "_source",
               "_keys", "_values", "_record")


def _restore_image(*values: object) -> HcsuImage:
    """An :class:`HcsuImage` from its slot values (unpickling)."""
    image = HcsuImage.__new__(HcsuImage)
    image._set(*values)
    return image


def file_name_of(filename: str) -> str:
    """The last part of an annotation ``filename`` (``\\`` read as ``/``, the path
    normalised as the loader does)."""
    return posixpath.basename(posixpath.normpath(filename.replace("\\", "/")))


def record_facts(raw: dict[str, object], record: HcsuRecord
                 ) -> tuple[tuple[str, ...], tuple[object, ...]]:
    """``(keys, values)`` of a validated row: the keys of ``raw`` in order, each declared
    field's validated value and each extra field's value (``model_validate`` of the pair
    zipped gives a record equal to ``record``)."""
    extra = record.model_extra or {}
    keys = tuple(raw)
    return keys, tuple(getattr(record, k) if k in HcsuRecord.model_fields else extra[k]
                       for k in keys)


@dataclass(frozen=True)
class StyleClass:
    """A (calligrapher, script) class within one domain.

    ``description``: the expert style description of the class: the most frequent
    non-empty ``description`` among its records (ties: the alphabetically first), or
    ``None`` when no record has one. ``images``: every annotated image of the class,
    usable or not, sorted by id: references, distractors and shots are drawn from all of
    them, so that an unreadable file does not move the seeded draws of other samples; a
    question or request that draws an image with a ``load_error`` is that sample's data
    error (never sent), and a re-run after the file is repaired sends only such samples.
    """

    key: str
    domain: Domain
    style: str
    calligrapher: str
    script_type: str
    description: str | None
    images: tuple[HcsuImage, ...]


@dataclass
class HcsuDataset:
    """A loaded release: every annotated image (usable or not), the classes, and the
    ``problems`` found while loading (malformed records, missing images)."""

    root: Path
    images: list[HcsuImage]
    classes: dict[str, StyleClass]
    problems: list[str] = field(default_factory=list)

    def domains(self) -> list[Domain]:
        """Domains that have at least one class, in the order Bei, Tie."""
        present = {c.domain for c in self.classes.values()}
        return [d for d in DOMAINS if d in present]

    def domain_classes(self, domain: Domain) -> list[StyleClass]:
        """Classes of ``domain`` sorted by key."""
        return sorted((c for c in self.classes.values() if c.domain == domain),
                      key=lambda c: c.key)

    def restrict(self, class_keys: set[str]) -> HcsuDataset:
        """A copy holding only the classes (and their images) named in ``class_keys``."""
        return HcsuDataset(self.root, [i for i in self.images if i.class_key in class_keys],
                           {k: c for k, c in self.classes.items() if k in class_keys},
                           list(self.problems))


def build_classes(images: list[HcsuImage]) -> dict[str, StyleClass]:
    """Group images into :class:`StyleClass` objects keyed by class key."""
    groups: dict[str, list[HcsuImage]] = {}
    for img in images:
        groups.setdefault(img.class_key, []).append(img)
    out: dict[str, StyleClass] = {}
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda i: i.id)
        descs = Counter(d.strip() for i in members if (d := i.description) and d.strip())
        desc = min(descs.items(), key=lambda kv: (-kv[1], kv[0]))[0] if descs else None
        first = members[0]
        out[key] = StyleClass(key=key, domain=first.domain, style=first.style,
                              calligrapher=first.calligrapher,
                              script_type=first.script_type, description=desc,
                              images=tuple(members))
    return out
