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

Resume: an image whose line in an earlier ``manifest.jsonl`` is ``ok`` and whose file is
present with the recorded sha256 is kept without any request. Every file is written
atomically (temporary file + rename), ``manifest.jsonl`` after each image.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from PIL import Image, UnidentifiedImageError
from tqdm import tqdm

from heritage_eval.core.store import atomic_write_lines, atomic_write_text
from heritage_eval.curate.iiif.http import Fetched, FetchError, get
from heritage_eval.curate.iiif.imageapi import (
    ServiceInfo,
    image_url,
    info_url,
    parse_info,
    size_param,
)
from heritage_eval.curate.iiif.manifest import CanvasImage, Manifest, decode_manifest
from heritage_eval.curate.iiif.regions import Regions

EXTENSIONS = {"JPEG": ".jpg", "PNG": ".png", "TIFF": ".tif", "WEBP": ".webp", "GIF": ".gif",
              "JPEG2000": ".jp2", "BMP": ".bmp"}


@dataclass(frozen=True)
class Settings:
    """``max_size``: cap in pixels on the longest side; ``timeout`` seconds per request;
    ``retries`` for 429/5xx/timeouts with ``backoff`` seconds doubling; ``limit``: first
    N canvases only; ``regions``: canvas key -> region parameters."""

    max_size: int = 2048
    timeout: float = 30.0
    retries: int = 3
    backoff: float = 1.0
    limit: int | None = None
    regions: Regions = field(default_factory=dict)
    progress: bool = True


@dataclass
class Result:
    """Lines written (``lines``), and how many were ``fetched`` now, ``reused`` from an
    earlier run, or failed (``errors``)."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    fetched: int = 0
    reused: int = 0
    errors: int = 0


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
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_source(source: str, client: httpx.Client, settings: Settings) -> tuple[str, str]:
    """The manifest text of a file path or an http(s) URL, and its sha256. Raises
    ``OSError`` (a file) or :class:`~.http.FetchError` (a URL)."""
    if re.match(r"^https?://", source):
        got = get(client, source, settings.timeout, settings.retries, settings.backoff)
        raw = got.content
    else:
        raw = Path(source).read_bytes()
    return raw.decode("utf-8-sig"), hashlib.sha256(raw).hexdigest()


def previous_lines(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """``ok`` lines of an earlier ``manifest.jsonl`` by ``(canvas_id, region)``
    (unreadable lines are ignored: those images are fetched again)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if not path.is_file():
        return out
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict) and line.get("status") == "ok":
            out[(str(line.get("canvas_id")), str(line.get("region")))] = line
    return out


def _decode_image(data: bytes, content_type: str, cap: int) -> tuple[bytes, str, int, int]:
    """(bytes to save, extension, width, height); a body larger than ``cap`` (a plain
    image URL without a service) is scaled down and saved as JPEG. Raises ``ValueError``
    for a body that is not an image."""
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
        kind = content_type.split(";")[0].strip() or "unknown content type"
        raise ValueError(f"not an image ({kind}: {exc})") from exc


class Ingester:
    """Fetches the images of one manifest into ``out`` (module docstring) with
    ``client``."""

    def __init__(self, manifest: Manifest, out: Path, settings: Settings,
                 client: httpx.Client) -> None:
        self.manifest, self.out, self.settings = manifest, out, settings
        self.client = client
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

    def jobs(self) -> list[tuple[CanvasImage, str, str]]:
        """``(canvas, region, file stem)`` per image to make, in manifest order."""
        canvases = self.manifest.canvases[: self.settings.limit]
        out: list[tuple[CanvasImage, str, str]] = []
        for c in canvases:
            stem = f"{c.index:03d}_{safe_label(c.label or c.canvas_id.rsplit('/', 1)[-1])}"
            regions = self.settings.regions.get(c.canvas_id) or \
                self.settings.regions.get(str(c.index))
            if regions:
                out += [(c, r, f"{stem}_r{k}") for k, r in enumerate(regions, start=1)]
            else:
                out.append((c, "full", stem))
        return out

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
                                                     self.settings.max_size)
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
        result = Result()
        before = previous_lines(self.out / "manifest.jsonl")
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
                               (json.dumps(x, ensure_ascii=False) for x in result.lines))
        return result


def write_side_files(out: Path, manifest: Manifest, result: Result,
                     provenance: dict[str, Any]) -> None:
    """``provenance.json``, ``labelstudio_tasks.json`` and ``conv.jsonl`` (module
    docstring) for the ``ok`` lines of ``result``."""
    ok = [x for x in result.lines if x.get("status") == "ok"]
    provenance = {**provenance, "counts": {"images": len(ok), "fetched": result.fetched,
                                           "reused": result.reused, "errors": result.errors}}
    atomic_write_text(out / "provenance.json",
                      json.dumps(provenance, ensure_ascii=False, indent=2) + "\n")
    tasks = [{"data": {"image": x["file"], "canvas_id": x["canvas_id"],
                       "source_url": x["source_url"]}} for x in ok]
    atomic_write_text(out / "labelstudio_tasks.json",
                      json.dumps(tasks, ensure_ascii=False, indent=2) + "\n")
    atomic_write_lines(out / "conv.jsonl", (json.dumps(
        {"image": Path(x["file"]).name, "human_gt": ""}, ensure_ascii=False) for x in ok))


def ingest(source: str, out: Path, settings: Settings, client: httpx.Client,
           command: str = "") -> Result:
    """Read the manifest ``source`` (file or URL), fetch its images into ``out`` and
    write every output file. Raises :class:`~.manifest.ManifestError`, ``OSError`` or
    :class:`~.http.FetchError` when the manifest itself cannot be had (nothing is
    written then)."""
    text, digest = read_source(source, client, settings)
    manifest = decode_manifest(text, source)
    started = now_iso()
    result = Ingester(manifest, out, settings, client).run()
    write_side_files(out, manifest, result, {
        "tool": "heritage-eval ingest iiif", "version": _version(), "command": command,
        "started_at": started, "finished_at": now_iso(),
        "manifest": {"source": source, "id": manifest.id, "label": manifest.label,
                     "sha256": digest, "rights": manifest.rights,
                     "requiredStatement": manifest.required_statement,
                     "metadata": manifest.metadata},
        "settings": {"max_size": settings.max_size, "timeout": settings.timeout,
                     "retries": settings.retries, "limit": settings.limit,
                     "regions": settings.regions}})
    return result


def _version() -> str:
    from heritage_eval import __version__

    return __version__
