"""``heritage-eval stats ancient-bench`` on the real sample, the bundled demo and bad input."""

from __future__ import annotations

import json
import os
import struct
import unicodedata
import zlib
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval import __version__
from heritage_eval.cli.main import main
from tests.conftest import realdata

REAL = realdata("ancient_bench")
DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"


def stats(data: str | os.PathLike[str], out: Path, *extra: str) -> int:
    return main(["stats", "ancient-bench", "--data", str(data), "--out", str(out), *extra])


def reference_chars(text: str) -> int:
    """Characters left once whitespace and Unicode punctuation are dropped: the official
    normalisation for text without placeholders, tags or runs of ▢ / 〇."""
    return sum(1 for c in text if not c.isspace()
               and not unicodedata.category(c).startswith("P"))


def png_header_only(path: Path, width: int, height: int) -> None:
    """A PNG whose IHDR declares ``width`` x ``height`` with one tiny IDAT: the header
    is valid, decoding the pixels would fail (a decompression-bomb-sized declaration)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                     + chunk(b"IDAT", zlib.compress(b"\x00")) + chunk(b"IEND", b""))


def test_real_sample_counts_per_medium(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert stats(REAL, out, "--no-figures") == 0
    doc = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    # lines of each conv.jsonl (realdata README: 20 oracle glyphs, 8 + 2 stele, 3 + 1 pages)
    assert {k: v["images"] for k, v in doc["media"].items()} == {
        "oracle_bone_artifacts": 20, "inscription_rubbings": 10, "calligraphys": 4}
    assert doc["counts"] == {"media": 3, "lines": 34, "images": 34, "bad_items": 0}
    for medium in ("oracle_bone_artifacts", "inscription_rubbings", "calligraphys"):
        folder = Path(REAL) / medium
        lines = [json.loads(x) for x in (folder / "conv.jsonl").read_text("utf-8").splitlines()
                 if x.strip()]
        chars = sorted(reference_chars(x["human_gt"]) for x in lines)
        sizes = [Image.open(folder / "images" / x["image"]).size for x in lines]
        rec = doc["media"][medium]
        assert (rec["characters"]["min"], rec["characters"]["max"]) == (chars[0], chars[-1])
        assert rec["width_px"]["max"] == max(w for w, _ in sizes)
        assert rec["height_px"]["min"] == min(h for _, h in sizes)
    # by hand: 20 single glyphs; calligraphy pages of 63, 72, 76, 84 characters
    assert doc["media"]["oracle_bone_artifacts"]["characters"] == {
        "n": 20, "min": 1, "median": 1, "max": 1, "mean": 1.0}
    assert doc["media"]["calligraphys"]["characters"]["median"] == 74  # (72 + 76) / 2
    assert doc["version"] == __version__ and doc["tool"] == "heritage-eval"
    assert doc["source"]["data"] == str(Path(REAL).resolve())
    assert sorted(doc["files"]) == sorted(p.name for p in out.iterdir())
    md = (out / "table2_media.md").read_text(encoding="utf-8")
    assert "| Oracle " in md and "| Overall " in md
    csv_rows = (out / "table2_media.csv").read_text(encoding="utf-8").splitlines()
    assert csv_rows[1].startswith("Oracle,oracle_bone_artifacts,20,0,1,1,1,")


def test_demo_collection_and_figures(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert stats(DEMO, out) == 0
    doc = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert doc["counts"]["images"] == 27  # 9 media x 3 rendered images
    assert len(doc["media"]) == 9
    # by hand: 長樂未央 / 壽如金石 / 千秋萬歲; 高山流水 / 海納百川有容乃大 / 雲深不知處
    assert doc["media"]["seals"]["characters"] == {"n": 3, "min": 4, "median": 4, "max": 4,
                                                   "mean": 4.0}
    cliff = doc["media"]["cliff_carvings"]["characters"]
    assert (cliff["min"], cliff["median"], cliff["max"]) == (4, 5, 8)
    for name in ("fig_media.png", "fig_text_length.png", "fig_resolution.png"):
        with Image.open(out / name) as im:
            assert im.format == "PNG" and im.size[0] > 400 and im.size[1] > 300


def test_bad_lines_and_images_are_listed_and_the_run_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "release"
    seals = root / "seals"
    seals.mkdir(parents=True)
    Image.new("L", (30, 40), 255).save(seals / "good.png")
    (seals / "corrupt.png").write_bytes(b"this is not an image")
    png_header_only(seals / "huge.png", 20_000, 20_000)  # 400 Mpx declared
    conv = seals / "conv.jsonl"
    conv.write_text("\n".join([
        '{"image": "good.png", "human_gt": "長樂，未央", "institution": "Museum A"}',
        '{"image": "x.png", "human_gt": ',
        '{"image": "corrupt.png", "human_gt": "千秋", "institution": "Library B"}',
        '{"image": "missing.png", "human_gt": "萬歲"}',
        '{"image": "huge.png", "human_gt": "壽"}']) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert stats(root, out, "--no-figures") == 1  # written, but bad items found
    doc = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    problems = {p["where"]: p["reason"] for p in doc["problems"]}
    assert problems[f"{conv}:2"].startswith("malformed JSON")
    assert problems[f"{conv}:4"].startswith("image file not found")
    assert "unreadable image" in problems[str(seals / "corrupt.png")]
    assert doc["n_problems"] == 3
    rec = doc["media"]["seals"]
    assert rec["images"] == 2 and rec["bad_items"] == 3 and rec["lines"] == 5
    assert rec["largest"] == "20000x20000"  # header read, nothing decoded
    # characters of lines with a ground truth: 4 (punctuation dropped), 2, 2, 1
    assert rec["characters"]["n"] == 4 and rec["characters"]["max"] == 4
    assert rec["institutions"] == {"Library B": 1, "Museum A": 1}
    csv_row = (out / "table2_media.csv").read_text(encoding="utf-8").splitlines()[1]
    assert csv_row.startswith("Seal,seals,2,3,") and csv_row.endswith(",2")  # 2 institutions


def test_out_folder_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    assert stats(DEMO, out) == 2
    assert "is not empty; nothing was written" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert stats(DEMO, out, "--overwrite", "--media", "seals,Stele", "--no-figures") == 0
    doc = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert list(doc["media"]) == ["seals", "inscription_rubbings"]  # paper order
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_usage_errors_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert stats(tmp_path / "nowhere", out) == 2
    assert "not found" in capsys.readouterr().err
    assert stats(DEMO / "seals", out) == 2  # a medium folder, not the release root
    assert "pass its parent" in capsys.readouterr().err
    assert stats(DEMO, out, "--media", "papyrus") == 2
    assert "papyrus" in capsys.readouterr().err
    assert not out.exists()
