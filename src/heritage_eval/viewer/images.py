"""Thumbnails and zoom-size copies of the images a run refers to, made once and cached.

Each distinct source image (path, PDF page) gets

- a thumbnail ``thumbs/<key>.jpg`` (longest side :data:`THUMB_SIDE` px, JPEG);
- for a large image (longest side > :data:`VIEW_SIDE`), a PDF page or a format browsers
  do not show, a zoom copy ``views/<key>.jpg`` (longest side :data:`VIEW_SIDE` px);
- a link to the original: a path relative to the site (or a copy under ``images/``
  with ``copy_images``). Images are never inlined (no base64 in the data).

``key`` hashes the absolute path, the page, the file's mtime and size, so that building
the site again reuses what is there and a changed file gets a fresh thumbnail. A file
that is missing or unreadable is an :class:`ImageEntry` with ``missing`` set: the page
shows a placeholder naming the path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

THUMB_SIDE = 320
VIEW_SIDE = 2048
JPEG_QUALITY = 82
#: formats every browser shows; anything else (TIFF, PDF …) gets a zoom copy
WEB_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".svg", ".avif"}


@dataclass
class ImageEntry:
    """One source image as the site refers to it (paths relative to the site root).

    ``thumb``/``view``: ``None`` when not made (missing file; ``view`` also when the
    original is small enough to zoom into). ``orig``: link to the original. ``width`` /
    ``height``: original size in px when known. ``missing``: why the image cannot be
    shown (the path and the reason), else ``None``."""

    source: str
    page: int
    key: str
    thumb: str | None
    view: str | None
    orig: str
    width: int | None
    height: int | None
    missing: str | None = None

    @property
    def full(self) -> str:
        """The image to zoom into: the zoom copy, else the original."""
        return self.view or self.orig


class ImageStore:
    """Registers the images of a site and makes their thumbnails in one parallel pass.

    ``out_dir``: the site folder. ``copy_images``: copy originals under ``images/``
    instead of linking them. :meth:`entry` is cheap (a ``stat`` and a header read) and
    returns the final paths at once; :meth:`make_all` writes the missing files."""

    def __init__(self, out_dir: Path, *, copy_images: bool = False,
                 thumb_side: int = THUMB_SIDE, view_side: int = VIEW_SIDE) -> None:
        self.out_dir = out_dir
        self.copy_images = copy_images
        self.thumb_side = thumb_side
        self.view_side = view_side
        self._entries: dict[tuple[str, int], ImageEntry] = {}
        self.reused = 0
        self.made = 0
        self.failed: list[str] = []
        self._final = False

    @property
    def entries(self) -> list[ImageEntry]:
        """Every registered image, in registration order."""
        return list(self._entries.values())

    def entry(self, path: str | Path, page: int = 0, *, width: int | None = None,
              height: int | None = None) -> ImageEntry:
        """The :class:`ImageEntry` of ``path`` (absolute), registering it once."""
        src = os.path.abspath(path)
        known = self._entries.get((src, page))
        if known is not None:
            return known
        try:
            st = os.stat(src)
        except OSError as exc:
            e = ImageEntry(src, page, "", None, None, self._rel(src), width, height,
                           missing=f"{src}: {exc.strerror or 'not readable'}")
            self._entries[(src, page)] = e
            return e
        key = hashlib.sha1(f"{src}\0{page}\0{st.st_mtime_ns}\0{st.st_size}".encode()
                           ).hexdigest()[:16]
        suffix = Path(src).suffix.lower()
        if width is None or height is None:
            from heritage_eval.core.record import image_size

            size = image_size(src)
            width, height = size if size else (None, None)
        big = width is not None and height is not None and max(width, height) > self.view_side
        needs_view = big or suffix not in WEB_SUFFIXES
        orig = self._rel(src)
        if self.copy_images and suffix in WEB_SUFFIXES:
            orig = f"images/{key}{suffix}"
        e = ImageEntry(src, page, key, f"thumbs/{key}.jpg",
                       f"views/{key}.jpg" if needs_view else None, orig, width, height)
        self._entries[(src, page)] = e
        if self._final:  # registered after the parallel pass: make it now
            self._make_some([e], 1)
        return e

    def _rel(self, src: str) -> str:
        """The site-relative URL of ``src``, percent-encoded (a ``#``, ``%``, space or
        non-ASCII name in the path must not break the link)."""
        return quote(Path(os.path.relpath(src, self.out_dir)).as_posix(), safe="/")

    def make_all(self, workers: int | None = None) -> None:
        """Write every thumbnail / zoom copy / copy that is not already there (threads:
        Pillow decodes outside the GIL). A file that fails to decode is marked
        ``missing`` with the reason and listed in :attr:`failed`."""
        self._final = True
        self._make_some(list(self._entries.values()), workers or min(8, os.cpu_count() or 2))

    def _make_some(self, entries: list[ImageEntry], n: int) -> None:
        todo = [e for e in entries if e.missing is None and not self._done(e)]
        self.reused += sum(1 for e in entries if e.missing is None) - len(todo)
        if not todo:
            return
        for sub in ("thumbs", "views", "images"):
            (self.out_dir / sub).mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(max_workers=n) as pool:
            for e, err in zip(todo, pool.map(self._make, todo), strict=True):
                if err is None:
                    self.made += 1
                else:
                    e.missing, e.thumb, e.view = err, None, None
                    self.failed.append(err)

    def _done(self, e: ImageEntry) -> bool:
        files = [e.thumb, e.view] + ([e.orig] if e.orig.startswith("images/") else [])
        return all((self.out_dir / f).is_file() for f in files if f)

    def _make(self, e: ImageEntry) -> str | None:
        from heritage_eval.core.images import ImageLoadError, SizeCap, load_image

        try:
            side = self.view_side if e.view else max(self.thumb_side * 2, 640)
            im = load_image(e.source, e.page, SizeCap(max_side=side))
            if e.view:
                _save_jpeg(im, self.out_dir / e.view)
            im.thumbnail((self.thumb_side, self.thumb_side))
            _save_jpeg(im, self.out_dir / str(e.thumb))
            if e.orig.startswith("images/"):
                shutil.copyfile(e.source, self.out_dir / e.orig)
        except (ImageLoadError, OSError, ValueError) as exc:
            return f"{e.source}: unreadable image: {exc}"
        return None


def _save_jpeg(im: object, path: Path) -> None:
    from PIL import Image

    assert isinstance(im, Image.Image)
    tmp = path.with_suffix(".tmp")
    im.convert("RGB").save(tmp, "JPEG", quality=JPEG_QUALITY, optimize=False)
    os.replace(tmp, path)
