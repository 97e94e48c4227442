"""Output side of the demo-data scripts: writing images, JSON and the manifest, and the
shared command line. Rendering helpers live in ``_render_common``."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

from PIL import Image

from _render_common import DEMO_ROOT, FontMissingError, apt_packages, environment_fingerprint


def save(img: Image.Image, path: Path) -> None:
    """Write PNG (zlib level 7; 9 is 6x slower for 4 % less) or JPEG (q85), no metadata."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".png":
        img.save(path, "PNG", compress_level=7)
    else:
        img.save(path, "JPEG", quality=85, optimize=True, progressive=False, subsampling=2)


def write_json(path: Path, obj: object, *, lines: bool = False) -> None:
    """Write ``obj`` as UTF-8 JSON (indented), or one JSON object per line if ``lines``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if lines:
        assert isinstance(obj, list)
        text = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in obj)
    else:
        text = json.dumps(obj, ensure_ascii=False, indent=1) + "\n"
    path.write_text(text, encoding="utf-8")


def write_manifest(out: Path, generator: str, seed: int, font_keys: list[str],
                   written: list[Path]) -> list[Path]:
    """Write ``out/MANIFEST.json`` (seed, environment, SHA-256 of each of ``written``)."""
    files = {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(written)}
    write_json(out / "MANIFEST.json", {
        "generator": generator, "seed": seed, "environment": environment_fingerprint(font_keys),
        "apt_packages": apt_packages(font_keys), "files": files})
    return [*written, out / "MANIFEST.json"]


def demo_main(argv: list[str] | None, doc: str | None, subdir: str,
              generate: Callable[[Path, int], list[Path]]) -> int:
    """A demo script's command line (``--out``, ``--seed``); exit status 2 without a font."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    ap.add_argument("--out", type=Path, default=DEMO_ROOT / subdir,
                    help=f"output folder (default: data/demo/{subdir})")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = ap.parse_args(argv)
    try:
        files = generate(args.out, args.seed)
    except FontMissingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    total = sum(p.stat().st_size for p in files)
    print(f"wrote {len(files)} files, {total / 1e6:.2f} MB, to {args.out}")
    return 0
