"""Shared pieces of the demo-data renderers: fonts, glyph layout, textures, saving.

Used by ``make_ancient_demo.py`` and ``make_hcsu_demo.py``. Everything is deterministic:
random numbers come from ``numpy.random.Generator`` objects seeded from
``stable_hash([seed, sample_id, purpose])`` (:func:`rng_for`), and images are written
without timestamps or other run-dependent metadata, so the same library versions give
byte-identical files. Fonts are openly licensed Debian packages, found at their Debian
paths or through ``fc-list``; a missing font raises :class:`FontMissingError` naming the
``apt-get`` package to install (see ``data/demo/FONTS.md``).
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np
from fontTools.ttLib import TTFont
from PIL import Image, ImageDraw, ImageFont

from heritage_eval.core.types import stable_hash

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_ROOT = REPO_ROOT / "data" / "demo"


class FontMissingError(RuntimeError):
    """A needed font is not installed; the message names the Debian package."""


@dataclass(frozen=True)
class FontSpec:
    """One openly licensed font face: fontconfig family, known file path, Debian package."""

    key: str
    family: str
    path: str
    package: str
    licence: str


_F = "/usr/share/fonts"
FONTS: dict[str, FontSpec] = {spec.key: spec for spec in (
    FontSpec("ukai", "AR PL UKai TW", f"{_F}/truetype/arphic/ukai.ttc",
             "fonts-arphic-ukai", "Arphic Public License"),
    FontSpec("uming", "AR PL UMing TW", f"{_F}/truetype/arphic/uming.ttc",
             "fonts-arphic-uming", "Arphic Public License"),
    FontSpec("cwkai", "cwTeXKai", f"{_F}/truetype/cwtex/cwkai.ttf",
             "fonts-cwtex-kai", "GPL-2+ with font exception"),
    FontSpec("cwming", "cwTeXMing", f"{_F}/truetype/cwtex/cwming.ttf",
             "fonts-cwtex-ming", "GPL-2+ with font exception"),
    FontSpec("cwfs", "cwTeXFangSong", f"{_F}/truetype/cwtex/cwfs.ttf",
             "fonts-cwtex-fs", "GPL-2+ with font exception"),
    FontSpec("cwyen", "cwTeXYen", f"{_F}/truetype/cwtex/cwyen.ttf",
             "fonts-cwtex-yen", "GPL-2+ with font exception"),
    FontSpec("cwheib", "cwTeXHeiBold", f"{_F}/truetype/cwtex/cwheib.ttf",
             "fonts-cwtex-heib", "GPL-2+ with font exception"),
    FontSpec("zenhei", "WenQuanYi Zen Hei", f"{_F}/truetype/wqy/wqy-zenhei.ttc",
             "fonts-wqy-zenhei", "GPL-2 with font embedding exception"),
    FontSpec("microhei", "WenQuanYi Micro Hei", f"{_F}/truetype/wqy/wqy-microhei.ttc",
             "fonts-wqy-microhei", "Apache-2.0 or GPL-3+ with font exception"),
    FontSpec("notoserif", "Noto Serif CJK TC", f"{_F}/opentype/noto/NotoSerifCJK-Regular.ttc",
             "fonts-noto-cjk", "SIL Open Font License 1.1"),
    FontSpec("notoserif_bold", "Noto Serif CJK TC", f"{_F}/opentype/noto/NotoSerifCJK-Bold.ttc",
             "fonts-noto-cjk", "SIL Open Font License 1.1"),
    FontSpec("notosans_bold", "Noto Sans CJK TC", f"{_F}/opentype/noto/NotoSansCJK-Bold.ttc",
             "fonts-noto-cjk", "SIL Open Font License 1.1"),
)}


def apt_packages(keys: list[str]) -> list[str]:
    """Sorted Debian package names that provide the fonts ``keys``."""
    return sorted({FONTS[k].package for k in keys})


@cache
def locate_font(key: str) -> tuple[str, int]:
    """(file path, face index inside a .ttc) of font ``key``.

    Looks at the Debian path first, then asks ``fc-list`` for the family. Raises
    :class:`FontMissingError` naming the ``apt-get install`` package when neither finds it.
    """
    spec = FONTS[key]
    candidates = [spec.path] if Path(spec.path).is_file() else []
    if not candidates:
        try:
            out = subprocess.run(["fc-list", f":family={spec.family}", "file"],
                                 capture_output=True, text=True, check=False, timeout=30).stdout
            candidates = sorted({ln.split(":")[0].strip() for ln in out.splitlines() if ln})
        except (OSError, subprocess.SubprocessError):
            candidates = []
    for path in candidates:
        for index in range(16):
            try:
                name = ImageFont.truetype(path, 12, index=index).getname()[0]
            except OSError:
                break
            if name == spec.family:
                return path, index
    raise FontMissingError(
        f"font {spec.family!r} ({key}) not found; install it with "
        f"`apt-get install {spec.package}` (licence: {spec.licence})")


@cache
def _cmap(key: str) -> frozenset[int]:
    path, index = locate_font(key)
    with TTFont(path, fontNumber=index, lazy=True) as tt:
        return frozenset(tt.getBestCmap())


def missing_glyphs(key: str, text: str) -> str:
    """Characters of ``text`` (newlines ignored) that font ``key`` has no glyph for."""
    cmap = _cmap(key)
    return "".join(sorted({c for c in text if c != "\n" and ord(c) not in cmap}))


@cache
def font(key: str, size: int) -> ImageFont.FreeTypeFont:
    """Pillow font ``key`` at ``size`` px (basic layout: no libraqm dependence)."""
    path, index = locate_font(key)
    return ImageFont.truetype(path, size, index=index, layout_engine=ImageFont.Layout.BASIC)


def font_fingerprint(keys: list[str]) -> dict[str, str]:
    """SHA-256 prefix of each font file used: output bytes depend on them."""
    out = {}
    for key in sorted(set(keys)):
        path, index = locate_font(key)
        out[key] = f"{Path(path).name}#{index}:" + hashlib.sha256(
            Path(path).read_bytes()).hexdigest()[:16]
    return out


def environment_fingerprint(font_keys: list[str]) -> dict[str, object]:
    """Library versions and font hashes that determine the output bytes."""
    import PIL

    return {"pillow": PIL.__version__, "numpy": np.__version__, "opencv": cv2.__version__,
            "fonts": font_fingerprint(font_keys)}


def rng_for(seed: int, sample_id: str, purpose: str) -> np.random.Generator:
    """Generator seeded from ``stable_hash([seed, sample_id, purpose])`` (64-bit)."""
    return np.random.default_rng(int(stable_hash([seed, sample_id, purpose]), 16))


# ---------------------------------------------------------------- glyphs and layout
def glyph(key: str, ch: str, size: int, cell: int, *, angle: float = 0.0,
          shift: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """Coverage mask (cell, cell) float32 in 0–1 of ``ch`` drawn ``size`` px, centred.

    ``angle`` rotates (degrees, counter-clockwise) about the centre; ``shift`` moves the
    glyph by (dx, dy) pixels.
    """
    img = Image.new("L", (cell, cell), 0)
    ImageDraw.Draw(img).text((cell / 2 + shift[0], cell / 2 + shift[1]), ch,
                             font=font(key, size), fill=255, anchor="mm")
    mask: np.ndarray = np.asarray(img, dtype=np.float32) / 255.0
    if angle:
        mat = cv2.getRotationMatrix2D((cell / 2, cell / 2), angle, 1.0)
        mask = cv2.warpAffine(mask, mat, (cell, cell), flags=cv2.INTER_LINEAR)
    return mask


def layout_columns(columns: list[str], key: str, *, char: int, pitch_x: int, pitch_y: int,
                   margin: tuple[int, int], height: int | None = None,
                   rng: np.random.Generator | None = None, jitter: float = 0.0,
                   tilt: float = 0.0, scale_jitter: float = 0.0,
                   drift: float = 0.0) -> np.ndarray:
    """Ink mask (H, W) float32 0–1 of vertical ``columns`` laid out right to left.

    ``columns[0]`` is the rightmost column, each read top to bottom. ``char``: glyph size
    in px; ``pitch_x`` / ``pitch_y``: column and character spacing in px; ``margin``:
    (x, y) border in px. ``jitter`` (px), ``tilt`` (degrees) and ``scale_jitter``
    (fraction) draw per-character offsets, rotation and size changes from ``rng``;
    ``drift`` (px) is the step of a random walk that bends each column sideways.
    """
    rows = max(len(c) for c in columns)
    width = 2 * margin[0] + pitch_x * len(columns)
    height = height or 2 * margin[1] + pitch_y * rows
    mask = np.zeros((height, width), np.float32)
    cell = int(max(pitch_x, pitch_y) * 1.4)
    for ci, col in enumerate(columns):
        cx = width - margin[0] - pitch_x * ci - pitch_x / 2
        bend = 0.0
        for ri, ch in enumerate(col):
            cy = margin[1] + pitch_y * ri + pitch_y / 2
            size, angle, dx, dy = char, 0.0, 0.0, 0.0
            if rng is not None:
                size = round(char * (1 + rng.uniform(-scale_jitter, scale_jitter)))
                angle = float(rng.uniform(-tilt, tilt))
                dx, dy = (float(v) for v in rng.uniform(-jitter, jitter, 2))
                bend += float(rng.normal(0.0, drift)) if drift else 0.0
                dx += bend
            g = glyph(key, ch, size, cell, angle=angle, shift=(dx, dy))
            _paste_max(mask, g, round(cx - cell / 2), round(cy - cell / 2))
    return mask


def _paste_max(dst: np.ndarray, src: np.ndarray, x: int, y: int) -> None:
    """dst[y:, x:] = max(dst, src) over the overlapping region (in place)."""
    h, w = src.shape
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, dst.shape[1]), min(y + h, dst.shape[0])
    if x1 > x0 and y1 > y0:
        region = dst[y0:y1, x0:x1]
        np.maximum(region, src[y0 - y:y1 - y, x0 - x:x1 - x], out=region)


def morph(mask: np.ndarray, radius: int) -> np.ndarray:
    """Dilate (radius > 0) or erode (radius < 0) a mask with an elliptical kernel."""
    if radius == 0:
        return mask
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * abs(radius) + 1,) * 2)
    return cv2.dilate(mask, k) if radius > 0 else cv2.erode(mask, k)


# ---------------------------------------------------------------- textures
def fractal_noise(rng: np.random.Generator, h: int, w: int,
                  scales: tuple[int, ...] = (64, 16, 4), falloff: float = 0.5) -> np.ndarray:
    """Multi-scale value noise (H, W) float32 normalised to 0–1.

    One Gaussian grid per scale (cell size in px), bicubically upsampled; scale i gets
    weight ``falloff ** i``.
    """
    acc = np.zeros((h, w), np.float32)
    for i, s in enumerate(scales):
        grid = rng.standard_normal((h // s + 3, w // s + 3)).astype(np.float32)
        big = cv2.resize(grid, ((w // s + 3) * s, (h // s + 3) * s), interpolation=cv2.INTER_CUBIC)
        acc += (falloff ** i) * big[s:s + h, s:s + w]
    lo, hi = float(acc.min()), float(acc.max())
    return (acc - lo) / max(hi - lo, 1e-6)


def streaks(rng: np.random.Generator, h: int, w: int, *, vertical: bool = True,
            length: int = 60) -> np.ndarray:
    """Fibre-like streaks (H, W) float32 0–1: noise stretched ``length`` px along one axis."""
    if vertical:
        grid = rng.standard_normal((h // length + 2, w)).astype(np.float32)
        big = cv2.resize(grid, (w, (h // length + 2) * length), interpolation=cv2.INTER_LINEAR)
    else:
        grid = rng.standard_normal((h, w // length + 2)).astype(np.float32)
        big = cv2.resize(grid, ((w // length + 2) * length, h), interpolation=cv2.INTER_LINEAR)
    big = big[:h, :w]
    lo, hi = float(big.min()), float(big.max())
    return (big - lo) / max(hi - lo, 1e-6)


def cracks(rng: np.random.Generator, h: int, w: int, count: int,
           thickness: int = 1) -> np.ndarray:
    """Mask (H, W) float32 0/1 of ``count`` random-walk cracks across the surface."""
    out = np.zeros((h, w), np.uint8)
    for _ in range(count):
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        heading = rng.uniform(0, 2 * np.pi)
        pts = []
        for _ in range(int(rng.integers(8, 30))):
            pts.append((int(x), int(y)))
            heading += rng.normal(0, 0.45)
            step = rng.uniform(6, 18)
            x, y = x + step * np.cos(heading), y + step * np.sin(heading)
        cv2.polylines(out, [np.array(pts, np.int32)], False, 255, thickness, cv2.LINE_AA)
    return out.astype(np.float32) / 255.0


def speckles(rng: np.random.Generator, h: int, w: int, density: float,
             max_radius: int = 2) -> np.ndarray:
    """Mask (H, W) float32 0–1 of ``density`` x H x W / 1000 random dots."""
    out = np.zeros((h, w), np.uint8)
    for _ in range(int(density * h * w / 1000)):
        centre = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        cv2.circle(out, centre, int(rng.integers(0, max_radius + 1)), 255, -1, cv2.LINE_AA)
    return out.astype(np.float32) / 255.0


def tint(gray: np.ndarray, low: tuple[int, int, int], high: tuple[int, int, int]) -> np.ndarray:
    """Map a (H, W) 0–1 field to RGB float32 0–255 between colours ``low`` and ``high``."""
    lo, hi = np.array(low, np.float32), np.array(high, np.float32)
    return lo + gray[..., None] * (hi - lo)


def apply_ink(ground: np.ndarray, mask: np.ndarray, ink: tuple[int, int, int],
              opacity: float = 1.0) -> np.ndarray:
    """Composite ``ink`` colour over ``ground`` (H, W, 3 float 0–255) with coverage ``mask``."""
    a = np.clip(mask * opacity, 0.0, 1.0)[..., None]
    return ground * (1 - a) + np.array(ink, np.float32) * a


def blur(img: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur with standard deviation ``sigma`` px (no-op for sigma <= 0)."""
    return cv2.GaussianBlur(img, (0, 0), sigma) if sigma > 0 else img


def add_noise(rng: np.random.Generator, img: np.ndarray, std: float) -> np.ndarray:
    """Add per-pixel Gaussian noise of ``std`` grey levels (same for all channels)."""
    noise = rng.standard_normal(img.shape[:2]).astype(np.float32) * std
    return img + (noise[..., None] if img.ndim == 3 else noise)


def to_image(img: np.ndarray, *, levels: int = 256) -> Image.Image:
    """RGB (or L) Pillow image from a float 0–255 array, optionally quantised to ``levels``."""
    arr = np.clip(np.rint(img), 0, 255)
    if levels < 256:
        step = 256 / levels
        arr = np.clip(np.floor(arr / step) * step + step / 2, 0, 255)
    return Image.fromarray(arr.astype(np.uint8), "RGB" if arr.ndim == 3 else "L")


def fit_long_side(img: Image.Image, long_side: int) -> Image.Image:
    """Downscale (Lanczos) so the longer side is at most ``long_side`` px."""
    scale = long_side / max(img.size)
    if scale >= 1:
        return img
    return img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))),
                      Image.Resampling.LANCZOS)
