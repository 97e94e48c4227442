"""Image checks shared by the validators: does the file decode, and which images are
near-duplicates (perceptual hash).

:func:`inspect_image` follows the project's bounded loading
(:mod:`heritage_eval.core.images`): the size is read from the header and an image over
:data:`~heritage_eval.core.images.MAX_PIXELS` is refused before any pixel is decoded;
under the cap the file is checked with Pillow's ``verify()`` (chunk checksums, no pixel
decoded) where Pillow's own decompression-bomb guard allows opening it, then decoded at
a reduced size (:data:`THUMB_SIDE`; a JPEG is decoded at 1/2 … 1/8 scale), which catches
truncated and corrupt pixel data. The thumbnail gives the perceptual hash (DCT hash,
``imagehash.phash``, 64 bits; Zauner 2010, "Implementation and Benchmarking of
Perceptual Image Hash Functions").
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from heritage_eval.core.datapath import open_regular, regular_file_problem
from heritage_eval.core.images import ImageLoadError, check_pixels, header_size, load_image
from heritage_eval.core.sizecap import SizeCap

#: Longest side (pixels) of the reduced decode used for the check and the hash.
THUMB_SIDE = 256
#: Default largest Hamming distance (bits of 64) between two perceptual hashes counted
#: as a duplicate. 0 finds only copies that hash alike (rescaled, re-encoded); 4 also
#: catches recompression and slight tone changes. Measured on the shared real samples and
#: the bundled demo sets (34 + 27 Ancient-Bench pages, 109 + 140 HCSU glyphs, 7 MUSE
#: artworks): no pair within 4 bits; the closest distinct demo glyphs are 8 bits apart.
DEFAULT_PHASH_DISTANCE = 4


@dataclass(frozen=True)
class ImageCheck:
    """Outcome of :func:`inspect_image`: ``code`` / ``message`` of the problem (both
    ``None`` when the image is fine), ``size`` ``(width, height)`` in pixels from the
    header, ``phash`` the 64-bit perceptual hash as an int (``None`` when not
    decodable)."""

    code: str | None
    message: str | None
    size: tuple[int, int] | None = None
    phash: int | None = None


def inspect_image(path: Path) -> ImageCheck:
    """Check that ``path`` is an image that decodes (module doc). Codes:
    ``image-missing`` (no such file), ``image-not-file`` (a FIFO, socket, device or
    folder: refused without being opened), ``image-unreadable`` (not an image Pillow can
    identify), ``image-too-large`` (over the decode limit, or a size cap such as
    ``max_png_text`` met while reading the header), ``image-corrupt`` (checksum
    or pixel data broken, truncated)."""
    import imagehash

    if (problem := regular_file_problem(path)) is not None:  # never opens a FIFO
        if problem == "file not found":
            return ImageCheck("image-missing", f"image file not found: {path}")
        return ImageCheck("image-not-file", f"image {path}: {problem}")
    size = header_size(path)
    if size is None:  # the bounded loader names a cap met while reading the header
        try:  # (a PNG text chunk over max_png_text …) where it has one
            load_image(path, cap=SizeCap(max_side=THUMB_SIDE))
        except ImageLoadError as exc:
            if "over the max_" in str(exc):
                return ImageCheck("image-too-large", str(exc))
        return ImageCheck("image-unreadable", f"not an image file Pillow can identify: "
                                              f"{path}")
    try:
        check_pixels(path, *size)
    except ImageLoadError as exc:
        return ImageCheck("image-too-large", str(exc), size)
    if size[0] * size[1] <= (Image.MAX_IMAGE_PIXELS or size[0] * size[1]):
        try:
            with open_regular(path) as fh, Image.open(fh) as im:
                im.verify()
        except Exception as exc:  # Pillow raises many types for broken files
            return ImageCheck("image-corrupt", f"image {path} fails Pillow's verify "
                                               f"({type(exc).__name__}: {exc})", size)
    try:
        thumb = load_image(path, cap=SizeCap(max_side=THUMB_SIDE))
    except ImageLoadError as exc:
        code = "image-too-large" if "over the max_" in str(exc) else "image-corrupt"
        return ImageCheck(code, str(exc), size)
    return ImageCheck(None, None, size, int(str(imagehash.phash(thumb)), 16))


def inspect_all(paths: Sequence[Path], progress: bool = True) -> list[ImageCheck]:
    """:func:`inspect_image` of every path, in order, on up to 8 threads (Pillow decodes
    without holding the GIL), with a tqdm bar on stderr unless ``progress`` is off."""
    from tqdm import tqdm

    workers = max(1, min(8, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(tqdm(pool.map(inspect_image, paths), total=len(paths),
                         desc="validate images", unit="img", file=sys.stderr,
                         disable=not progress))


@dataclass(frozen=True)
class Duplicate:
    """Two images whose perceptual hashes differ by ``distance`` bits (0–64);
    ``first`` / ``second`` are indexes into the list given to :func:`find_duplicates`."""

    first: int
    second: int
    distance: int


def find_duplicates(hashes: Sequence[int | None],
                    max_distance: int = DEFAULT_PHASH_DISTANCE) -> list[Duplicate]:
    """Every pair ``i < j`` of 64-bit hashes (``None`` entries are skipped) whose Hamming
    distance is ``<= max_distance``, sorted by ``(i, j)``. All pairs are compared
    (integer XOR + popcount: about 0.5 s for the 2,700 images of a full release)."""
    present = [(i, h) for i, h in enumerate(hashes) if h is not None]
    found: list[Duplicate] = []
    for (i, a), (j, b) in itertools.combinations(present, 2):
        distance = (a ^ b).bit_count()
        if distance <= max_distance:
            found.append(Duplicate(i, j, distance))
    return found
