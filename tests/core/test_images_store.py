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
