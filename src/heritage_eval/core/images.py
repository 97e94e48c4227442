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
original size for records; the size sent is what :func:`load_image` returns.
"""

from __future__ import annotations

import base64
import io
import os
import struct
from pathlib import Path
from typing import IO

from PIL import Image, ImageFile, ImageOps

from heritage_eval.core.sizecap import SizeCap

#: Largest image we agree to decode, in pixels (width x height). 4x the release's largest.
#: Checked on the header before decoding (:func:`check_pixels`); Pillow's own
#: ``Image.MAX_IMAGE_PIXELS`` is left at its default for other code.
MAX_PIXELS = 400_000_000

PDF_SUFFIXES = {".pdf"}
#: Modes reduced to the size cap before the RGB conversion (1 byte per channel, no
#: palette or alpha to composite first).
_EARLY_RESIZE_MODES = ("L", "RGB")
__all__ = ["MAX_PIXELS", "ImageLoadError", "SizeCap", "check_pixels", "data_url",
           "encode_image", "file_digest", "header_size", "load_image"]


class ImageLoadError(Exception):
    """An image file is missing, unreadable, truncated or too large; message names it."""


def load_image(path: str | Path, page: int = 0, cap: SizeCap | None = None) -> Image.Image:
    """Open an image or a PDF page as an RGB :class:`PIL.Image.Image`, capped to ``cap``.

    PDF pages are rendered with pypdfium2 at 200 dpi (then capped). EXIF orientation is
    applied. Raises :class:`ImageLoadError` naming the file on any failure, and, before
    decoding, for an image whose header declares more than :data:`MAX_PIXELS` pixels
    (the message gives width x height and the pixel count).
    """
    p = Path(path)
    if not p.is_file():
        raise ImageLoadError(f"image file not found: {p}")
    try:
        if p.suffix.lower() in PDF_SUFFIXES:
            img = _render_pdf_page(p, page, cap)
        else:
            img = _open_raster(p, cap)
    except ImageLoadError:
        raise
    except Exception as exc:  # Pillow raises many types for corrupt files
        raise ImageLoadError(f"cannot read image {p}: {type(exc).__name__}: {exc}") from exc
    if cap is not None:
        size = cap.target_size(*img.size)
        if size != img.size:
            img = img.resize(size, Image.Resampling.LANCZOS)
    return img


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
    """``(width, height)`` in pixels from the file header (no pixel decoded, no
    decompression-bomb warning), or ``None`` for a missing, unreadable or PDF file."""
    name = os.fspath(path)  # no Path: on Python 3.11 each one interns its file name
    if os.path.splitext(name)[1].lower() in PDF_SUFFIXES:
        return None
    try:
        with open(name, "rb") as fp:
            im = _identify(fp, name)
            if im is None:
                return None
            with im:
                return int(im.size[0]), int(im.size[1])
    except OSError:
        return None


def _open_raster(p: Path, cap: SizeCap | None) -> Image.Image:
    with p.open("rb") as fp:
        src = _identify(fp, str(p))
        if src is None:  # no plug-in took it: Pillow's own open and guard decide
            src = Image.open(fp)
        with src:
            check_pixels(p, *src.size)  # before any pixel is decoded
            return _decode(src, cap)


def _decode(src: ImageFile.ImageFile, cap: SizeCap | None) -> Image.Image:
    if cap is not None and src.format == "JPEG":
        # Decode at 1/2, 1/4 or 1/8 scale when the cap allows it: bounded memory.
        tw, th = cap.target_size(*src.size)
        src.draft("RGB", (tw, th))
    src.load()
    im: Image.Image = src
    ImageOps.exif_transpose(im, in_place=True)
    if im.mode in ("I;16", "I;16L", "I;16B", "I;16N", "I", "F"):
        im = _to_8bit(im)
    if cap is not None and im.mode in _EARLY_RESIZE_MODES:
        # reduce in the image's own mode before the RGB conversion: a 97 Mpx greyscale
        # page is never held as 3 bytes per pixel
        size = cap.target_size(*im.size)
        if size != im.size:
            im = im.resize(size, Image.Resampling.LANCZOS)
    return _to_rgb(im)


def _to_rgb(im: Image.Image) -> Image.Image:
    """RGB; transparency composited on white."""
    if im.mode in ("RGBA", "LA", "P", "PA"):
        im = im.convert("RGBA")
        background = Image.new("RGBA", im.size, (255, 255, 255, 255))
        im = Image.alpha_composite(background, im)
    return im.convert("RGB")


def _to_8bit(im: Image.Image) -> Image.Image:
    """High-bit-depth greyscale (16-bit PNG/TIFF, 32-bit int or float) to 8-bit ``L``.

    Pillow's own conversion clips such values at 255 (a 16-bit scan turns white). 16-bit
    and integer data whose maximum exceeds 255 are scaled by 255/65535; float data in
    [0, 1] by 255; anything else is clipped to [0, 255].
    """
    import numpy as np

    arr = np.asarray(im).astype(np.float64)
    peak = float(arr.max()) if arr.size else 0.0
    if im.mode.startswith("I;16") or (im.mode == "I" and peak > 255):
        arr = arr * (255.0 / 65535.0)
    elif im.mode == "F" and peak <= 1.0:
        arr = arr * 255.0
    return Image.fromarray(np.clip(np.rint(arr), 0, 255).astype(np.uint8), mode="L")


def _render_pdf_page(p: Path, page: int, cap: SizeCap | None = None) -> Image.Image:
    """Render one page at 200 dpi, or smaller when ``cap`` allows: bounded memory."""
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
        if cap is not None:
            w, h = int(width_pt * scale), int(height_pt * scale)
            tw, th = cap.target_size(w, h)
            scale *= min(1.0, (tw + 1) / max(w, 1), (th + 1) / max(h, 1))
        bitmap = pdf_page.render(scale=scale)
        return bitmap.to_pil().convert("RGB")
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

    p = Path(path)
    if not p.is_file():
        raise ImageLoadError(f"image file not found: {p}")
    h = hashlib.sha256()
    try:
        with p.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        raise ImageLoadError(f"cannot read image {p}: {exc}") from exc
    if p.suffix.lower() in PDF_SUFFIXES:
        h.update(f"#page={page}".encode())
    return h.hexdigest()
