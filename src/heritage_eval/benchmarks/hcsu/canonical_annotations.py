"""The annotation files of a canonicalized tree (:func:`~.canonical_batch.canonicalize_tree`):
each ``SRC/*_annotations.json`` copied to ``DST`` with its records pointed at the
``.png`` outputs, rewritten only when its text changes; a copy whose source annotation
file is gone is removed, so ``DST`` never lists images the source no longer has."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from heritage_eval.core.atomic_write import atomic_write_bytes
from heritage_eval.core.datapath import NotARegularFile, read_regular_text

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}


def write_text(path: Path, text: str) -> None:
    """``text`` written atomically as ``core.store.atomic_write_text`` writes it (secrets
    redacted; a lone surrogate as its ``\\uXXXX`` escape, UTF-8, ``\\n`` line ends) — the
    same bytes — through :func:`~heritage_eval.core.atomic_write.atomic_write_bytes`
    (standard library only; not fsynced)."""
    atomic_write_bytes(path, _encoded(text))


def _encoded(text: str) -> bytes:
    from heritage_eval.core.redact import redact

    return redact(text).encode("utf-8", "backslashreplace")


def _write_if_changed(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically unless ``path`` already holds exactly it."""
    try:
        if path.is_file() and path.read_bytes() == data:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, data)


def sync_annotations(src: Path, dst: Path, names: dict[Path, Path],
                     excluded: set[PurePosixPath], prune: bool) -> list[str]:
    """Copy every ``src/*_annotations.json`` to ``dst`` (:func:`copy_annotations`), and,
    when ``prune`` (``dst`` is a canonicalize output folder), remove each
    ``dst/*_annotations.json`` with no source beside ``src``. Returns the errors."""
    errors: list[str] = []
    wanted = sorted(src.glob("*_annotations.json"))
    # only the inputs renamed by a collision ("dup.jpg" -> "dup.jpg.png") need a lookup
    renamed = {k: v for k, v in names.items() if v.name == k.name + ".png"}
    for ann in wanted:
        errors.extend(copy_annotations(ann, dst / ann.name, renamed, excluded))
    if prune:
        keep = {a.name for a in wanted}
        for old in sorted(dst.glob("*_annotations.json")):
            if old.name not in keep and old.is_file():
                old.unlink()
    return errors


def copy_annotations(src: Path, dst: Path, names: dict[Path, Path] | None = None,
                     excluded: set[PurePosixPath] | None = None) -> list[str]:
    """Copy an annotation file, pointing each record's ``filename`` at its ``.png``
    output (``names``: source-relative input -> output path, for collisions) and
    leaving out the records of ``excluded`` inputs (blank crops: no output). An
    unreadable file is copied unchanged and reported. ``dst`` is written only when its
    bytes would change."""
    try:
        records = json.loads(read_regular_text(src, encoding="utf-8-sig"))
    except NotARegularFile as exc:  # a FIFO or device: never opened, not copied
        return [f"{src}: not copied ({exc.strerror})"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        try:
            _write_if_changed(dst, src.read_bytes())
        except OSError as err:
            return [f"{src}: not copied ({err})"]
        return [f"{src}: copied unchanged, not valid JSON ({exc})"]
    folder = PurePosixPath(src.name.split("_annotations", 1)[0])  # "tie" / "bei"
    renamed = {PurePosixPath(k.as_posix()): PurePosixPath(v.as_posix())
               for k, v in (names or {}).items()}
    if isinstance(records, list):
        kept = []
        for rec in records:
            kept.append(rec)
            name = rec.get("filename") if isinstance(rec, dict) else None
            if isinstance(name, str) and Path(name).suffix.lower() in IMAGE_SUFFIXES:
                rel = PurePosixPath(name.replace("\\", "/"))
                key = rel if rel.parts[:1] == folder.parts else folder / rel
                if excluded and key in excluded:
                    kept.pop()  # a blank crop: excluded from the build
                    continue
                out = renamed.get(key)
                if out is not None and out.name != key.with_suffix(".png").name:
                    rec["filename"] = str(rel.with_name(out.name))
                else:
                    rec["filename"] = str(rel.with_suffix(".png"))
        records = kept
    from heritage_eval.core.unicode_text import lone_surrogate

    text = json.dumps(records, ensure_ascii=False, indent=1)
    if lone_surrogate(text) is not None:  # not writable as UTF-8: escaped, as it was read
        text = json.dumps(records, ensure_ascii=True, indent=1)
    _write_if_changed(dst, _encoded(text + "\n"))
    return []
