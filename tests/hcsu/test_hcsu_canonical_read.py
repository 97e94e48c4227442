"""The fast paths of canonicalization (issue 11, goal 4) against independent references.

- ``read_bgr``: OpenCV decodes only plain 8-bit PNGs; every other file goes through
  ``load_image`` (Pillow), so the pixels and the error messages are Pillow's.
- ``filter_components``: 16-bit and 32-bit OpenCV labels against scikit-image's
  ``label`` (8-connectivity = ``connectivity=2``), an independent labelling.
- ``trim_letterbox``: bars decided by integer sums, the float computation of the old code
  where the difference is within rounding of the tolerance (values computed by hand).
- ``corner_mean``: OpenCV sums against hand-computed means.
"""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, PngImagePlugin
from skimage.measure import label

from heritage_eval.benchmarks.hcsu.canonical_steps import (
    corner_mean,
    filter_components,
    trim_letterbox,
)
from heritage_eval.benchmarks.hcsu.png_io import plain_png_size, read_bgr
from heritage_eval.core.images import ImageLoadError, load_image

RNG = np.random.default_rng(11)
RGB = RNG.integers(0, 256, (23, 31, 3), dtype=np.uint8)


def _png(img: Image.Image, **save: object) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", **save)
    return buf.getvalue()


def test_plain_png_size_accepts_only_plain_8_bit_pngs() -> None:
    plain = _png(Image.fromarray(RGB))
    assert plain_png_size(plain) == (31, 23)  # (width, height) from IHDR
    assert plain_png_size(_png(Image.fromarray(RGB[:, :, 0]))) == (31, 23)  # grey, type 0
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "x")
    assert plain_png_size(_png(Image.fromarray(RGB), pnginfo=info)) is None  # tEXt chunk
    assert plain_png_size(_png(Image.fromarray(RGB).convert("P"))) is None  # palette
    assert plain_png_size(_png(Image.fromarray(RGB).convert("RGBA"))) is None  # alpha
    assert plain_png_size(_png(Image.fromarray(RGB[:, :, 0].astype(np.uint16) * 257))) is None
    broken = bytearray(plain)
    broken[40] ^= 0xFF  # a byte inside IDAT: its CRC no longer matches
    assert plain_png_size(bytes(broken)) is None
    assert plain_png_size(plain + b"junk") is None  # bytes after IEND
    assert plain_png_size(plain[:-12]) is None  # no IEND
    assert plain_png_size(b"\xff\xd8\xff\xe0" + plain[4:]) is None  # not a PNG signature


def test_plain_png_size_checks_crc_of_every_chunk() -> None:
    """A pHYs chunk (allowed) with a correct CRC passes; with a wrong one it does not."""
    plain = _png(Image.fromarray(RGB))
    body = struct.pack(">IIB", 2835, 2835, 1)
    good = struct.pack(">I", len(body)) + b"pHYs" + body + struct.pack(
        ">I", zlib.crc32(b"pHYs" + body))
    bad = good[:-4] + struct.pack(">I", zlib.crc32(b"pHYs" + body) ^ 1)
    at = 8 + 25  # after the signature and IHDR (13 data bytes + 12)
    assert plain_png_size(plain[:at] + good + plain[at:]) == (31, 23)
    assert plain_png_size(plain[:at] + bad + plain[at:]) is None
    ihdr = bytearray(plain[12:29])  # "IHDR" + 13 data bytes; the last is the interlace
    ihdr[-1] = 1  # Adam7, with a correct CRC: still left to Pillow
    laced = plain[:12] + bytes(ihdr) + struct.pack(">I", zlib.crc32(ihdr)) + plain[33:]
    assert plain_png_size(laced) is None


@pytest.mark.parametrize("kind", ["rgb", "grey", "palette", "rgba", "grey16", "jpeg",
                                  "exif-rotated"])
def test_read_bgr_gives_the_pixels_of_load_image(kind: str, tmp_path: Path) -> None:
    img = Image.fromarray(RGB)
    path = tmp_path / f"x.{'jpg' if kind == 'jpeg' else 'png'}"
    if kind == "rgb":
        img.save(path)
    elif kind == "grey":
        img.convert("L").save(path)
    elif kind == "palette":
        img.convert("P").save(path)
    elif kind == "rgba":
        rgba = img.convert("RGBA")
        rgba.putalpha(Image.fromarray(RGB[:, :, 1]))
        rgba.save(path)
    elif kind == "grey16":
        Image.fromarray(RGB[:, :, 0].astype(np.uint16) * 200).save(path)
    elif kind == "jpeg":
        img.save(path, quality=90)
    else:  # EXIF orientation 6 (rotate 90°): Pillow applies it, so must we
        exif = Image.Exif()
        exif[0x0112] = 6
        img.save(path, exif=exif)
    expected = np.asarray(load_image(path))
    got = read_bgr(str(path))
    assert got.shape == expected.shape and got.dtype == np.uint8
    assert np.array_equal(got[:, :, ::-1], expected)
    if kind == "exif-rotated":
        assert got.shape == (31, 23, 3)  # rotated: width and height swapped


def test_read_bgr_errors_are_load_image_errors(tmp_path: Path) -> None:
    truncated = tmp_path / "t.png"
    truncated.write_bytes(_png(Image.fromarray(RGB))[:60])
    for path in (truncated, tmp_path / "missing.png"):
        with pytest.raises(ImageLoadError) as want:
            load_image(path)
        with pytest.raises(ImageLoadError) as got:
            read_bgr(str(path))
        assert str(got.value) == str(want.value) and str(path) in str(got.value)


@pytest.mark.parametrize("shape", [(64, 48), (600, 500)])  # 16-bit labels; 32-bit labels
def test_filter_components_matches_scikit_image(shape: tuple[int, int]) -> None:
    """600 x 500 has 300 x 250 = 75,000 2x2 blocks, more than 16-bit labels can hold."""
    rng = np.random.default_rng(5)
    ink = np.where(rng.random(shape) < 0.3, 255, 0).astype(np.uint8)
    refined, kept, removed = filter_components(ink, 4)
    labels = label(ink > 0, connectivity=2)  # skimage: 8-connectivity
    areas = np.bincount(labels.ravel())
    big = areas >= 4
    big[0] = False
    assert np.array_equal(refined > 0, big[labels])
    assert (kept, removed) == (int(big.sum()), len(areas) - 1 - int(big.sum()))
    assert set(np.unique(refined)) <= {0, 255}


def test_filter_components_returns_the_mask_itself_when_nothing_is_removed() -> None:
    ink = np.zeros((10, 10), np.uint8)
    ink[2:5, 2:5] = 255  # one 9-pixel component
    refined, kept, removed = filter_components(ink, 9)
    assert refined is ink and (kept, removed) == (1, 0)


@pytest.mark.parametrize(("bar", "cut"), [
    (200, 0),  # |200 - 216| = 16, not > 16: kept (decided by the float fallback)
    (199, 5),  # 17 > 16: letterbox, 5 lines cut
    (232, 0),  # 16 again, on the light side
    (233, 5),
])
def test_letterbox_decision_at_the_tolerance(bar: int, cut: int) -> None:
    """Paper: a 212 / 220 checkerboard (no line of it is flat; the median of every line
    is (212 + 220) / 2 = 216); one 5-line bar of grey ``bar`` on each side in turn."""
    yy, xx = np.mgrid[:60, :50]
    for side in range(4):
        img = np.repeat(np.where((yy + xx) % 2, 220, 212).astype(np.uint8)[:, :, None], 3, 2)
        img[20:40, 20:30] = 0  # ink
        edge = [np.s_[:5], np.s_[-5:], np.s_[:, :5], np.s_[:, -5:]][side]
        img[edge] = bar
        expected = [0, 0, 0, 0]
        expected[side] = cut
        assert trim_letterbox(img)[1] == tuple(expected)


def test_letterbox_median_of_an_even_line() -> None:
    """Inside line (width 50) of 25 pixels at 190 and 25 at 230: median (190 + 230) / 2 =
    210; a bar at 193 differs by 17 (cut), one at 194 by 16 (kept)."""
    for bar, cut in ((193, 4), (194, 0)):
        img = np.full((40, 50, 3), 210, np.uint8)
        img[4, :25], img[4, 25:] = 190, 230
        img[15:25, 20:30] = 0
        img[:4] = bar
        assert trim_letterbox(img)[1] == (cut, 0, 0, 0)


def test_corner_mean_by_hand() -> None:
    gray = np.zeros((40, 60), np.uint8)  # patch side round(0.05 * 40) = 2
    gray[:2, :2], gray[:2, -2:], gray[-2:, :2], gray[-2:, -2:] = 10, 20, 30, 41
    gray[0, 0] = 11  # top-left patch mean (11 + 10 * 3) / 4 = 10.25
    assert corner_mean(gray) == pytest.approx((10.25 + 20 + 30 + 41) / 4, abs=0)
    view = np.pad(gray, 3)[3:-3, 3:-3]  # a strided view gives the same value
    assert corner_mean(view) == corner_mean(gray)
    assert corner_mean(gray.astype(np.float32)) == corner_mean(gray)  # numpy path
    assert cv2.sumElems(gray[:2, :2])[0] == 41  # OpenCV's sum is the exact integer
