"""Read a glyph set: ``DIR/glyphs.jsonl`` and the images its lines name.

Each line is ``{"id": str, "image": str, "answer": str, "period": str}``; ``image`` is
relative to ``DIR``. What cannot be run at all raises
:class:`~heritage_eval.plugin.UsageError` naming ``glyphs.jsonl:LINE`` (the engine then
writes nothing): a missing file, a line that is not such an object, a repeated id, an
answer that is not one character. An image that is missing, not a regular file or
outside ``DIR`` (after following links) only spoils its own glyph: the glyph gets a
``load_error`` and becomes an ``error`` record, never sent.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_eval.plugin import UsageError, confined, read_regular_text

FILE_NAME = "glyphs.jsonl"
FIELDS = ("id", "image", "answer", "period")


@dataclass(frozen=True)
class Glyph:
    """One sample. ``image``: path relative to the set's folder (POSIX, as written);
    ``source``: ``glyphs.jsonl:LINE``; ``load_error``: why the image cannot be used."""

    id: str
    image: str
    answer: str
    period: str
    source: str
    load_error: str | None = None


@dataclass(frozen=True)
class GlyphSet:
    """A loaded set: its glyphs in file order and its folder (absolute)."""

    root: Path
    glyphs: list[Glyph]

    @property
    def labels(self) -> list[str]:
        """Every distinct answer, in order of first appearance (the chance baseline's
        options)."""
        return list(dict.fromkeys(g.answer for g in self.glyphs))

    def counts(self) -> dict[str, Any]:
        """``glyphs``, ``load_errors`` and ``per_period`` counts, for provenance."""
        per: dict[str, int] = {}
        for g in self.glyphs:
            per[g.period] = per.get(g.period, 0) + 1
        return {"glyphs": len(self.glyphs),
                "load_errors": sum(1 for g in self.glyphs if g.load_error),
                "per_period": per}


def _line(text: str, where: str) -> dict[str, str]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not valid JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected an object with {', '.join(FIELDS)}")
    bad = [f for f in FIELDS if not isinstance(obj.get(f), str) or not obj[f]]
    if bad:
        raise UsageError(f"{where}: missing or empty field(s) {', '.join(bad)} "
                         "(each must be a non-empty string)")
    if len(obj["answer"]) != 1:
        raise UsageError(f"{where}: answer {obj['answer']!r} is not one character")
    return {f: obj[f] for f in FIELDS}


def _image_problem(root: Path, image: str) -> str | None:
    """Why ``root/image`` cannot be shown to a model, or ``None``."""
    try:
        confined(root, root / image)
    except (OSError, ValueError) as exc:  # missing / not a regular file / outside root
        return f"image {image!r}: {exc}"
    return None


def load_glyphs(root: Path) -> GlyphSet:
    """The glyph set in folder ``root`` (see the module docstring for what raises)."""
    root = Path(root).absolute()
    path = root / FILE_NAME
    try:
        text = read_regular_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--data {root}: cannot read {FILE_NAME}: {exc}") from None
    glyphs: list[Glyph] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{FILE_NAME}:{number}"
        fields = _line(raw, where)
        if fields["id"] in seen:
            raise UsageError(f"{where}: id {fields['id']!r} appears twice")
        seen.add(fields["id"])
        problem = _image_problem(root, fields["image"])
        glyphs.append(Glyph(**fields, source=where,
                            load_error=f"{where}: {problem}" if problem else None))
    if not glyphs:
        raise UsageError(f"--data {root}: {FILE_NAME} holds no glyph")
    return GlyphSet(root=root, glyphs=glyphs)


def image_path(glyphs: GlyphSet, glyph: Glyph) -> str:
    """The absolute path of ``glyph``'s image."""
    return os.path.join(glyphs.root, glyph.image)
