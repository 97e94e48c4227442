"""Typed records of the HCSU release: annotation rows, images, style classes, the dataset.

A *style class* is a (calligrapher, script) pair within one domain (Bei = stone rubbings,
Tie = ink manuscripts); its key is ``"<domain>/<calligrapher>-<script>"``, e.g.
``"Tie/王羲之-行书"``. A sample id is ``"<domain>/<filename without suffix>"``,
e.g. ``"Tie/王羲之-行书/不_1"``; ids depend neither on where the release lies on disk nor on
the image format, so the same question is built for the raw (Wild), Wild-Resize and
canonical copies of an image.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class HcsuImage:
    """One annotated character image.

    ``path``: absolute path of the image file. ``source``: annotation file and record
    number (for error messages). ``load_error``: why the image cannot be used (missing
    file), else ``None``.
    """

    id: str
    domain: Domain
    record: HcsuRecord
    path: Path
    source: str
    load_error: str | None = None

    @property
    def style(self) -> str:
        return self.record.style

    @property
    def class_key(self) -> str:
        return f"{self.domain}/{self.record.style}"

    @property
    def char(self) -> str:
        return self.record.char


@dataclass(frozen=True)
class StyleClass:
    """A (calligrapher, script) class within one domain.

    ``description``: the expert style description of the class: the most frequent
    non-empty ``description`` among its records (ties: the alphabetically first), or
    ``None`` when no record has one. ``images``: the usable images (no ``load_error``),
    sorted by id.
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
        descs = Counter(d.strip() for i in members if (d := i.record.description) and d.strip())
        desc = min(descs.items(), key=lambda kv: (-kv[1], kv[0]))[0] if descs else None
        first = members[0]
        out[key] = StyleClass(key=key, domain=first.domain, style=first.style,
                              calligrapher=first.record.calligrapher,
                              script_type=first.record.script_type, description=desc,
                              images=tuple(i for i in members if i.load_error is None))
    return out
