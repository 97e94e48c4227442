"""One ``ingest iiif`` run: fetch every canvas image (or its regions) of a manifest into
a folder, with resume, and write the records a curator goes on from.

Layout of ``out``:

- ``images/<n>_<label>.<ext>`` (``<n>`` the 3-digit canvas position, ``<label>`` the
  canvas label made file-safe; ``_r<k>`` added for the ``k``-th region of a canvas);
- ``manifest.jsonl``: one line per image (or failed image): ``n``, ``canvas_id``,
  ``canvas_label``, ``region``, ``file``, ``source_url``, ``service``,
  ``image_api``, ``size``, ``width``/``height`` (pixels), ``sha256``, ``fetched_at``
  (ISO 8601 UTC), the manifest's ``rights``, ``required_statement`` and ``metadata``,
  ``status`` (``ok`` / ``error``) and ``error`` (the reason);
- ``provenance.json``: the manifest (source, id, label, rights, attribution, metadata,
  sha256 of its text), the settings and the counts;
- ``labelstudio_tasks.json``: a Label Studio import list ``[{"data": {"image": ...}}]``
  (paths relative to ``out``) for annotating in the MUSE schema;
- ``conv.jsonl``: an Ancient-Bench skeleton, ``{"image": name, "human_gt": ""}`` per
  image, the transcription to be filled in.

Re-run (resume): ``out`` must be missing, empty or an earlier ingest of the same
manifest (:func:`~.outputs.check_out`) unless ``overwrite``. An image whose line in the
earlier ``manifest.jsonl`` is ``ok`` and whose file is present with the recorded sha256
is kept without any request; ``ok`` lines of images not asked for this time (a smaller
``--limit``, other regions) are kept as they were, and their file names are not reused;
``conv.jsonl`` and ``labelstudio_tasks.json`` keep every earlier line / task and only
gain those of new images (:mod:`.outputs`). ``overwrite`` starts afresh. Every file is
written atomically (temporary file + rename), ``manifest.jsonl`` after each image, and
``provenance.json`` first (so that an interrupted run is known as an ingest) and last.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from PIL import Image, UnidentifiedImageError
from tqdm import tqdm

from heritage_eval.core.atomic_write import atomic_write_bytes as _write_bytes
from heritage_eval.core.datapath import read_regular_bytes
from heritage_eval.core.sizecap import png_text_problem
from heritage_eval.core.store import atomic_write_lines
from heritage_eval.curate.iiif.http import Fetched, FetchError, get
from heritage_eval.curate.iiif.imageapi import (
    ServiceInfo,
    image_url,
    info_url,
    parse_info,
    size_param,
)
from heritage_eval.curate.iiif.manifest import (
    CanvasImage,
    Manifest,
    ManifestError,
    decode_manifest,
)
from heritage_eval.curate.iiif.outputs import (
    TOOL,
    Previous,
    check_out,
    load_previous,
    write_provenance,
    write_side_files,
)
from heritage_eval.curate.iiif.regions import Regions, check_regions

EXTENSIONS = {"JPEG": ".jpg", "PNG": ".png", "TIFF": ".tif", "WEBP": ".webp", "GIF": ".gif",
              "JPEG2000": ".jp2", "BMP": ".bmp"}


@dataclass(frozen=True)
class Settings:
    """``max_size``: cap in pixels on the longest side; ``timeout`` seconds per request;
    ``retries`` for 429/5xx/timeouts with ``backoff`` seconds doubling; ``limit``: first
    N canvases only; ``regions``: canvas key -> region parameters; ``overwrite``: write
    over a folder that is not an earlier ingest of the same manifest, ignoring what an
    earlier run left there."""

    max_size: int = 2048
    timeout: float = 30.0
    retries: int = 3
    backoff: float = 1.0
    limit: int | None = None
    regions: Regions = field(default_factory=Regions)
    progress: bool = True
    overwrite: bool = False


@dataclass
class Result:
    """Lines of the images asked for this run (``lines``), and how many were ``fetched``
    now, ``reused`` from an earlier run, or failed (``errors``); ``kept``: ``ok`` lines
    of an earlier run for images not asked for this time, written back unchanged."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    fetched: int = 0
    reused: int = 0
    errors: int = 0
    kept: list[dict[str, Any]] = field(default_factory=list)

    def all_lines(self) -> list[dict[str, Any]]:
        """``lines`` and ``kept`` in canvas order (``n``; this run's lines first)."""
        return sorted(self.lines + self.kept, key=lambda x: int(x.get("n") or 0))


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second (``2026-01-31T12:00:00Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def safe_label(label: str, limit: int = 60) -> str:
    """``label`` as a file-name part: runs of characters other than letters, digits,
    ``-`` and ``.`` become ``_`` (letters of any script are kept), at most ``limit``
    characters; ``"canvas"`` when nothing is left."""
    text = re.sub(r"[^\w.\-]+", "_", label, flags=re.UNICODE).strip("_.")
    return text[:limit].rstrip("_.") or "canvas"


def sha256_file(path: Path) -> str:
    """Hex sha256 of the file's bytes."""
    return hashlib.sha256(read_regular_bytes(path)).hexdigest()


def read_source(source: str, client: httpx.Client, settings: Settings) -> tuple[str, str]:
    """The manifest text of a file path or an http(s) URL, and its sha256. Raises
    ``OSError`` (a file) or :class:`~.http.FetchError` (a URL)."""
    if re.match(r"^https?://", source):
        got = get(client, source, settings.timeout, settings.retries, settings.backoff)
        raw = got.content
    else:
        raw = read_regular_bytes(source)  # a FIFO or device: refused, never opened
    return raw.decode("utf-8-sig"), hashlib.sha256(raw).hexdigest()


def _decode_image(data: bytes, content_type: str, cap: int, url: str = ""
                  ) -> tuple[bytes, str, int, int]:
    """(bytes to save, extension, width, height); a body larger than ``cap`` (a plain
    image URL without a service) is scaled down and saved as JPEG. Raises ``ValueError``
    for a body that is not an image, naming ``url``, the content type, the size and the
    first bytes of what came back, and for a PNG whose text chunks are over their caps
    (:func:`~heritage_eval.core.sizecap.png_text_problem`, docs/limits.md)."""
    if (why := png_text_problem(io.BytesIO(data), f"image from {url}")) is not None:
        raise ValueError(why)
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            fmt, size = img.format or "", img.size
            if max(size) <= cap:
                return data, EXTENSIONS.get(fmt, ".jpg"), size[0], size[1]
            small = img.convert("RGB")
            small.thumbnail((cap, cap))
            buf = io.BytesIO()
            small.save(buf, "JPEG", quality=92)
            return buf.getvalue(), ".jpg", small.width, small.height
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        kind = content_type.split(";")[0].strip() or "no content type"
        why = "" if isinstance(exc, UnidentifiedImageError) else f"; {exc}"
        raise ValueError(f"not an image ({kind}, {len(data)} bytes starting "
                         f"{data[:32]!r}{why}) from {url}") from exc


class Ingester:
    """Fetches the images of one manifest into ``out`` (module docstring) with
    ``client``."""

    def __init__(self, manifest: Manifest, out: Path, settings: Settings,
                 client: httpx.Client, previous: Previous | None = None) -> None:
        self.manifest, self.out, self.settings = manifest, out, settings
        self.client = client
        self.previous = previous or Previous()
        self._infos: dict[str, ServiceInfo | str] = {}

    def _fetch(self, url: str) -> Fetched:
        s = self.settings
        return get(self.client, url, s.timeout, s.retries, s.backoff)

    def _info(self, canvas: CanvasImage) -> tuple[ServiceInfo | None, str | None]:
        assert canvas.service is not None
        key = canvas.service.id
        if key not in self._infos:
            try:
                self._infos[key] = parse_info(json.loads(self._fetch(info_url(
                    canvas.service)).content))
            except (FetchError, ValueError) as exc:
                self._infos[key] = f"info.json unusable ({exc}); size !cap,cap used"
        got = self._infos[key]
        return (None, got) if isinstance(got, str) else (got, None)

    def wanted(self) -> list[tuple[CanvasImage, str]]:
        """``(canvas, region)`` per image asked for, in manifest order (``full`` for a
        canvas without listed regions)."""
        return [(c, r) for c, r, _k in self._numbered()]

    def kept(self) -> list[dict[str, Any]]:
        """Earlier ``ok`` lines of images not asked for this run (kept unchanged)."""
        asked = {(c.canvas_id, r) for c, r in self.wanted()}
        return [x for key, x in self.previous.ok().items() if key not in asked]

    def jobs(self) -> list[tuple[CanvasImage, str, str]]:
        """``(canvas, region, file stem)`` per image to make, in manifest order: a whole
        canvas is ``<n>_<label>``, its ``k``-th listed region ``<n>_<label>_r<k>``; a
        stem whose file an earlier ``ok`` line of another image holds is skipped (``k``
        moves on, or ``_2``, ``_3``… is added), so no recorded image is written over."""
        owner = {Path(str(x.get("file"))).stem: key for key, x in self.previous.ok().items()}
        used: set[str] = set()
        out: list[tuple[CanvasImage, str, str]] = []
        for c, region, k in self._numbered():
            base = f"{c.index:03d}_{safe_label(c.label or c.canvas_id.rsplit('/', 1)[-1])}"

            def free(stem: str, key: tuple[str, str] = (c.canvas_id, region)) -> bool:
                return stem not in used and owner.get(stem, key) == key

            if k == 0:
                stem, j = base, 1
                while not free(stem):
                    j += 1
                    stem = f"{base}_{j}"
            else:
                while not free(f"{base}_r{k}"):
                    k += 1
                stem = f"{base}_r{k}"
            used.add(stem)
            out.append((c, region, stem))
        return out

    def _numbered(self) -> list[tuple[CanvasImage, str, int]]:
        """:meth:`wanted` with each region's 1-based place among its canvas's regions
        (0 for a whole canvas)."""
        out: list[tuple[CanvasImage, str, int]] = []
        for c in self.manifest.canvases[: self.settings.limit]:
            regions = self._regions(c)
            out += [(c, r, k) for k, r in enumerate(regions, start=1)] if regions \
                else [(c, "full", 0)]
        return out

    def _regions(self, c: CanvasImage) -> list[str]:
        return self.settings.regions.get(c.canvas_id) or \
            self.settings.regions.get(str(c.index)) or []

    def _base(self, canvas: CanvasImage, region: str) -> dict[str, Any]:
        m = self.manifest
        return {"n": canvas.index, "canvas_id": canvas.canvas_id,
                "canvas_label": canvas.label, "region": region, "rights": m.rights,
                "required_statement": m.required_statement, "metadata": m.metadata}

    def one(self, canvas: CanvasImage, region: str, stem: str) -> dict[str, Any]:
        """Fetch one image; its manifest line (``status`` ``error`` with the reason on
        failure, nothing written then)."""
        line = self._base(canvas, region)
        note = None
        if canvas.service is not None:
            info, note = self._info(canvas)
            size = size_param(self.settings.max_size, canvas.service.version, info, region)
            url = image_url(canvas.service, region, size)
            line.update(service=canvas.service.id, image_api=canvas.service.version,
                        size=size)
        elif region != "full":
            return {**line, "status": "error", "source_url": canvas.body_id,
                    "error": "a region crop needs an image service; the canvas has none"}
        elif canvas.body_id:
            url = canvas.body_id
            line.update(service=None, image_api=None, size=None)
        else:
            return {**line, "status": "error", "source_url": None,
                    "error": "the canvas has no painting image"}
        line["source_url"] = url
        try:
            got = self._fetch(url)
            data, ext, width, height = _decode_image(got.content, got.content_type,
                                                     self.settings.max_size, got.url)
        except (FetchError, ValueError) as exc:
            return {**line, "status": "error",
                    "error": exc.reason if isinstance(exc, FetchError) else str(exc)}
        path = self.out / "images" / f"{stem}{ext}"
        _write_bytes(path, data)
        line.update(file=f"images/{path.name}", width=width, height=height,
                    sha256=hashlib.sha256(data).hexdigest(), fetched_at=now_iso(),
                    status="ok", error=None)
        if note:
            line["warning"] = note
        return line

    def run(self) -> Result:
        """Fetch (or reuse) every image, writing ``manifest.jsonl`` after each one."""
        result = Result(kept=self.kept())
        before = self.previous.ok()
        jobs = self.jobs()
        bar = tqdm(jobs, desc="ingest iiif", unit="img", file=sys.stderr,
                   dynamic_ncols=True, disable=not self.settings.progress or None)
        for canvas, region, stem in bar:
            old = before.get((canvas.canvas_id, region))
            if old and (self.out / str(old.get("file"))).is_file() and \
                    sha256_file(self.out / str(old["file"])) == old.get("sha256"):
                result.lines.append(old)
                result.reused += 1
            else:
                line = self.one(canvas, region, stem)
                result.lines.append(line)
                if line["status"] == "ok":
                    result.fetched += 1
                else:
                    result.errors += 1
            atomic_write_lines(self.out / "manifest.jsonl",
                               (json.dumps(x, ensure_ascii=False) for x in result.all_lines()))
        return result


def ingest(source: str, out: Path, settings: Settings, client: httpx.Client,
           command: str = "") -> Result:
    """Read the manifest ``source`` (file or URL), fetch its images into ``out`` and
    write every output file (module docstring). Raises, with nothing written:
    :class:`~.manifest.ManifestError` (also for a manifest without any canvas with an
    image), ``OSError`` or :class:`~.http.FetchError` when the manifest itself cannot
    be had; :class:`~.regions.RegionsError` for a region naming no canvas of it;
    :class:`~.outputs.OutError` for an ``out`` that must not be written."""
    text, digest = read_source(source, client, settings)
    manifest = decode_manifest(text, source)
    if not any(c.body_id or c.service for c in manifest.canvases):
        raise ManifestError(f"{source}: the manifest has no canvases with images")
    check_regions(settings.regions, manifest.canvases)
    check_out(out, manifest, source, settings.overwrite)
    previous = load_previous(out, settings.overwrite)
    provenance: dict[str, Any] = {
        "tool": TOOL, "version": _version(), "command": command,
        "started_at": now_iso(), "finished_at": None,
        "manifest": {"source": source, "id": manifest.id, "label": manifest.label,
                     "sha256": digest, "rights": manifest.rights,
                     "requiredStatement": manifest.required_statement,
                     "metadata": manifest.metadata},
        "settings": {"max_size": settings.max_size, "timeout": settings.timeout,
                     "retries": settings.retries, "limit": settings.limit,
                     "regions": dict(settings.regions), "overwrite": settings.overwrite}}
    write_provenance(out, provenance)  # marks the folder as this manifest's ingest
    result = Ingester(manifest, out, settings, client, previous).run()
    ok = [x for x in result.all_lines() if x.get("status") == "ok"]
    provenance.update(finished_at=now_iso(), counts={
        "images": len(ok), "fetched": result.fetched, "reused": result.reused,
        "kept": len(result.kept), "errors": result.errors})
    write_side_files(out, ok, previous, provenance)
    return result


def _version() -> str:
    from heritage_eval import __version__

    return __version__
