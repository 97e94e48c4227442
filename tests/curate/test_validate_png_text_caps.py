"""``validate`` names the size cap an image meets while its header is read (issue 22,
item 4: "with the cap in the message"), over the kind "PNG text chunks".

Found by the issue-22 audit: a 0.2 MB PNG whose zTXt chunk decompresses to 200 MB was a
named ``max_png_text`` error row in ``run``, but ``validate`` called it "not an image file
Pillow can identify", which sends the user looking for a broken file rather than at the
cap (docs/limits.md) that refused it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, PngImagePlugin

from heritage_eval.cli.main import main
from heritage_eval.curate.validate.imagecheck import inspect_image

MIB = 1024 * 1024
DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"


def _png(path: Path, chunk: str, text_bytes: int) -> Path:
    """A 16 x 16 PNG with one text chunk of ``chunk`` kind holding ``text_bytes``."""
    info = PngImagePlugin.PngInfo()
    if chunk == "iTXt":
        info.add_itxt("comment", "A" * text_bytes, zip=True)
    else:
        info.add_text("comment", "A" * text_bytes, zip=chunk == "zTXt")
    Image.new("RGB", (16, 16), "white").save(path, format="PNG", pnginfo=info)
    return path


@pytest.mark.parametrize("chunk", ["tEXt", "zTXt", "iTXt"])
@pytest.mark.parametrize("text_bytes", [MIB // 2, 2 * MIB])
def test_a_text_chunk_over_the_cap_is_named(chunk: str, text_bytes: int,
                                            tmp_path: Path) -> None:
    check = inspect_image(_png(tmp_path / "t.png", chunk, text_bytes))
    if text_bytes <= MIB:  # under the default 1 MiB cap (docs/limits.md): a fine image
        assert (check.code, check.size) == (None, (16, 16))
        return
    assert check.code == "image-too-large"
    assert check.message is not None
    assert "max_png_text cap of 1,048,576 bytes (1 MiB)" in check.message
    assert "HERITAGE_EVAL_MAX_PNG_TEXT" in check.message


def test_a_file_that_is_no_image_keeps_its_wording(tmp_path: Path) -> None:
    path = tmp_path / "x.png"
    path.write_bytes(b"not a png at all")
    check = inspect_image(path)
    assert check.code == "image-unreadable"
    assert check.message == f"not an image file Pillow can identify: {path}"


def test_validate_ancient_bench_names_the_cap(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ab" / "seals"
    shutil.copytree(DEMO / "seals", root)
    first = json.loads((root / "conv.jsonl").read_text(encoding="utf-8").splitlines()[0])
    _png(root / "images" / first["image"], "zTXt", 4 * MIB)  # replaces the first image
    rc = main(["validate", "ancient-bench", "--data", str(tmp_path / "ab"),
               "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1
    line = next(x for x in out.splitlines() if "conv.jsonl:1:" in x)
    assert "error[image-too-large]" in line and "max_png_text cap" in line
