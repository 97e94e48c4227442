"""Every EXIF orientation x every Pillow mode through the image code (docs/images.md).

The expected pixels are computed here, independently of ``core.images``: the source
array is turned with numpy (``np.rot90`` / flips / transpose, one per EXIF orientation, from
the EXIF 2.3 table of tag 0x0112) and converted to RGB by hand-written formulas per mode
(palette look-up, alpha over white, ``(255 - C)(255 - K) / 255`` for CMYK, the JFIF
BT.601 matrix for YCbCr, the 16-bit scaling rule of the docs). Sizes are checked against
``PIL.ImageOps.exif_transpose`` where Pillow's own answer is sound (not for an unloaded
TIFF: Pillow 13 turns those twice, see docs/images.md) and against the numpy turn always.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from PIL import Image, ImageOps

from heritage_eval.core import fileinfo
from heritage_eval.core.images import ImageLoadError, SizeCap, header_size, load_image
from heritage_eval.core.record import image_ref

Array = NDArray[np.generic]

# EXIF 2.3, tag 0x0112: how the stored rows/columns map to the displayed image.
TURN: dict[int, Callable[[Array], Array]] = {
    1: lambda a: a,
    2: lambda a: a[:, ::-1],                    # mirrored left-right
    3: lambda a: a[::-1, ::-1],                 # 180 degrees
    4: lambda a: a[::-1],                       # mirrored top-bottom
    5: lambda a: a.swapaxes(0, 1),              # transpose
    6: lambda a: np.rot90(a, -1),               # 90 degrees clockwise
    7: lambda a: a.swapaxes(0, 1)[::-1, ::-1],  # transverse
    8: lambda a: np.rot90(a, 1),                # 90 degrees counter-clockwise
}

# Lossless containers that store each mode and an EXIF orientation.
FORMATS: dict[str, tuple[str, ...]] = {
    "1": ("PNG", "TIFF"), "L": ("PNG", "TIFF", "WEBP"), "LA": ("PNG", "TIFF"),
    "P": ("PNG", "TIFF"), "P+transparency": ("PNG",), "I;16": ("PNG", "TIFF"),
    "I": ("TIFF",), "F": ("TIFF",), "RGB": ("PNG", "TIFF", "WEBP"),
    "RGBA": ("PNG", "TIFF", "WEBP"), "CMYK": ("TIFF",), "YCbCr": ("TIFF",),
}
#: Largest allowed difference per channel: 0 where the reference is exact integer
#: arithmetic; 1 where Pillow rounds a product (alpha composite, CMYK, YCbCr matrix).
TOLERANCE = {"LA": 1, "RGBA": 1, "P+transparency": 0, "CMYK": 1, "YCbCr": 2}


def _source(mode: str, h: int, w: int, rng: np.random.Generator
            ) -> tuple[Image.Image, NDArray[np.uint8]]:
    """A random image of ``mode`` and its expected RGB (not yet turned), by hand."""
    def u8(*shape: int) -> NDArray[np.uint8]:
        return rng.integers(0, 256, shape, dtype=np.uint8)

    def over_white(colour: NDArray[np.float64], alpha: NDArray[np.float64]
                   ) -> NDArray[np.uint8]:
        a = alpha[..., None] / 255.0
        return np.rint(colour * a + 255.0 * (1 - a)).astype(np.uint8)

    if mode == "1":
        bits = rng.integers(0, 2, (h, w)).astype(bool)
        return Image.fromarray(bits), np.repeat(bits[..., None] * np.uint8(255), 3, -1)
    if mode == "L":
        a = u8(h, w)
        return Image.fromarray(a), np.repeat(a[..., None], 3, -1)
    if mode == "LA":
        a = u8(h, w, 2)
        grey = np.repeat(a[..., :1].astype(np.float64), 3, -1)
        return Image.fromarray(a, "LA"), over_white(grey, a[..., 1].astype(np.float64))
    if mode in ("P", "P+transparency"):
        idx = rng.integers(0, 16, (h, w)).astype(np.uint8)
        palette = u8(16, 3)
        im = Image.fromarray(idx, "P")
        im.putpalette(palette.tobytes())
        expected = palette[idx]
        if mode == "P+transparency":
            im.info["transparency"] = 3
            expected[idx == 3] = 255
        return im, expected
    if mode == "I;16":
        a16 = rng.integers(0, 65536, (h, w)).astype(np.uint16)
        grey8 = np.rint(a16 * (255 / 65535)).astype(np.uint8)  # docs: 16-bit scaled
        return Image.fromarray(a16), np.repeat(grey8[..., None], 3, -1)
    if mode == "I":
        a32 = rng.integers(0, 65536, (h, w)).astype(np.int32)
        a32.flat[0] = 65535  # peak over 255: the 16-bit rule applies (docs)
        grey8 = np.rint(a32 * (255 / 65535)).astype(np.uint8)
        return Image.fromarray(a32, "I"), np.repeat(grey8[..., None], 3, -1)
    if mode == "F":
        af = rng.random((h, w)).astype(np.float32)  # in [0, 1): scaled by 255 (docs)
        grey8 = np.clip(np.rint(af.astype(np.float64) * 255), 0, 255).astype(np.uint8)
        return Image.fromarray(af, "F"), np.repeat(grey8[..., None], 3, -1)
    if mode == "RGB":
        a = u8(h, w, 3)
        return Image.fromarray(a), a
    if mode == "RGBA":
        a = u8(h, w, 4)
        return Image.fromarray(a), over_white(a[..., :3].astype(np.float64),
                                              a[..., 3].astype(np.float64))
    if mode == "CMYK":
        a = u8(h, w, 4).astype(np.float64)
        rgb = (255 - a[..., :3]) * (255 - a[..., 3:]) / 255
        return Image.fromarray(a.astype(np.uint8), "CMYK"), np.rint(rgb).astype(np.uint8)
    if mode == "YCbCr":
        a = u8(h, w, 3)
        y, cb, cr = (a[..., i].astype(np.float64) for i in range(3))
        rgb = np.stack([y + 1.402 * (cr - 128),
                        y - 0.344136 * (cb - 128) - 0.714136 * (cr - 128),
                        y + 1.772 * (cb - 128)], -1)
        return Image.fromarray(a, "YCbCr"), np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    raise AssertionError(mode)


def _save(im: Image.Image, path: Path, fmt: str, orientation: int | None) -> None:
    kw: dict[str, object] = {}
    if orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = orientation
        kw["exif"] = exif.tobytes()
    if fmt == "WEBP":
        kw["lossless"] = True
    if "transparency" in im.info:
        kw["transparency"] = im.info["transparency"]
    im.save(path, fmt, **kw)


CASES = [(mode, fmt) for mode, fmts in FORMATS.items() for fmt in fmts]


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize(("mode", "fmt"), CASES, ids=[f"{m}-{f}" for m, f in CASES])
def test_every_mode_and_orientation_sends_the_turned_converted_pixels(
        tmp_path: Path, mode: str, fmt: str, orientation: int) -> None:
    rng = np.random.default_rng(orientation * 1000 + len(mode) * 10 + len(fmt))
    im, rgb = _source(mode, 4, 7, rng)  # 7 wide, 4 high: a quarter turn shows
    path = tmp_path / f"img.{fmt.lower()}"
    _save(im, path, fmt, orientation)
    expected = np.ascontiguousarray(TURN[orientation](rgb))
    shown = (expected.shape[1], expected.shape[0])

    got = load_image(path)
    assert got.mode == "RGB"
    assert got.size == shown
    diff = np.abs(np.asarray(got, dtype=np.int16) - expected.astype(np.int16))
    assert int(diff.max()) <= TOLERANCE.get(mode, 0)
    # the recorded size is the displayed one
    assert header_size(path) == shown
    if fmt != "TIFF":  # Pillow's own turn agrees (not on an unloaded TIFF: docs)
        with Image.open(path) as raw:
            assert ImageOps.exif_transpose(raw).size == shown
    fileinfo.clear_memory()
    ref = image_ref(path, tmp_path, sent=list(got.size))
    assert (ref.width, ref.height) == shown == (ref.sent_width, ref.sent_height)


@pytest.mark.parametrize("orientation", [None, 0, 9, 65535])
def test_absent_or_invalid_orientation_leaves_the_image(tmp_path: Path,
                                                        orientation: int | None) -> None:
    im, rgb = _source("RGB", 3, 5, np.random.default_rng(1))
    path = tmp_path / "img.png"
    _save(im, path, "PNG", orientation)
    assert np.array_equal(np.asarray(load_image(path)), rgb)  # Pillow ignores them too
    assert header_size(path) == (5, 3)


def test_png_exif_after_the_image_data_counts(tmp_path: Path) -> None:
    """An eXIf chunk after IDAT (allowed by the PNG 1.5 extensions) is found by the
    header reader without decoding, as the loader finds it after decoding."""
    im, rgb = _source("L", 4, 7, np.random.default_rng(2))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    data = buf.getvalue()
    exif = Image.Exif()
    exif[0x0112] = 6
    body = exif.tobytes()[6:] if exif.tobytes().startswith(b"Exif") else exif.tobytes()
    import struct
    import zlib
    chunk = (struct.pack(">I", len(body)) + b"eXIf" + body
             + struct.pack(">I", zlib.crc32(b"eXIf" + body)))
    iend = data.rindex(b"IEND") - 4
    path = tmp_path / "late.png"
    path.write_bytes(data[:iend] + chunk + data[iend:])
    expected = np.rot90(rgb, -1)
    assert np.array_equal(np.asarray(load_image(path)), expected)
    assert header_size(path) == (4, 7)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=st.integers(1, 90), h=st.integers(1, 90), orientation=st.integers(1, 8),
       fmt=st.sampled_from(["JPEG", "PNG", "TIFF"]), mode=st.sampled_from(["L", "RGB", "CMYK"]),
       side=st.integers(1, 100), pixels=st.one_of(st.none(), st.integers(1, 5000)),
       seed=st.integers(0, 2**16))
def test_sent_size_is_the_cap_of_the_displayed_size(
        tmp_path_factory: pytest.TempPathFactory, w: int, h: int, orientation: int,
        fmt: str, mode: str, side: int, pixels: int | None, seed: int) -> None:
    """Whatever the size, orientation, format (JPEG decodes at 1/2-1/8 via ``draft``)
    and cap, the size sent is ``cap.target_size`` of the displayed size."""
    if mode == "CMYK" and fmt == "PNG":
        mode = "RGB"
    im, _ = _source(mode, h, w, np.random.default_rng(seed))
    path = tmp_path_factory.mktemp("cap") / f"img.{fmt.lower()}"
    _save(im, path, fmt, orientation)
    shown = (h, w) if orientation >= 5 else (w, h)
    cap = SizeCap(max_side=side, max_pixels=pixels)
    assert header_size(path) == shown
    got = load_image(path, cap=cap)
    assert got.size == cap.target_size(*shown) and got.mode == "RGB"


@settings(max_examples=40, deadline=None)
@given(level=st.integers(0, 255), orientation=st.integers(1, 8),
       side=st.integers(8, 40))
def test_capped_jpeg_keeps_a_flat_colour(tmp_path_factory: pytest.TempPathFactory,
                                         level: int, orientation: int, side: int) -> None:
    """A flat grey JPEG stays that grey, within JPEG's own rounding (2 levels), at any
    draft scale and orientation: the reduction never shifts or darkens the picture."""
    path = tmp_path_factory.mktemp("flat") / "flat.jpg"
    _save(Image.new("L", (160, 96), level), path, "JPEG", orientation)
    got = np.asarray(load_image(path, cap=SizeCap(max_side=side)), dtype=np.int16)
    assert int(np.abs(got - level).max()) <= 2


@pytest.mark.parametrize(("mode", "values", "expected"), [
    # docs/images.md, high bit depth: hand-computed 8-bit values
    ("I", [0, 100, 255], [0, 100, 255]),            # 8-bit data stored wide: as is
    ("I", [0, 256, 65535], [0, 1, 255]),            # peak > 255: x 255/65535
    ("I", [-5, 70000, 65535], [0, 255, 255]),       # clipped to [0, 255]
    ("F", [0.0, 0.5, 1.0], [0, 128, 255]),          # peak <= 1: x 255
    ("F", [0.0, 2.0, 300.0], [0, 2, 255]),          # else rounded, clipped
    ("F", [float("nan"), 0.5, float("inf")], [0, 128, 255]),  # NaN 0, inf white
    ("F", [float("-inf"), 1.0, 0.25], [0, 255, 64]),
])
def test_high_bit_depth_rule(tmp_path: Path, mode: str, values: list[float],
                             expected: list[int]) -> None:
    dtype = np.int32 if mode == "I" else np.float32
    path = tmp_path / "deep.tif"
    Image.fromarray(np.array([values], dtype=dtype), mode).save(path)
    got = np.asarray(load_image(path))[0, :, 0]
    assert got.tolist() == expected


def _valid_bytes(fmt: str) -> bytes:
    im, _ = _source("RGB" if fmt != "GIF" else "P", 9, 11, np.random.default_rng(3))
    buf = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6
    im.save(buf, fmt, **({"exif": exif.tobytes()} if fmt != "GIF" else {}))
    return buf.getvalue()


VALID = {fmt: _valid_bytes(fmt) for fmt in ("PNG", "JPEG", "TIFF", "WEBP", "GIF", "BMP")}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(sorted(VALID)), data=st.data())
def test_damaged_files_give_a_clear_error_never_a_crash(
        tmp_path_factory: pytest.TempPathFactory, fmt: str, data: st.DataObject) -> None:
    """Truncated or byte-flipped files of every format: ``load_image`` returns an RGB
    image or raises ``ImageLoadError`` naming the file (whatever Pillow raised inside);
    ``header_size`` returns a size or ``None``; never another exception."""
    raw = bytearray(VALID[fmt])
    cut = data.draw(st.integers(0, len(raw)), label="cut")
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 255)),
                               max_size=6), label="flips")
    for pos, byte in flips:
        raw[pos] = byte
    path = tmp_path_factory.mktemp("bad") / f"bad.{fmt.lower()}"
    path.write_bytes(bytes(raw[:cut]))
    size = header_size(path)
    assert size is None or (isinstance(size, tuple) and len(size) == 2)
    try:
        img = load_image(path, cap=SizeCap(max_side=8))
    except ImageLoadError as exc:
        assert path.name in str(exc)
    else:
        assert img.mode == "RGB" and max(img.size) <= 8


def test_header_size_of_an_unreadable_name_is_none(tmp_path: Path) -> None:
    assert header_size(tmp_path / "missing.png") is None
    assert header_size(tmp_path) is None  # a folder
    (tmp_path / "x.pdf").write_bytes(b"%PDF-1.4")
    assert header_size(tmp_path / "x.pdf") is None  # PDFs have no header size
