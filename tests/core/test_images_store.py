"""Image loading (caps, PDFs, corrupt files, huge images) and atomic run-folder writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.core.images import ImageLoadError, SizeCap, load_image
from heritage_eval.core.store import RunFolder, read_jsonl


def test_size_cap_arithmetic() -> None:
    # 5,795 x 16,745 (largest release image) with a 2,048 long side:
    # scale = 2048 / 16745 -> width int(5795 * 0.12230...) = 708.
    assert SizeCap(max_side=2048).target_size(5795, 16745) == (708, 2048)
    # 4,000 x 3,000 with max 3,000,000 px: scale = sqrt(3e6 / 12e6) = 0.5 -> 2000 x 1500.
    assert SizeCap(max_pixels=3_000_000).target_size(4000, 3000) == (2000, 1500)
    # Never upscale.
    assert SizeCap(max_side=4096, max_pixels=10**8).target_size(100, 50) == (100, 50)


def test_large_jpeg_beyond_pillow_default_limit_loads_capped(tmp_path: Path) -> None:
    # 10,000 x 9,000 = 90 Mpx is above Pillow's default 89.5 Mpx bomb limit.
    p = tmp_path / "huge.jpg"
    Image.new("L", (10_000, 9_000), 255).save(p, quality=50)
    img = load_image(p, cap=SizeCap(max_side=1000))
    assert img.size == (1000, 900) and img.mode == "RGB"


def test_pdf_page_is_rendered(tmp_path: Path) -> None:
    p = tmp_path / "doc.pdf"
    Image.new("RGB", (300, 200), (0, 0, 0)).save(p, "PDF", resolution=100)
    img = load_image(p, cap=SizeCap(max_side=500))
    # 300x200 px at 100 dpi = 3x2 in; rendered at 200 dpi = 600x400, capped to 500x333.
    assert img.size == (500, 333)
    assert img.getpixel((250, 160)) == (0, 0, 0)
    with pytest.raises(ImageLoadError, match="has 1 page"):
        load_image(p, page=3)


def test_corrupt_and_missing_images_name_the_file(tmp_path: Path) -> None:
    good = tmp_path / "ok.png"
    Image.new("RGB", (50, 50)).save(good)
    trunc = tmp_path / "trunc.png"
    trunc.write_bytes(good.read_bytes()[:40])
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image at all")
    for bad in (trunc, junk):
        with pytest.raises(ImageLoadError, match=bad.name):
            load_image(bad)
    with pytest.raises(ImageLoadError, match="not found"):
        load_image(tmp_path / "missing.jpg")


def test_transparent_png_is_composited_on_white(tmp_path: Path) -> None:
    p = tmp_path / "t.png"
    Image.new("RGBA", (4, 4), (0, 0, 0, 0)).save(p)
    assert load_image(p).getpixel((0, 0)) == (255, 255, 255)


def test_run_folder_writes_are_atomic_and_readable(tmp_path: Path) -> None:
    run = RunFolder(tmp_path / "run")
    run.write_samples([{"id": "a", "gt": "君諱"}, {"id": "b"}])
    run.write_json("summary.json", {"x": 0.5})
    assert read_jsonl(run.path("samples.jsonl"))[0] == {"id": "a", "gt": "君諱"}
    assert json.loads(run.path("summary.json").read_text(encoding="utf-8")) == {"x": 0.5}
    # Chinese stays readable (no \\u escapes) and no temporary files are left behind.
    assert "君諱" in run.path("samples.jsonl").read_text(encoding="utf-8")
    assert sorted(p.name for p in run.root.iterdir()) == ["samples.jsonl", "summary.json"]


def test_failed_write_keeps_previous_version(tmp_path: Path) -> None:
    run = RunFolder(tmp_path)
    run.write_json("summary.json", {"v": 1})

    class Boom:
        pass

    with pytest.raises(TypeError):
        run.write_json("summary.json", {"v": Boom()})
    assert json.loads((tmp_path / "summary.json").read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_run_folder_files_get_the_usual_permissions(tmp_path: Path) -> None:
    import os

    mask = os.umask(0o022)
    try:
        RunFolder(tmp_path).write_json("summary.json", {})
    finally:
        os.umask(mask)
    # 0o666 & ~0o022 = 0o644 (not mkstemp's 0o600)
    assert (tmp_path / "summary.json").stat().st_mode & 0o777 == 0o644


def test_sixteen_bit_greyscale_png_keeps_its_tones(tmp_path: Path) -> None:
    import numpy as np

    # A 16-bit ramp 0, 32896, 65535 must become 0, 128, 255 (x 255/65535, rounded):
    # 32896 * 255 / 65535 = 128.0. Pillow's own RGB conversion would clip all to 255.
    arr = np.array([[0, 32896, 65535]], dtype=np.uint16)
    p = tmp_path / "g16.png"
    Image.fromarray(arr).save(p)
    img = load_image(p)
    assert [img.getpixel((x, 0)) for x in range(3)] == [(0, 0, 0), (128, 128, 128),
                                                        (255, 255, 255)]


# --- decompression bombs and huge scans (issue 10, item 3) -----------------------------
def write_zero_png(path: Path, width: int, height: int) -> Path:
    """An all-zero 1-bit greyscale PNG written row by row through zlib (never held in
    memory): 21,000 x 21,000 is about 55 MB of rows, a few dozen KB on disk."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    comp = zlib.compressobj(9)
    row = b"\x00" * (1 + (width + 7) // 8)  # filter byte + packed bits
    idat = b"".join(comp.compress(row) for _ in range(height)) + comp.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat)
                     + chunk(b"IEND", b""))
    return path


def test_decompression_bomb_is_refused_from_the_header(tmp_path: Path) -> None:
    # guards against: a 441 Mpx PNG of a few dozen KB being decoded (2.9 GB, 52 s before)
    import time

    from heritage_eval.core.images import MAX_PIXELS, header_size

    bomb = write_zero_png(tmp_path / "bomb.png", 21_000, 21_000)
    assert bomb.stat().st_size < 100_000
    start = time.perf_counter()
    with pytest.raises(ImageLoadError) as exc:
        load_image(bomb, cap=SizeCap(max_side=2048))
    assert time.perf_counter() - start < 1.0
    # 21,000 x 21,000 = 441,000,000 > 400,000,000: the file and its size are named
    assert str(exc.value) == (
        f"image {bomb} is 21,000 x 21,000 = 441,000,000 pixels, over the 400,000,000-pixel "
        "decode limit (a decompression bomb or a scan far larger than any release image): "
        "refused without decoding")
    assert MAX_PIXELS == 400_000_000
    assert header_size(bomb) == (21_000, 21_000)  # the original size, for the record


def test_pillow_guard_is_left_alone_for_other_code() -> None:
    # guards against: importing the toolkit switching off Pillow's bomb guard process-wide
    import heritage_eval.core.images  # noqa: F401

    assert Image.MAX_IMAGE_PIXELS == 89_478_485  # Pillow 13 default: 1024**3 // 4 // 3


# VmHWM: this process's own peak resident memory (getrusage's ru_maxrss would include
# the parent's at fork time: it survives exec)
_PEAK_SCRIPT = """
import re, sys
from heritage_eval.core.images import SizeCap, load_image
img = load_image(sys.argv[1], cap=SizeCap(max_side=2048))
peak = re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)
print(img.size[0], img.size[1], img.mode, img.getpixel((10, 10))[0],
      img.getpixel((384, 1024))[0], peak)
"""


@pytest.mark.parametrize("suffix", [".png", ".jpg"])
def test_huge_greyscale_scan_loads_capped_with_bounded_memory(tmp_path: Path,
                                                              suffix: str) -> None:
    # guards against: the release's 97 Mpx rubbings needing 3-4 full-size copies in memory
    import subprocess
    import sys
    import warnings

    if not Path("/proc/self/status").is_file():
        pytest.skip("peak memory is read from /proc/self/status (Linux)")

    from PIL import ImageDraw

    from heritage_eval.core.images import header_size

    page = Image.new("L", (6_000, 16_000), 255)
    ImageDraw.Draw(page).rectangle((2_000, 6_000, 4_000, 10_000), fill=0)
    path = tmp_path / f"scan{suffix}"
    page.save(path, quality=80) if suffix == ".jpg" else page.save(path, compress_level=1)
    del page
    # 96 Mpx: over Pillow's default 89.5 Mpx warning, under our 400 Mpx cap: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert header_size(path) == (6_000, 16_000)
    done = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, str(path)], check=True,
                          capture_output=True, text=True, timeout=120)
    w, h, mode, corner, centre, peak_kib = done.stdout.split()
    # long side 16,000 -> 2,048: scale 0.128, width int(6,000 x 0.128) = 768; white
    # corner, black centre (the rectangle covers the middle third)
    assert (int(w), int(h), mode, int(corner), int(centre)) == (768, 2048, "RGB", 255, 0)
    # full-size RGB alone would be 288 MB; greyscale decoded once is 96 MB (PNG), a
    # JPEG draft at 1/4 scale about 6 MB. Peak resident memory, interpreter included:
    # (measured: about 125 MB for the PNG, 33 MB for the JPEG; 580 MB before the fix)
    assert int(peak_kib) < (300_000 if suffix == ".png" else 150_000)
