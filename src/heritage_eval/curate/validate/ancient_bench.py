"""``validate ancient-bench``: every line of every ``<category>/conv.jsonl`` of a release.

Layout discovery is the loader's (:func:`~heritage_eval.benchmarks.ancient_bench.loader.
find_categories`; images beside ``conv.jsonl`` or in its ``images/``; references that
leave the release are refused unless outside paths are allowed). Per line: UTF-8, JSON
object, ``image`` and ``human_gt`` strings, the image exists and decodes
(:func:`~.imagecheck.inspect_image`), the transcription follows the annotation standard
(:func:`~.transcription.check_transcription`). Across the release: the same image named
twice in a file, near-duplicate images (perceptual hash, both files named), image files
no line names, unknown category folders, empty files. A malformed line is an error with
its line number; the other lines are still checked.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.loader import (
    CONV_FILE,
    find_categories,
    json_error_text,
)
from heritage_eval.core.datapath import (
    confined,
    open_regular,
    regular_file_problem,
)
from heritage_eval.core.paths import PathOutsideRoot, resolve_inside
from heritage_eval.core.sizecap import LongLine, iter_lines
from heritage_eval.core.unicode_text import unusable_file_name
from heritage_eval.curate.validate.imagecheck import (
    DEFAULT_PHASH_DISTANCE,
    find_duplicates,
    inspect_all,
)
from heritage_eval.curate.validate.report import Report
from heritage_eval.curate.validate.transcription import check_transcription

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp",
                            ".pdf"})


class ReleaseLayoutError(Exception):
    """The folder is not an Ancient-Bench release (usage error, exit status 2)."""


@dataclass(frozen=True)
class _Entry:
    """A line that names an image file found on disk."""

    conv: Path
    line: int
    image: Path


def validate_release(root: Path, phash_distance: int = DEFAULT_PHASH_DISTANCE,
                     progress: bool = True) -> Report:
    """Check the release at ``root`` (module doc); returns the :class:`~.report.Report`.
    Raises :class:`ReleaseLayoutError` when ``root`` is not a folder or holds no
    ``<category>/conv.jsonl``."""
    if not root.is_dir():
        raise ReleaseLayoutError(f"Ancient-Bench data folder not found: {root}")
    categories = find_categories(root)
    if not categories:
        hint = (f"; {root} holds {CONV_FILE} itself: pass its parent (the release root)"
                if (root / CONV_FILE).is_file() else "")
        raise ReleaseLayoutError(f"no '<category>/{CONV_FILE}' under {root}{hint}")
    report = Report(f"ancient-bench {root}")
    entries: list[_Entry] = []
    for cat in categories:
        conv = root / cat / CONV_FILE
        if cat not in MEDIA:
            report.warning(conv, None, "unknown-category",
                           f"category folder {cat!r} is not one of the paper's 9 media "
                           f"({', '.join(MEDIA)}): it is loaded and scored like the others")
        entries += _check_file(report, root, conv)
    _check_images(report, entries, phash_distance, progress)
    return report


def _check_file(report: Report, root: Path, conv: Path) -> list[_Entry]:
    report.count("files")
    try:  # inside the release and a regular file: a FIFO is refused, never opened
        fh = open_regular(confined(root, conv))
    except PathOutsideRoot as exc:
        report.error(conv, None, "path-outside", f"cannot read {CONV_FILE}: {exc}")
        return []
    except OSError as exc:
        report.error(conv, None, "file-unreadable", f"cannot read {CONV_FILE}: "
                                                    f"{exc.strerror or exc}")
        return []
    entries: list[_Entry] = []
    seen: dict[str, int] = {}
    n_lines = 0
    try:
        with fh:
            for lineno, line in iter_lines(fh, str(conv)):  # one line held, capped
                if isinstance(line, LongLine):  # read past (docs/limits.md)
                    n_lines += 1
                    report.count("lines")
                    report.error(conv, lineno, "line-too-long", line.reason)
                    continue
                raw = line[:-1] if line.endswith(b"\n") else line
                if not raw.strip():
                    continue
                n_lines += 1
                report.count("lines")
                entry = _check_line(report, root, conv, lineno, raw, seen)
                if entry is not None:
                    entries.append(entry)
    except OSError as exc:  # an I/O error part-way: what was read stays checked
        report.error(conv, None, "file-unreadable", f"cannot read {CONV_FILE}: "
                                                    f"{exc.strerror or exc}")
    if not n_lines:
        report.warning(conv, None, "empty-file", "no sample lines: the category has no "
                                                 "samples")
    _unlisted(report, conv, {e.image.resolve() for e in entries})
    return entries


def _check_line(report: Report, root: Path, conv: Path, lineno: int, raw: bytes,
                seen: dict[str, int]) -> _Entry | None:
    def error(code: str, message: str) -> None:
        report.error(conv, lineno, code, message)

    try:
        text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        error("not-utf8", f"line is not valid UTF-8 ({exc.reason} at byte {exc.start})")
        return None
    try:
        item = json.loads(text)
    except json.JSONDecodeError as exc:
        error("json-malformed", f"malformed JSON ({json_error_text(exc)})")
        return None
    if not isinstance(item, dict):
        error("not-object", f"expected a JSON object, got {type(item).__name__}")
        return None
    gt = item.get("human_gt")
    if not isinstance(gt, str):
        error("gt-missing", "missing 'human_gt' (ground truth) string")
    elif not gt.strip():
        error("gt-empty", "empty ground truth ('human_gt')")
    else:
        for level, code, message in check_transcription(gt):
            (report.error if level == "error" else report.warning)(conv, lineno, code,
                                                                   message)
    image = item.get("image")
    if not isinstance(image, str) or not image.strip():
        error("image-field", "missing or empty 'image' field")
        return None
    if (unusable := unusable_file_name(image)) is not None:  # as run words it
        error("image-field", f"'image' holds {unusable}: not a usable file name")
        return None
    if image in seen:
        report.warning(conv, lineno, "duplicate-entry", f"image {image!r} is already named "
                                                        f"on line {seen[image]}")
        return None
    seen[image] = lineno
    stem = "stem:" + os.path.splitext(image)[0]  # the sample id and the predictions file name
    if stem in seen:
        report.warning(conv, lineno, "duplicate-stem",
                       f"image {image!r} has the same name without extension as the image "
                       f"on line {seen[stem]}: both get the sample id and the predictions "
                       "file <stem>.json of one sample (run names the second '@2')")
    else:
        seen[stem] = lineno
    folder = conv.parent
    try:
        candidates = [resolve_inside(root, image, base=folder),
                      resolve_inside(root, image, base=folder / "images")]
    except PathOutsideRoot as exc:
        error("path-outside", str(exc))
        return None
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        odd = next((c for c in candidates if c.exists()), None)  # a FIFO, folder …
        if odd is not None:
            error("image-not-file", f"image {odd}: {regular_file_problem(odd)}")
            return None
        error("image-missing", f"image file not found: {candidates[0]} (nor "
                               f"{candidates[1]})")
        return None
    return _Entry(conv, lineno, found)


def _unlisted(report: Report, conv: Path, listed: set[Path]) -> None:
    for folder in (conv.parent, conv.parent / "images"):
        if not folder.is_dir():
            continue
        for name in sorted(os.listdir(folder)):
            p = folder / name
            if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file() \
                    and p.resolve() not in listed:
                report.warning(p, None, "image-unlisted", f"no line of {conv} names this "
                                                          "image: it is never evaluated")


def _check_images(report: Report, entries: list[_Entry], phash_distance: int,
                  progress: bool) -> None:
    hashes: list[int | None] = []
    for e, check in zip(entries, inspect_all([e.image for e in entries], progress),
                        strict=True):
        report.count("images")
        if check.code:
            report.error(e.conv, e.line, check.code, check.message or "")
        hashes.append(check.phash)
    for dup in find_duplicates(hashes, phash_distance):
        a, b = entries[dup.first], entries[dup.second]
        report.warning(b.conv, b.line, "duplicate-image",
                       f"{b.image} looks like {a.image} ({a.conv}:{a.line}; perceptual "
                       f"hashes {dup.distance} bit(s) apart, at most {phash_distance} "
                       "counted as a duplicate)")
