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
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

THUMB_SIDE = 320
VIEW_SIDE = 2048
JPEG_QUALITY = 82
#: seconds a process waits for another one making the same image before making it too
LOCK_WAIT_S = 120.0
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
        #: while true, new entries wait for :meth:`make_pending` (made in one parallel
        #: pass); while false, a new entry is made as it is registered
        self.defer = True
        self._pending: list[ImageEntry] = []
        #: a folder shared by the processes building one site: each image is made by
        #: one of them (``None``: this store is the only one)
        self.lock_dir: Path | None = None

    @property
    def entries(self) -> list[ImageEntry]:
        """Every registered image, in registration order."""
        return list(self._entries.values())

    @property
    def entries_by_key(self) -> dict[tuple[str, int], ImageEntry]:
        """Every registered image by (absolute path, page), in registration order (the
        store's own dict: do not change it)."""
        return self._entries

    def entry(self, path: str | Path, page: int = 0, *, width: int | None = None,
              height: int | None = None) -> ImageEntry:
        """The :class:`ImageEntry` of ``path`` (absolute), registering it once."""
        src = os.path.abspath(path)
        known = self._entries.get((src, page))
        if known is not None:
            return known
        try:
            st = os.stat(src)
        except (OSError, ValueError) as exc:  # ValueError: a path no file system can hold
            reason = exc.strerror if isinstance(exc, OSError) else None
            e = ImageEntry(src, page, "", None, None, self._rel(src), width, height,
                           missing=f"{self.shown(src)}: {reason or 'not readable'}")
            self._entries[(src, page)] = e
            return e
        key = hashlib.sha1(f"{src}\0{page}\0{st.st_mtime_ns}\0{st.st_size}".encode(
            "utf-8", "surrogateescape")).hexdigest()[:16]
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
        if self.defer:
            self._pending.append(e)
        else:  # registered after the parallel pass: make it now
            self._make_some([e], 1)
        return e

    def shown(self, src: str) -> str:
        """``src`` as the page names it in a note: relative to the site folder (the site
        holds no absolute path of the machine that built it)."""
        return Path(os.path.relpath(src, self.out_dir)).as_posix()

    def _rel(self, src: str) -> str:
        """The site-relative URL of ``src``, percent-encoded (a ``#``, ``%``, space or
        non-ASCII name in the path must not break the link; see :func:`url_path`)."""
        return url_path(Path(os.path.relpath(src, self.out_dir)).as_posix())

    def make_pending(self, workers: int | None = None) -> None:
        """Write the thumbnails / zoom copies / copies of the entries registered since
        the last call that are not already there (threads: Pillow decodes outside the
        GIL), then make later entries as they come (:attr:`defer` false). A file that
        fails to decode is marked ``missing`` with the reason and listed in
        :attr:`failed`."""
        todo, self._pending = self._pending, []
        self.defer = False
        self._make_some(todo, workers or min(8, os.cpu_count() or 2))

    def make_all(self, workers: int | None = None) -> None:
        """:meth:`make_pending` (every entry registered so far is pending until then)."""
        self.make_pending(workers)

    def _make_some(self, entries: list[ImageEntry], n: int) -> None:
        todo = [e for e in entries if e.missing is None and not self._done(e)]
        self.reused += sum(1 for e in entries if e.missing is None) - len(todo)
        if not todo:
            return
        for sub in ("thumbs", "views", "images"):
            (self.out_dir / sub).mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(max_workers=n) as pool:
            for e, (here, err) in zip(todo, pool.map(self._make_once, todo), strict=True):
                if err is None:
                    self.made += here
                    self.reused += not here
                else:
                    e.missing, e.thumb, e.view = err, None, None
                    self.failed.append(err)

    def _done(self, e: ImageEntry) -> bool:
        files = [e.thumb, e.view] + ([e.orig] if e.orig.startswith("images/") else [])
        return all((self.out_dir / f).is_file() for f in files if f)

    def _make_once(self, e: ImageEntry) -> tuple[bool, str | None]:
        """``(made by this process, error)`` of making ``e``. With :attr:`lock_dir`
        (several processes building one site), the first process to claim the image
        makes it and leaves the outcome there; the others wait for it (up to
        :data:`LOCK_WAIT_S`, then make it themselves)."""
        if self.lock_dir is None:
            return True, self._make(e)
        claim, done = self.lock_dir / f"{e.key}.claim", self.lock_dir / f"{e.key}.done"
        try:
            os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            deadline = time.monotonic() + LOCK_WAIT_S
            while time.monotonic() < deadline:
                try:
                    return False, done.read_text("utf-8", "surrogatepass") or None
                except FileNotFoundError:
                    time.sleep(0.01)
            return True, self._make(e)
        err = self._make(e)
        tmp = done.with_name(f"{done.name}.{os.getpid()}.tmp")
        tmp.write_text(err or "", "utf-8", "surrogatepass")
        os.replace(tmp, done)
        return True, err

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
            shown = self.shown(e.source)  # the loader's message names the file too
            return f"{shown}: unreadable image: {str(exc).replace(e.source, shown)}"
        return None


def url_path(path: str) -> str:
    """``path`` percent-encoded for a link (``/`` kept). A name that is not valid UTF-8
    (a lone surrogate from :func:`os.fsdecode`) is encoded as its original bytes, so the
    link names the file; any other lone surrogate as its ``\\uXXXX`` text (no file has
    it)."""
    try:
        return quote(path, safe="/", errors="surrogateescape")
    except UnicodeEncodeError:
        return quote(path, safe="/", errors="backslashreplace")


def _save_jpeg(im: object, path: Path) -> None:
    from PIL import Image

    assert isinstance(im, Image.Image)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")  # workers may race: unique
    im.convert("RGB").save(tmp, "JPEG", quality=JPEG_QUALITY, optimize=False)
    os.replace(tmp, path)
