"""Image loading with bounded memory: raster images, PDF pages, size caps, data URLs.

The Ancient-Bench release holds images up to 5,795 x 16,745 px (97 Mpx), beyond Pillow's
default decompression-bomb limit (89.5 Mpx). Instead of changing Pillow's process-wide
``Image.MAX_IMAGE_PIXELS`` (other code keeps Pillow's own guard), :func:`load_image` reads
the size from the file header first (Pillow identifies the format and parses the header
without decoding pixels) and refuses anything over :data:`MAX_PIXELS` (400 Mpx, 4x the
release's largest image) with an :class:`ImageLoadError` naming the file and its size,
before a single pixel is decoded: a 21,000 x 21,000 PNG of a few dozen KB is refused in
milliseconds. Under the cap, a JPEG is decoded at a reduced scale when the size cap allows
(``Image.draft``: 1/2, 1/4, 1/8), and other formats are reduced in their own mode (8-bit
greyscale stays 1 byte per pixel) before the RGB conversion, so a 97 Mpx greyscale page
needs about its own size in memory once, never 3-4 times. :func:`header_size` gives the
size for records, *as displayed* (after the EXIF orientation, so it agrees with the
image :func:`load_image` returns); the size sent is what :func:`load_image` returns, exactly
``cap.target_size(*header_size(path))`` for a raster file. The rules (orientation, modes,
errors) are written down in ``docs/images.md``.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import re
import struct
from pathlib import Path
from typing import IO

from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

from heritage_eval.core.datapath import open_regular, regular_file_problem
from heritage_eval.core.sizecap import (
    MAX_PNG_TEXT,
    MAX_PNG_TEXT_TOTAL,
    SizeCap,
    png_text_problem,
)

#: Largest image we agree to decode, in pixels (width x height). 4x the release's largest.
#: Checked on the header before decoding (:func:`check_pixels`); Pillow's own
#: ``Image.MAX_IMAGE_PIXELS`` is left at its default for other code.
MAX_PIXELS = 400_000_000

PDF_SUFFIXES = {".pdf"}
#: Modes reduced to the size cap before the RGB conversion (1 byte per channel, no
#: palette or alpha to composite first).
_EARLY_RESIZE_MODES = ("L", "RGB")
#: EXIF orientations (tag 0x0112) that turn the image a quarter turn: width and height swap.
SWAPPING_ORIENTATIONS = (5, 6, 7, 8)
_ORIENTATION_TAG = 0x0112
_TIFF_WIDTH_TAG, _TIFF_LENGTH_TAG = 256, 257
__all__ = ["MAX_PIXELS", "SWAPPING_ORIENTATIONS", "ImageLoadError", "SizeCap", "check_pixels",
           "data_url", "decode_problem", "encode_image", "file_digest", "header_size", "load_image"]


class ImageLoadError(Exception):
    """An image file is missing, unreadable, truncated or too large; message names it."""


def load_image(path: str | Path, page: int = 0, cap: SizeCap | None = None) -> Image.Image:
    """Open an image or a PDF page as an RGB :class:`PIL.Image.Image`, capped to ``cap``.

    PDF pages are rendered with pypdfium2 at 200 dpi (then capped). EXIF orientation is
    applied, so a raster image's size is :func:`header_size` (the displayed size) and the
    size returned is exactly ``cap.target_size(*header_size(path))``. Every mode is
    converted to RGB by the rules of :func:`_to_rgb` / :func:`_to_8bit`. Raises
    :class:`ImageLoadError` naming the file on any failure (whatever Pillow, pypdfium2 or
    numpy raises, not only ``OSError``), and, before decoding, for an image whose header
    declares more than :data:`MAX_PIXELS` pixels (the message gives width x height and
    the pixel count).
    """
    p = Path(path)
    if (problem := regular_file_problem(p)) is not None:  # a FIFO is never opened
        raise ImageLoadError(f"image {p}: {problem}" if problem != "file not found"
                             else f"image file not found: {p}")
    try:
        if p.suffix.lower() in PDF_SUFFIXES:
            img, want = _render_pdf_page(p, page, cap)
        else:
            img, want = _open_raster(p, cap)
        if want != img.size:
            img = img.resize(want, Image.Resampling.LANCZOS)
    except ImageLoadError:
        raise
    except Exception as exc:  # Pillow raises many types for corrupt files
        raise ImageLoadError(f"cannot read image {p}: {decode_problem(p, exc)}") from exc
    return img


#: The repr of an open file object in Pillow's messages (``<_io.BufferedReader name=24>``).
_FILE_HANDLE = re.compile(r"<_io\.\w+ name=[^>]*>")


def decode_problem(p: Path | str, exc: BaseException) -> str:
    """Why ``p`` could not be decoded (``exc``: what the decoder raised), for a message
    that names ``p`` already:
    ``"empty file (0 bytes)"``, ``"not an image, or a format that cannot be read
    (UnidentifiedImageError)"`` when no decoder recognises it, else ``"<type>: <message>"``
    with any file-handle repr (``<_io.BufferedReader name=24>``) replaced by the path."""
    if isinstance(exc, UnidentifiedImageError):
        with contextlib.suppress(OSError):
            if os.stat(p).st_size == 0:
                return "empty file (0 bytes)"
        return "not an image, or a format that cannot be read (UnidentifiedImageError)"
    return f"{type(exc).__name__}: {_FILE_HANDLE.sub(os.fspath(p), str(exc))}"


def check_pixels(p: Path | str, width: int, height: int,
                 max_pixels: int = MAX_PIXELS) -> None:
    """Raise :class:`ImageLoadError` when ``width`` x ``height`` exceeds ``max_pixels``
    (message: file, ``W x H``, pixel count, the cap)."""
    if width * height > max_pixels:
        raise ImageLoadError(
            f"image {p} is {width:,} x {height:,} = {width * height:,} pixels, over the "
            f"{max_pixels:,}-pixel decode limit (a decompression bomb or a scan far larger "
            "than any release image): refused without decoding")


def _identify(fp: IO[bytes], filename: str) -> ImageFile.ImageFile | None:
    """The image of ``fp`` with only its header parsed, found the way ``Image.open``
    does (registered format plug-ins, by their ``accept`` test), but without Pillow's
    process-wide decompression-bomb check (:func:`check_pixels` does ours). ``None``
    when no plug-in accepts the file (the caller falls back to ``Image.open``). Plug-ins
    that check frames or tiles themselves (GIF, TIFF) still apply Pillow's guard there."""
    prefix = fp.read(16)
    for loader in (Image.preinit, Image.init):
        loader()
        for fmt in list(Image.ID):
            factory, accept = Image.OPEN[fmt]
            try:
                if accept is not None and accept(prefix) is not True:
                    continue
                fp.seek(0)
                return factory(fp, filename)
            except (SyntaxError, IndexError, TypeError, struct.error):
                fp.seek(0)  # not this format (as in Image.open); others propagate
                continue
    return None


def header_size(path: str | Path) -> tuple[int, int] | None:
    """``(width, height)`` in pixels *as displayed*: the header's size with width and
    height swapped for EXIF orientations 5–8 (:data:`SWAPPING_ORIENTATIONS`), the way
    :func:`load_image` (``PIL.ImageOps.exif_transpose``) shows the image. No pixel is
    decoded and Pillow's decompression-bomb warning is not raised. ``None`` for a
    missing, unreadable (whatever the exception) or PDF file."""
    name = os.fspath(path)  # no Path: on Python 3.11 each one interns its file name
    if os.path.splitext(name)[1].lower() in PDF_SUFFIXES:
        return None
    try:
        with open_regular(name) as fp:  # a FIFO or device is refused, never waited on
            im = _identify(fp, name)
            if im is None:
                return None
            with im:
                return _displayed_size(im, fp)
    except Exception:  # Pillow raises many types for corrupt headers
        return None


def _displayed_size(im: ImageFile.ImageFile, fp: IO[bytes]) -> tuple[int, int]:
    """The size of ``im`` (header parsed, no pixel decoded) after its EXIF orientation.

    The stored size comes from the TIFF tags for a TIFF (Pillow 13 already reports a
    TIFF's size turned by its orientation tag, older versions do not; the tags are the
    stored size in every version), else from ``im.size``."""
    width, height = int(im.size[0]), int(im.size[1])
    if im.format == "TIFF":
        tags = getattr(im, "tag_v2", {})
        tw, th = tags.get(_TIFF_WIDTH_TAG), tags.get(_TIFF_LENGTH_TAG)
        if isinstance(tw, int) and isinstance(th, int):
            width, height = tw, th
    if _orientation(im, fp) in SWAPPING_ORIENTATIONS:
        return height, width
    return width, height


def _orientation(im: ImageFile.ImageFile, fp: IO[bytes]) -> object:
    """The EXIF orientation of ``im`` as ``PIL.ImageOps.exif_transpose`` reads it
    (``getexif()``: the EXIF block, else an XMP ``tiff:Orientation``), without decoding
    pixels. Pillow's PNG ``getexif`` decodes the whole image to reach an ``eXIf`` chunk
    written after the image data; here such a chunk is found by walking the chunk
    headers instead."""
    if im.format == "PNG" and "exif" not in im.info:
        trailing = _png_trailing_exif(fp)
        if trailing is not None:
            im.info["exif"] = trailing
        exif = Image.Image.getexif(im)  # the base method: reads ``info`` only
    else:
        exif = im.getexif()
    return exif.get(_ORIENTATION_TAG, 1)


def _png_trailing_exif(fp: IO[bytes]) -> bytes | None:
    """The ``eXIf`` chunk of the PNG file ``fp`` (as Pillow stores it in ``info``, with
    the ``Exif\\0\\0`` prefix), found by reading chunk headers only; ``None`` when
    there is none before ``IEND`` or the file ends early."""
    fp.seek(8)
    while True:
        head = fp.read(8)
        if len(head) < 8:
            return None
        length, kind = struct.unpack(">I4s", head)
        if kind == b"eXIf":
            data = fp.read(length)
            return b"Exif\x00\x00" + data if len(data) == length else None
        if kind == b"IEND":
            return None
        fp.seek(length + 4, os.SEEK_CUR)


def _sync_png_text_caps() -> None:
    """Pillow's own PNG text limits set to ours (``docs/limits.md``), so that raising a
    cap with its environment variable is enough for Pillow too."""
    from PIL import PngImagePlugin

    PngImagePlugin.MAX_TEXT_CHUNK = MAX_PNG_TEXT.value()
    PngImagePlugin.MAX_TEXT_MEMORY = MAX_PNG_TEXT_TOTAL.value()


def _open_raster(p: Path, cap: SizeCap | None) -> tuple[Image.Image, tuple[int, int]]:
    """The decoded RGB image of the raster file ``p`` and the size it must be sent at:
    ``cap.target_size`` of the displayed size (:func:`_displayed_size`), or the decoded
    size without a cap.

    The file name is not given to Pillow's plug-in: with a name Pillow memory-maps
    uncompressed files, and Pillow 13 maps an uncompressed TIFF with orientation 5–8 at
    its turned size, giving scrambled pixels (found by ``tests/core/test_image_kinds.py``).
    """
    with open_regular(p) as fp:
        if (why := png_text_problem(fp, f"image {p}")) is not None:  # before Pillow reads
            raise ImageLoadError(why)
        _sync_png_text_caps()
        src = _identify(fp, "")
        if src is None:  # no plug-in took it: Pillow's own open and guard decide
            fp.seek(0)
            src = Image.open(fp)
        with src:
            check_pixels(p, *src.size)  # before any pixel is decoded
            want: tuple[int, int] | None = None
            if cap is not None:
                here = fp.tell()
                want = cap.target_size(*_displayed_size(src, fp))
                fp.seek(here)  # the plug-in reads on from where its header ended
            img = _decode(src, want)
    if want is None:
        return img, img.size
    if not _same_turn(img.size, want):  # header and pixels disagree: trust the pixels
        want = cap.target_size(*img.size) if cap else img.size
    return img, want


def _same_turn(size: tuple[int, int], other: tuple[int, int]) -> bool:
    """Whether two sizes have the same orientation (landscape / portrait), or ``size``
    is square."""
    return (size[0] > size[1]) == (other[0] > other[1]) or size[0] == size[1]


def _decode(src: ImageFile.ImageFile, want: tuple[int, int] | None) -> Image.Image:
    """Decode ``src``, apply its EXIF orientation, reduce it towards ``want`` (the
    displayed size under the cap) in its own mode where that is cheap, convert to RGB."""
    if want is not None and src.format == "JPEG":
        # Decode at 1/2, 1/4 or 1/8 scale when the cap allows it: bounded memory. The
        # draft is asked for the stored (not yet turned) orientation of ``want``.
        src.draft("RGB", want if _same_turn(src.size, want) else (want[1], want[0]))
    src.load()
    im: Image.Image = src
    ImageOps.exif_transpose(im, in_place=True)
    if im.mode in ("I;16", "I;16L", "I;16B", "I;16N", "I", "F"):
        im = _to_8bit(im)
    if (want is not None and im.mode in _EARLY_RESIZE_MODES and im.size != want
            and _same_turn(im.size, want)):
        # reduce in the image's own mode before the RGB conversion: a 97 Mpx greyscale
        # page is never held as 3 bytes per pixel
        im = im.resize(want, Image.Resampling.LANCZOS)
    return _to_rgb(im)


def _to_rgb(im: Image.Image) -> Image.Image:
    """RGB; transparency composited on white.

    Modes with an alpha channel or a palette (``RGBA``, ``LA``, ``La``, ``RGBa``, ``P``,
    ``PA``) go through RGBA (a palette's transparent index or per-index alpha included)
    and are composited on opaque white; every other mode uses Pillow's ``convert("RGB")``
    (``1``: 0 -> black, 1 -> white; ``L``: grey replicated; ``CMYK``: ``(255 - C)(255 - K)
    / 255`` per channel; ``YCbCr``: the JPEG (BT.601 full-range) matrix)."""
    if im.mode in ("RGBA", "LA", "La", "RGBa", "P", "PA"):
        im = im.convert("RGBA")
        background = Image.new("RGBA", im.size, (255, 255, 255, 255))
        im = Image.alpha_composite(background, im)
    return im.convert("RGB")


def _to_8bit(im: Image.Image) -> Image.Image:
    """High-bit-depth greyscale (16-bit PNG/TIFF, 32-bit int or float) to 8-bit ``L``.

    Pillow's own conversion clips such values at 255 (a 16-bit scan turns white). 16-bit
    modes (``I;16*``) are always scaled by 255/65535; 32-bit integer (``I``) data whose
    maximum exceeds 255 too (else it is taken as 8-bit data stored wide); float (``F``)
    data whose finite maximum is at most 1 by 255; then values are rounded and clipped to
    [0, 255]. NaN becomes 0, +inf 255, -inf 0.
    """
    import numpy as np

    arr = np.asarray(im).astype(np.float64)
    finite = arr[np.isfinite(arr)]
    peak = float(finite.max()) if finite.size else 0.0
    arr = np.nan_to_num(arr, nan=0.0, posinf=np.inf, neginf=0.0)
    if im.mode.startswith("I;16") or (im.mode == "I" and peak > 255):
        arr = arr * (255.0 / 65535.0)
    elif im.mode == "F" and peak <= 1.0:
        arr = arr * 255.0
    return Image.fromarray(np.clip(np.rint(arr), 0, 255).astype(np.uint8), mode="L")


def _render_pdf_page(p: Path, page: int, cap: SizeCap | None = None
                     ) -> tuple[Image.Image, tuple[int, int]]:
    """Render one page at 200 dpi, or smaller when ``cap`` allows: bounded memory.
    Returns the RGB rendering and the size to send: ``cap.target_size`` of the 200-dpi
    size in whole pixels, or the rendered size without a cap."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(p))
    except Exception as exc:
        raise ImageLoadError(f"cannot open PDF {p}: {exc}") from exc
    try:
        if not 0 <= page < len(pdf):
            raise ImageLoadError(f"PDF {p} has {len(pdf)} page(s); page {page} requested")
        pdf_page = pdf[page]
        width_pt, height_pt = pdf_page.get_size()
        scale = 200 / 72
        want: tuple[int, int] | None = None
        if cap is not None:
            w, h = max(1, int(width_pt * scale)), max(1, int(height_pt * scale))
            want = cap.target_size(w, h)
            scale *= min(1.0, (want[0] + 1) / w, (want[1] + 1) / h)
        bitmap = pdf_page.render(scale=scale)
        img = bitmap.to_pil().convert("RGB")
        return img, want or img.size
    finally:
        pdf.close()


def encode_image(img: Image.Image, fmt: str = "PNG") -> bytes:
    """Encode ``img`` as PNG (lossless, default) or JPEG (quality 95) bytes."""
    buf = io.BytesIO()
    if fmt.upper() == "JPEG":
        img.save(buf, format="JPEG", quality=95)
    else:
        img.save(buf, format="PNG")
    return buf.getvalue()


def data_url(data: bytes, fmt: str = "PNG") -> str:
    """``data:image/...;base64,...`` URL for encoded image bytes."""
    mime = "image/jpeg" if fmt.upper() == "JPEG" else "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def file_digest(path: str | Path, page: int = 0) -> str:
    """SHA-256 hex of a file's bytes (plus the page for PDFs): the image part of a cache key.

    Raises :class:`ImageLoadError` when the file cannot be read.
    """
    import hashlib

    # a plain string, not a Path: Python 3.11 interns every Path's parts for good (one
    # more name held per image of a 100,000-image run)
    p = os.fspath(path)
    if (problem := regular_file_problem(p)) is not None:
        shown = Path(p)
        raise ImageLoadError(f"image {shown}: {problem}" if problem != "file not found"
                             else f"image file not found: {shown}")
    h = hashlib.sha256()
    try:
        with open_regular(p) as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        raise ImageLoadError(f"cannot read image {Path(p)}: {exc}") from exc
    if os.path.splitext(p)[1].lower() in PDF_SUFFIXES:
        h.update(f"#page={page}".encode())
    return h.hexdigest()
