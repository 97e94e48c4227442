"""Load an Ancient-Bench release in the official layout.

Layout: one folder per category (medium) under the release root, each with a
``conv.jsonl`` whose lines are ``{"image": "<file name>", "human_gt": "<transcription>"}``
(optional ``script``, ``period``, ``institution`` are carried as metadata); images lie
beside ``conv.jsonl`` or in its ``images/`` sub-folder.

Bad input never aborts loading: a non-UTF-8 or malformed line, a missing field, an empty
ground truth or a missing image yields a :class:`~heritage_eval.core.types.Sample` with
``load_error`` naming ``file:line``; the pipeline turns it into an ``error`` row (its
``image``: the image's place in the release whatever the working directory,
:func:`error_image_path`). A ``conv.jsonl`` that cannot be read at all (a folder, a FIFO,
socket or device — refused without being opened —, a symlink leading out of the release,
no read permission) yields one such sample for its category (:func:`unreadable_part`);
the other categories load.

An ``image`` reference that resolves outside the release root (``../..``, an absolute
path, a symbolic link leading out) is refused the same way — an error sample naming
``file:line`` and the reference — unless outside references are allowed
(``--allow-outside-paths``; :func:`heritage_eval.core.paths.resolve_inside`).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.ancient_bench.categories import (
    MEDIA,
    both_names,
    category_order,
    did_you_mean,
    resolve_category,
)
from heritage_eval.core.datapath import open_regular, regular_file_problem
from heritage_eval.core.paths import (
    PathOutsideRoot,
    joined_inside,
    path_text,
    regular_files_inside,
)
from heritage_eval.core.sizecap import LongLine, iter_lines
from heritage_eval.core.types import Sample
from heritage_eval.core.unicode_text import lone_surrogate, unusable_file_name

log = logging.getLogger(__name__)

#: Optional per-line metadata fields carried into ``Sample.metadata``.
METADATA_FIELDS = ("script", "period", "institution")
CONV_FILE = "conv.jsonl"


@dataclass
class Release:
    """A loaded release: ``samples`` in category (paper) order then line order;
    ``categories``: folder names found (or selected); ``warnings``: human-readable notes."""

    root: Path
    samples: list[Sample]
    categories: list[str]
    warnings: list[str] = field(default_factory=list)
    #: ``load_release(keep_samples=False)``: ``samples`` is empty and
    #: :meth:`iter_samples` reads the categories again, one line at a time
    streamed: bool = False
    limit: int | None = None
    check_images: bool = True

    @property
    def n_load_errors(self) -> int:
        return sum(1 for s in self.samples if s.load_error)

    def iter_samples(self, warnings: list[str] | None = None, notes: bool = True,
                     locate: bool = True) -> Iterator[Sample]:
        """The samples in release order: the loaded list, or — for a streamed release —
        parsed again from each ``conv.jsonl`` as they are asked for (memory: one file's
        bytes). ``warnings`` receives the per-file notes of a streamed read (duplicate
        images, empty files), as :func:`load_release` gives them; ``notes=False``: no
        note is logged or collected (a second pass over the same files);
        ``locate=False``: see :func:`iter_category` (a pass that reads no image path)."""
        if not self.streamed:
            yield from self.samples
            return
        for cat in self.categories:
            yield from iter_category(self.root / cat, self.limit, self.check_images,
                                     warnings, root=self.root, notes=notes, locate=locate)


def find_categories(root: Path) -> list[str]:
    """Category folders under ``root`` holding a ``conv.jsonl``, in the paper's order."""
    return category_order({p.parent.name for p in root.glob(f"*/{CONV_FILE}")})


def load_release(root: str | Path, categories: list[str] | None = None,
                 limit: int | None = None, check_images: bool = True,
                 keep_samples: bool = True) -> Release:
    """Load every (or the selected) category of the release at ``root``.

    ``categories``: folder or paper names (``"stele"``, ``"seals"``); ``limit``: keep the
    first N lines of each category; ``check_images``: require the image file to exist
    (``False`` for ground-truth-only folders, as used when scoring predictions);
    ``keep_samples=False``: check the layout and categories but read no line yet — the
    samples come from :meth:`Release.iter_samples` (``score`` streams them).
    Raises ``FileNotFoundError`` if ``root`` does not exist, is a file, or holds no
    category (with a hint to pass the parent when ``root`` is itself a category folder),
    and ``ValueError`` for a requested category that is not there.

    Unknown category folders (not one of the paper's nine media) are loaded and included
    in the overall mean, with a warning; an empty ``conv.jsonl`` gives a warning naming it.
    An ``export hf`` folder is read back first (an installed data format:
    :func:`heritage_eval.core.plugins.materialise`).
    """
    from heritage_eval.core.plugins import materialise

    base = materialise(Path(root), "ancient-bench")
    if base.is_file():
        raise FileNotFoundError(f"Ancient-Bench data path is a file, not a folder: {base} "
                                "(pass the release root holding <category>/conv.jsonl)")
    if not base.is_dir():
        raise FileNotFoundError(f"Ancient-Bench data folder not found: {base}")
    found = find_categories(base)
    if not found:
        hint = ""
        if (base / CONV_FILE).is_file():
            hint = (f"; {base} holds {CONV_FILE} itself, so it looks like one category "
                    f"folder: pass its parent {base.resolve().parent} (the release root)")
        else:  # one level too high: a child folder is a release root
            roots = sorted({p.parent.parent for p in base.glob(f"*/*/{CONV_FILE}")})
            if roots:
                hint = "; did you mean " + " or ".join(str(r) for r in roots[:3]) + "?"
        raise FileNotFoundError(f"no '<category>/{CONV_FILE}' under {base}{hint}")
    warnings: list[str] = []
    if categories:
        wanted = [resolve_category(c) for c in categories]
        missing = [c for c in wanted if c not in found]
        if missing:  # the closest folder or paper name suggested
            raise ValueError(f"categories not found under {base}: {', '.join(missing)}"
                             f"{did_you_mean(missing, found)} (found: "
                             f"{', '.join(both_names(found))})")
        found = category_order(set(wanted))
    for cat in found:
        if cat not in MEDIA:
            msg = (f"unknown category folder {cat!r} (not one of the paper's 9 media): "
                   "loaded, scored and included in Overall")
            log.warning(msg)
            warnings.append(msg)
    samples: list[Sample] = []
    if keep_samples:
        for cat in found:
            samples.extend(iter_category(base / cat, limit, check_images, warnings,
                                         root=base))
    return Release(root=base, samples=samples, categories=found, warnings=warnings,
                   streamed=not keep_samples, limit=limit, check_images=check_images)


def load_category(folder: Path, limit: int | None = None, check_images: bool = True,
                  warnings: list[str] | None = None, root: Path | None = None,
                  allow_outside: bool | None = None) -> list[Sample]:
    """Samples of one category folder (its ``conv.jsonl``); see :func:`load_release`.

    ``root``: the data folder image references must stay inside (default: ``folder``
    itself); ``allow_outside``: ``True`` skips that check, ``None`` follows the process
    policy (:func:`heritage_eval.core.paths.outside_allowed`). Only checked with
    ``check_images`` (a ground-truth-only folder reads no image)."""
    return list(iter_category(folder, limit, check_images, warnings, root, allow_outside))


def iter_category(folder: Path, limit: int | None = None, check_images: bool = True,
                  warnings: list[str] | None = None, root: Path | None = None,
                  allow_outside: bool | None = None, notes: bool = True,
                  locate: bool = True) -> Iterator[Sample]:
    """:func:`load_category`'s samples one at a time, the file read line by line (a
    270,000-line file is never held whole). A file that cannot be opened (absent, a
    folder, no permission) gives its one error sample and nothing else; a read error
    further on (an I/O error) ends the category with that error sample after the
    samples already read. A line over the ``max_line_bytes`` cap is read past without
    being held and becomes one error sample naming ``file:line`` (docs/limits.md).
    ``notes=False``: the per-file notes are neither logged nor added to ``warnings``.
    ``locate=False`` (only without ``check_images``, where a missing image is no error):
    the image is not looked for, ``Sample.image`` is its first candidate place
    (``folder/<image>``) whether or not it is there — for a pass that reads no image
    path (``score`` checking the prediction files), two ``stat`` calls a line fewer."""
    if not notes:
        warnings = None
    path = folder / CONV_FILE
    n_out = 0
    seen: set[str] = set()
    try:
        # confined to the release root (a symlink leading out is refused) and a regular
        # file: a FIFO, socket, device or folder is refused without being opened
        joined_inside(root if root is not None else folder, CONV_FILE, allow_outside,
                      base=folder)
        fh = open_regular(path)
    except (OSError, PathOutsideRoot) as exc:
        yield unreadable_part(folder, path, exc, warnings, notes)
        return
    with fh:
        try:
            for lineno, line in iter_lines(fh, str(path)):  # one line held, capped
                if limit is not None and n_out >= limit:
                    break
                if isinstance(line, LongLine):  # read past: one error sample
                    image = image_in_head(line.head)
                    stem = os.path.splitext(image)[0] if image else f"line{lineno}"
                    place = error_image_path(
                        folder, image, root if root is not None else folder,
                        allow_outside, locate or check_images) if image else None
                    sample = Sample(id=f"{folder.name}/{stem}", category=folder.name,
                                    image=place, source=f"{path}:{lineno}",
                                    load_error=line.error,
                                    metadata={"line": lineno, "image_name": image})
                else:
                    raw = line[:-1] if line.endswith(b"\n") else line
                    if not raw.strip():
                        continue
                    sample = _parse_line(raw, lineno, folder, path, check_images,
                                         root if root is not None else folder,
                                         allow_outside, locate or check_images)
                if sample.id in seen:
                    sample.id = f"{sample.id}@{lineno}"
                    _note(f"{path}:{lineno}: duplicate image; sample id {sample.id}",
                          warnings, notes)
                seen.add(sample.id)
                n_out += 1
                yield sample
        except OSError as exc:
            yield unreadable_part(folder, path, exc, warnings, notes)
            return
    if not n_out:
        _note(f"{path} is empty (no sample lines): category {folder.name!r} has no samples",
              warnings, notes)


#: ``"image": "…"`` at the start of a JSON line (bounded: a name of at most 1,024 characters)
_IMAGE_FIELD = re.compile(rb'"image"\s*:\s*("(?:[^"\\\n]|\\.){1,1024}")')


def image_in_head(head: bytes) -> str | None:
    """The ``image`` field of a ground-truth line read only in part (the first bytes of a
    line over the size cap), when it appears there as a usable file name; else ``None``.
    Lets the error row of such a line keep its image's name, so that ``export
    predictions`` still writes that image's (empty) prediction file."""
    match = _IMAGE_FIELD.search(head)
    if match is None:
        return None
    try:
        image = json.loads(match.group(1).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(image, str) or not image.strip() or unusable_file_name(image):
        return None
    return image


def _note(msg: str, warnings: list[str] | None, notes: bool) -> None:
    if notes:
        log.warning(msg)
        if warnings is not None:
            warnings.append(msg)


def unreadable_part(folder: Path, path: Path, exc: OSError | PathOutsideRoot,
                    warnings: list[str] | None = None, notes: bool = True) -> Sample:
    """The one ``error`` sample standing for a category whose ``conv.jsonl`` cannot be
    read (a folder, a FIFO / socket / device, a symlink leading out of the release, no
    permission, an I/O error): id ``<category>/conv.jsonl``, the reason naming the file;
    the other categories load and run. Adds a warning."""
    if isinstance(exc, IsADirectoryError):
        why = "it is a folder, not a file"
    elif isinstance(exc, PathOutsideRoot):
        why = (f"it is a link leading outside the data folder, to {exc.resolved}; pass "
               "--allow-outside-paths to read it")
    else:
        why = getattr(exc, "strerror", None) or str(exc)
    msg = f"{path}: cannot read {CONV_FILE} ({why}): category {folder.name!r} not evaluated"
    _note(msg, warnings, notes)
    return Sample(id=f"{folder.name}/{CONV_FILE}", category=folder.name, source=str(path),
                  metadata={"line": None, "image_name": None}, load_error=msg)


def json_error_text(exc: json.JSONDecodeError) -> str:
    """``"<reason>: column N"`` for a JSON error (``exc.msg`` may end in "at", as in
    "Unterminated string starting at", so the column follows a colon, as Python writes)."""
    return f"{exc.msg}: column {exc.colno}"


@functools.lru_cache(maxsize=256)
def _folders(folder: Path) -> tuple[str, str]:
    """``str(folder)`` and ``str(folder / "images")``, built once per category folder."""
    return str(folder), str(folder / "images")


def _candidates(folder: Path, image: str, check: bool, root: Path,
                allow_outside: bool | None) -> tuple[tuple[str, str], list[bool | None]]:
    """The two places an image may lie, ``folder/<image>`` and ``folder/images/<image>``,
    as ``str(folder / image)`` gives them (:func:`~heritage_eval.core.paths.path_text`:
    no ``Path`` per sample), and whether each is a regular file where the check already
    tells (``None``: ask ``os.path.isfile``;
    :func:`~heritage_eval.core.paths.regular_files_inside`). With ``check``, refused
    (``PathOutsideRoot``) before any file outside the release is even looked at."""
    here, images = _folders(folder)
    kinds: list[bool | None] = [None, None]
    if check:
        kinds = regular_files_inside(root, image, (here, images), allow_outside)
    return (path_text(here, image), path_text(images, image)), kinds


def error_image_path(folder: Path, image: str, root: Path, allow_outside: bool | None,
                     locate: bool = True) -> str:
    """``Sample.image`` of an error sample whose ``image`` name is known (a missing, empty
    or invalid ground truth, a reference outside the release, a line over the size cap):
    the image's place in the release, never a path relative to the working directory.

    ``locate``: the image is looked for as a good sample's is — the two places of
    :func:`_candidates`, confined to ``root`` (``allow_outside`` as there) before any
    file is looked at — and the place where it lies is given, else the first place
    (``folder/<image>``). A reference that leads outside ``root`` (``PathOutsideRoot``),
    or any reference with ``locate=False`` (a pass that reads no image path, or a
    reference already refused), is the first place as text
    (:func:`~heritage_eval.core.paths.path_text` of ``folder`` and ``image``: no file
    looked at, nothing resolved; an absolute ``image`` stays itself). The file itself is
    never opened or read (the record reads no size of an error sample's image:
    ``envelope``)."""
    if not locate:
        return path_text(_folders(folder)[0], image)
    try:
        candidates, kinds = _candidates(folder, image, True, root, allow_outside)
    except PathOutsideRoot:
        return path_text(_folders(folder)[0], image)
    found = next((c for c, kind in zip(candidates, kinds, strict=True)
                  if (os.path.isfile(c) if kind is None else kind)), None)
    return found or candidates[0]


def _parse_line(raw: bytes, lineno: int, folder: Path, path: Path,
                check_images: bool, root: Path, allow_outside: bool | None,
                locate: bool = True) -> Sample:
    category = folder.name
    where = f"{path}:{lineno}"

    def bad(reason: str, image: str | None = None, target: str | None = None,
            outside: bool = False) -> Sample:
        sid = f"{category}/{os.path.splitext(image)[0]}" if image else f"{category}/line{lineno}"
        meta: dict[str, Any] = {"line": lineno, "image_name": image}
        # the image's place in the release (a reference already refused as leading
        # outside it: the text of the join, not looked at again)
        place = None if not image else error_image_path(
            folder, image, root, allow_outside, locate and not outside)
        return Sample(id=sid, category=category, image=place, target=target, source=where,
                      metadata=meta, load_error=f"{where}: {reason}")

    try:
        text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        return bad(f"line is not valid UTF-8 ({exc.reason} at byte {exc.start})")
    try:
        item: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return bad(f"malformed JSON ({json_error_text(exc)})")
    if not isinstance(item, dict):
        return bad(f"expected a JSON object, got {type(item).__name__}")
    image = item.get("image")
    if not isinstance(image, str) or not image.strip():
        return bad("missing or empty 'image' field")
    if (bad_name := unusable_file_name(image)) is not None:
        return bad(f"'image' holds {bad_name}: not a usable file name")
    target = item.get("human_gt")
    if not isinstance(target, str):
        return bad("missing 'human_gt' (ground truth) string", image)
    if not target.strip():
        return bad("empty ground truth ('human_gt')", image, target)
    if (at := lone_surrogate(target)) is not None:
        return bad(f"ground truth ('human_gt') holds a lone surrogate "
                   f"(U+{ord(target[at]):04X}) at character {at}: not valid Unicode text",
                   image)
    metadata: dict[str, Any] = {"line": lineno, "image_name": image}
    metadata.update({k: item[k] for k in METADATA_FIELDS if item.get(k) not in (None, "")})
    try:
        candidates, kinds = _candidates(folder, image, check_images, root, allow_outside)
    except PathOutsideRoot as exc:
        return bad(str(exc), image, target, outside=True)
    found = next((c for c, kind in zip(candidates, kinds, strict=True)
                  if (os.path.isfile(c) if kind is None else kind)), None) if locate else None
    error = None
    if found is None and check_images:
        error = f"{where}: image file not found: {candidates[0]} (nor {candidates[1]})"
        for c in candidates:  # there but not a regular file: say what it is (no open)
            if os.path.exists(c) and (problem := regular_file_problem(c)) is not None:
                error = f"{where}: image {c}: {problem}"
                break
    return Sample(id=f"{category}/{os.path.splitext(image)[0]}", category=category,
                  image=str(found or candidates[0]), target=target, metadata=metadata,
                  source=where, load_error=error)
