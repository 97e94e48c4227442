"""Label Studio import rules kept apart from the importer: which annotation of a task is
used, the check of ``count_<name>`` items against the object boxes, and box geometry.

- Several annotations on one task (Label Studio keeps one per annotator): cancelled ones
  (``was_cancelled``) are ignored; among the rest one marked ``ground_truth`` wins, else
  the latest by ``updated_at`` (then ``created_at``, ISO strings, then position in the
  list). The importer warns, naming the ids and the one used.
- ``count_<name>`` should equal the number of ``object`` boxes labelled ``<name>``
  (case-insensitive), as the MUSE schema asks; a difference is a warning, not an error
  (the count is still used as the answer).
- Duplicates (:func:`unique_tasks`): a task listed twice, by id or by ``data.image``, is
  imported once (the first), with a warning.
- Box geometry (:func:`box_from_percent`): Label Studio stores ``x``, ``y``, ``width``,
  ``height`` in percent (0–100) of the image and ``rotation`` in degrees clockwise about
  the top-left corner ``(x, y)``. In order:

  1. a value over 100 (+ :data:`PCT_TOLERANCE`) is refused as *looking like pixel units*;
  2. a negative ``width`` / ``height`` is normalised (the box extends left / up of
     ``x`` / ``y``), with a note;
  3. a rotated box is rotated in **pixel** space (percent space is not isotropic on a
     non-square image) about its top-left corner, and its axis-aligned bounding box is
     taken; this needs the image size in pixels (the caller passes the item's
     ``original_width`` / ``original_height`` or reads the image file);
  4. an edge beyond the image by at most :data:`PCT_TOLERANCE` percentage points (a
     rounding overshoot such as ``x: -0.0003``, ``width: 100.0005``) is clamped to the
     image with a note; a larger overshoot is refused, except for rotated boxes, whose
     bounding box is clamped to the image (with a note) as long as some of it is inside;
  5. the result is divided by 100 and rounded to 6 decimals (normalized COCO 0–1); a
     width or height that rounds to 0 there is refused (no area);
  6. a box all of whose four values are at most 1 is kept with a note: it may have been
     written in 0–1 fractions instead of percent (100 times too small).

  Refusals raise :class:`BoxGeometryError` with the reason; the importer drops that one
  region, never the whole image.
"""

from __future__ import annotations

import math
import os
from pathlib import Path, PurePosixPath
from typing import Any

#: Overshoot beyond the image edge, in percentage points, clamped as rounding noise
#: (0.1 = the schema's 0.001 normalized tolerance).
PCT_TOLERANCE = 0.1
#: A box whose x, y, width and height are all at most this (percent) may be written in
#: 0–1 fractions: kept, with a note.
FRACTION_LIMIT = 1.0


class BoxGeometryError(ValueError):
    """A Label Studio box that cannot be converted (the message says why)."""


def _fmt(v: float) -> str:
    return f"{v:g}"


def box_from_percent(value: dict[str, Any], size: tuple[int, int] | None = None
                     ) -> tuple[list[float], list[str]]:
    """Normalized COCO ``[x, y, w, h]`` (0–1) of a Label Studio box ``value`` and the
    notes of what was adjusted (module doc, "Box geometry").

    ``size``: the image ``(width, height)`` in pixels, needed only for a rotated box
    (``None`` or a 0 there then raises). Raises :class:`BoxGeometryError`.
    """
    try:
        x, y, w, h = (float(value[k]) for k in ("x", "y", "width", "height"))
        rotation = float(value.get("rotation") or 0.0)
    except (KeyError, TypeError, ValueError) as exc:
        raise BoxGeometryError("box needs numeric x, y, width, height (percent)") from exc
    if not all(math.isfinite(v) for v in (x, y, w, h, rotation)):
        raise BoxGeometryError("box values must be finite numbers")
    big = {k: v for k, v in (("x", x), ("y", y), ("width", abs(w)), ("height", abs(h)))
           if v > 100.0 + PCT_TOLERANCE}
    if big:
        where = f" on a {size[0]} x {size[1]} px image" if size and all(size) else ""
        raise BoxGeometryError(
            ", ".join(f"{k}={_fmt(v)}" for k, v in big.items()) + f"{where} looks like pixel "
            "units: Label Studio box values are percent (0–100) of the image size")
    notes: list[str] = []
    if w < 0 or h < 0:
        notes.append(f"negative {'width' if w < 0 else 'height'} normalised "
                     f"(width={_fmt(w)}, height={_fmt(h)})")
        x, w = (x + w, -w) if w < 0 else (x, w)
        y, h = (y + h, -h) if h < 0 else (y, h)
    rotated = rotation % 360.0 != 0.0
    if rotated:
        if not size or size[0] <= 0 or size[1] <= 0:
            raise BoxGeometryError(f"rotated box (rotation={_fmt(rotation)}) needs the image "
                                   "size in pixels")
        x, y, w, h = _rotated_bounds(x, y, w, h, rotation, size)
        notes.append(f"rotation={_fmt(rotation)}: axis-aligned box of the rotated rectangle")
    x0, y0, x1, y1 = x, y, x + w, y + h
    over = max(-x0, -y0, x1 - 100.0, y1 - 100.0)
    if over > 0:
        if over > PCT_TOLERANCE + 1e-9 and not rotated:
            raise BoxGeometryError(f"box extends {over:.4g} % beyond the image edge "
                                   f"(x={_fmt(x)}, y={_fmt(y)}, width={_fmt(w)}, "
                                   f"height={_fmt(h)}; right/bottom edge must be <= 100)")
        x0, y0, x1, y1 = max(x0, 0.0), max(y0, 0.0), min(x1, 100.0), min(y1, 100.0)
        notes.append(f"clamped to the image (overshoot {over:.4g} %)")
    coords = [round(v / 100.0, 6) for v in (x0, y0, x1 - x0, y1 - y0)]
    if coords[2] <= 0 or coords[3] <= 0:
        raise BoxGeometryError(f"box has no area inside the image (x={_fmt(x)}, "
                               f"y={_fmt(y)}, width={_fmt(w)}, height={_fmt(h)})")
    if max(x, y, w, h) <= FRACTION_LIMIT:
        notes.append(f"every value is at most {_fmt(FRACTION_LIMIT)} (x={_fmt(x)}, "
                     f"y={_fmt(y)}, width={_fmt(w)}, height={_fmt(h)}): if these are 0–1 "
                     "fractions, the box is 100 times too small (Label Studio uses percent)")
    return coords, notes


def _rotated_bounds(x: float, y: float, w: float, h: float, rotation: float,
                    size: tuple[int, int]) -> tuple[float, float, float, float]:
    """Percent bounds of the box rotated ``rotation`` degrees clockwise (screen axes, y
    down) about its top-left corner, computed in pixels."""
    width, height = size
    px, py, pw, ph = x * width / 100, y * height / 100, w * width / 100, h * height / 100
    t = math.radians(rotation)
    cos, sin = math.cos(t), math.sin(t)
    xs = [px + cx * cos - cy * sin for cx, cy in ((0, 0), (pw, 0), (pw, ph), (0, ph))]
    ys = [py + cx * sin + cy * cos for cx, cy in ((0, 0), (pw, 0), (pw, ph), (0, ph))]
    return (min(xs) * 100 / width, min(ys) * 100 / height,
            (max(xs) - min(xs)) * 100 / width, (max(ys) - min(ys)) * 100 / height)


def choose_annotation(annotations: list[Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The annotation to import and, when several were not cancelled, a note
    ``"N annotations (ids); using ID (why, not cancelled)"``; ``(None, None)`` when every
    annotation was cancelled (or none is an object)."""
    live = [(i, a) for i, a in enumerate(annotations)
            if isinstance(a, dict) and not a.get("was_cancelled", False)]
    if not live:
        return None, None
    _, chosen = max(live, key=lambda p: (bool(p[1].get("ground_truth")),
                                         str(p[1].get("updated_at") or ""),
                                         str(p[1].get("created_at") or ""), p[0]))
    if len(live) == 1:
        return chosen, None
    ids = ", ".join(str(a.get("id", f"#{i}")) for i, a in live)
    why = "marked ground_truth" if chosen.get("ground_truth") else "latest"
    return chosen, (f"{len(live)} annotations ({ids}); using {chosen.get('id', '?')} "
                    f"({why}, not cancelled)")


def count_mismatches(counts: dict[str, int], box_labels: list[str]
                     ) -> list[tuple[str, int, int]]:
    """``(name, count, boxes)`` for every count that differs from the number of object
    box labels equal to ``name`` (case-insensitive), sorted by name."""
    folded = [label.casefold() for label in box_labels]
    out = []
    for name, n in sorted(counts.items()):
        k = folded.count(name.casefold())
        if k != n:
            out.append((name, n, k))
    return out


def task_id(task: Any, index: int) -> str:
    if isinstance(task, dict) and task.get("id") is not None:
        return str(task["id"])
    return f"#{index}"


def unique_tasks(file: str, tasks: list[Any], warnings: list[str]
                  ) -> list[tuple[int, Any]]:
    """``(index, task)`` of each task listed once: a later task with the same id, or with
    the same ``data.image`` as an earlier one, is left out with a warning."""
    ids: dict[str, int] = {}
    images: dict[str, str] = {}
    out: list[tuple[int, Any]] = []
    for index, task in enumerate(tasks):
        tid = task_id(task, index)
        data = task.get("data") if isinstance(task, dict) else None
        image = data.get("image") if isinstance(data, dict) else None
        if isinstance(task, dict) and task.get("id") is not None and tid in ids:
            same = "identical" if task == tasks[ids[tid]] else "different content"
            warnings.append(f"{file}: task {tid} is listed twice (entries {ids[tid] + 1} and "
                            f"{index + 1}, {same}); kept the first")
            continue
        if isinstance(image, str) and image and image in images:
            warnings.append(f"{file}: task {tid} annotates the same image {image!r} as task "
                            f"{images[image]}; kept task {images[image]} (the first)")
            continue
        ids.setdefault(tid, index)
        if isinstance(image, str) and image:
            images[image] = tid
        out.append((index, task))
    return out


def stored_size(item: dict[str, Any]) -> tuple[int, int] | None:
    """An item's ``(original_width, original_height)`` when both are positive numbers."""
    w, h = item.get("original_width"), item.get("original_height")
    if isinstance(w, int | float) and isinstance(h, int | float) and not isinstance(
            w, bool) and not isinstance(h, bool) and w > 0 and h > 0:
        return int(w), int(h)
    return None


def image_file_size(root: Path, image: str) -> tuple[int, int] | None:
    """Pixel size of the image an annotation names, as displayed (after its EXIF
    orientation: 5–8 swap width and height), read from the header only
    (:func:`heritage_eval.core.images.header_size`). Looked up as ``root/image``, then
    by file name in ``root`` and ``root/images``; ``None`` when no file is found or it
    is unreadable (a path with ``..`` is never followed)."""
    from heritage_eval.core.images import header_size

    name = image.split("?d=")[-1]
    base = PurePosixPath(name).name
    for cand in (name.lstrip("/"), base, f"images/{base}"):
        path = root / cand
        if not cand or ".." in PurePosixPath(cand).parts or _refusal(root, cand) is not None:
            continue
        return header_size(path)
    return None


def size_disagreement(stored: tuple[int, int], shown: tuple[int, int]) -> str | None:
    """How a stored ``original_width`` x ``original_height`` differs from the image
    file's displayed size, or ``None`` when they are equal (docs/images.md, "Stored
    sizes").

    - ``"transposed"``: width and height swapped (the file carries an EXIF orientation
      the tool that stored the size did not apply, or the reverse), possibly also scaled;
    - ``"scaled"``: the same aspect ratio at another scale (a resized copy). Equal aspect
      means ``|sw * fh - sh * fw| <= (max(fw, sw) + max(fh, sh)) / 2``: each side of a
      resized copy is rounded to a whole pixel, which moves that cross product by at most
      half the other image's width plus height;
    - ``"different aspect"``: anything else.
    """
    if stored == shown:
        return None

    def same_aspect(a: tuple[int, int], b: tuple[int, int]) -> bool:
        slack = (max(a[0], b[0]) + max(a[1], b[1])) / 2
        return abs(a[0] * b[1] - a[1] * b[0]) <= slack

    square = stored[0] == stored[1] or shown[0] == shown[1]
    if not square and same_aspect((stored[1], stored[0]), shown):
        return "transposed"
    if same_aspect(stored, shown):
        return "scaled"
    return "different aspect"


def stored_size_notes(stored: list[tuple[int, int]], shown: tuple[int, int] | None
                      ) -> list[str]:
    """Warnings for a task's stored sizes (docs/images.md, "Stored sizes"): items that
    store different sizes, and each distinct stored size that disagrees with the image
    file's displayed size ``shown`` (``None``: file not found, nothing compared). The
    stored size still wins (it is the frame the annotator drew in); percent boxes need no
    rescaling for a scaled copy."""
    distinct = list(dict.fromkeys(stored))
    notes = []
    if len(distinct) > 1:
        notes.append("items store different sizes (" + ", ".join(
            f"{w} x {h}" for w, h in distinct) + "); each box uses its own item's size")
    if shown is None:
        return notes
    for size in distinct:
        kind = size_disagreement(size, shown)
        if kind is not None:
            notes.append(f"stored size {size[0]} x {size[1]} differs from the image file "
                         f"({shown[0]} x {shown[1]} as displayed): {kind}; the stored size "
                         "is kept for box geometry and the record")
    return notes


def parse_relation(text: str, keys: tuple[str, ...]
                   ) -> tuple[dict[str, str] | None, str | None, str | None]:
    """Parse a relation ``K=V;K=V…`` (``evidence`` takes the rest of the text: it may
    contain ``=``). Returns ``(relation, None, None)`` with ``a``/``b`` lower-cased keys,
    or ``(None, field suffix, message)`` naming the problem."""
    parts: dict[str, str] = {}
    rest = text
    while rest:
        key, sep, tail = rest.partition("=")
        key = key.strip()
        if not sep:
            return None, "", f"cannot parse {text!r}: expected KEY=VALUE pairs"
        if key == "evidence":
            parts[key], rest = tail.strip(), ""
        else:
            value, _, rest = tail.partition(";")
            parts[key] = value.strip()
    missing = [k for k in keys if not parts.get(k)]
    extra = [k for k in parts if k not in keys]
    if missing or extra:
        return None, "", f"in {text!r}: missing {missing} / unexpected {extra}"
    rel = {k.lower() if k in ("A", "B") else k: v for k, v in parts.items()}
    allowed = {"lateral": ("left", "none", "right"), "depth": ("front", "none", "back"),
               "vertical": ("above", "none", "under")}
    for k, ok in allowed.items():
        if k in rel and rel[k] not in ok:
            return None, f".{k}", f"{rel[k]!r} not in {ok}"
    return rel, None, None


def resolve_image(images_dir: Path, image: str) -> Path | None:
    """The image file for an annotation's ``image`` path: ``images_dir/image`` if it
    exists, else ``images_dir/<file name>`` (Label Studio prefixes such as
    ``/data/upload/3/`` or ``images/`` are dropped); ``None`` if neither exists or the
    path leaves the folder (``..``), or the first that exists is refused
    (:func:`image_refusal` says why)."""
    for cand in _image_candidates(images_dir, image):
        return None if _refusal(images_dir, cand) else images_dir / cand
    return None


def image_refusal(images_dir: Path, image: str) -> str | None:
    """Why the file :func:`resolve_image` would take for ``image`` was refused — a
    symbolic link leading out of ``images_dir`` (unless ``--allow-outside-paths``), a
    FIFO, socket, device or folder (the message names the path and what it is; nothing
    is opened, ``docs/paths.md``) — else ``None`` (also when there is no file at all)."""
    for cand in _image_candidates(images_dir, image):
        return _refusal(images_dir, cand)
    return None


def _image_candidates(images_dir: Path, image: str) -> list[str]:
    """The candidates of :func:`resolve_image` that exist (as directory entries)."""
    name = image.split("?d=")[-1]
    return [cand for cand in (name.lstrip("/"), PurePosixPath(name).name)
            if cand and ".." not in PurePosixPath(cand).parts
            and os.path.lexists(images_dir / cand)]


def _refusal(root: Path, cand: str) -> str | None:
    """``None`` when ``root/cand`` is a regular file inside ``root``, else why not."""
    from heritage_eval.core.datapath import resolve_data_path
    from heritage_eval.core.paths import PathOutsideRoot

    try:
        resolve_data_path(root, cand)
    except (OSError, PathOutsideRoot) as exc:
        return str(exc)
    return None
