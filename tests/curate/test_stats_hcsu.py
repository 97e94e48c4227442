"""``heritage-eval stats hcsu`` on the real sample, the bundled demo and bad input."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

from PIL import Image

from heritage_eval.cli.main import main
from heritage_eval.curate.stats.glossary import english
from tests.conftest import realdata

REAL = realdata("hcsu")
DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"


def stats(data: str | os.PathLike[str], out: Path, *extra: str) -> int:
    return main(["stats", "hcsu", "--data", str(data), "--out", str(out), *extra])


def shared_chars_reference(root: Path) -> int:
    """Characters that two or more classes write, straight from the annotation files."""
    by_char: dict[str, set[str]] = defaultdict(set)
    for domain in ("bei", "tie"):
        for rec in json.loads((root / f"{domain}_annotations.json").read_text("utf-8")):
            by_char[rec["char"]].add(f"{domain}/{rec['calligrapher']}-{rec['script_type']}")
    return sum(1 for classes in by_char.values() if len(classes) >= 2)


def test_real_sample_images_per_class(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert stats(REAL, out, "--no-figures") == 0
    doc = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    # realdata README: 佚名-隶书 27, 李斯-篆书 28, 文徵明-楷书 27, 王羲之-行书 27
    assert {k: v["images"] for k, v in doc["classes"].items()} == {
        "Bei/佚名-隶书": 27, "Bei/李斯-篆书": 28, "Tie/文徵明-楷书": 27, "Tie/王羲之-行书": 27}
    assert doc["counts"]["images"] == 109 and doc["counts"]["classes"] == 4
    # realdata README: "30 characters shared between classes"
    assert doc["counts"]["shared_characters"] == 30 == shared_chars_reference(Path(REAL))
    bei = doc["domains"]["Bei"]
    assert bei["scripts"] == {"篆书": 28, "隶书": 27}
    assert bei["dynasty_by_script"] == {"秦": {"篆书": 28}, "东汉": {"隶书": 27}}
    assert doc["classes"]["Tie/王羲之-行书"]["calligrapher_en"] == "Wang Xizhi"
    sizes = [Image.open(p).size for p in sorted((Path(REAL) / "tie").rglob("*.png"))]
    assert doc["domains"]["Tie"]["width_px"]["max"] == max(w for w, _ in sizes)
    assert doc["domains"]["Tie"]["height_px"]["min"] == min(h for _, h in sizes)
    md = (out / "classes.md").read_text(encoding="utf-8")
    assert "| Bei    | 李斯-篆书" in md


def test_demo_collection_and_figures(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert stats(DEMO, out) == 0
    doc = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    # demo annotation files: 5 typeface classes per domain, 14 images each
    assert doc["counts"]["images"] == 140 and doc["counts"]["classes"] == 10
    assert set(v["images"] for v in doc["classes"].values()) == {14}
    assert doc["domains"]["Bei"]["scripts"] == {"圆体": 14, "宋体": 14, "黑体": 42}
    assert doc["domains"]["Tie"]["scripts"] == {"仿宋": 14, "宋体": 28, "楷书": 28}
    assert doc["domains"]["Bei"]["dynasties"] == {"(none)": 70}
    assert doc["counts"]["shared_characters"] == shared_chars_reference(DEMO)
    for name in ("fig_scripts_dynasties.png", "fig_classes.png"):
        with Image.open(out / name) as im:
            assert im.format == "PNG" and im.size[0] > 400


def test_bad_images_and_records_are_listed(tmp_path: Path) -> None:
    root = tmp_path / "hcsu"
    cls = root / "bei" / "甲-楷书"
    cls.mkdir(parents=True)
    Image.new("RGB", (64, 80), "white").save(cls / "一_1.png")
    (cls / "一_2.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    base = {"calligrapher": "甲", "script_type": "楷书", "quality": "clear"}
    records = [{"filename": "甲-楷书/一_1.png", "char": "一", **base},
               {"filename": "甲-楷书/一_2.png", "char": "一", **base},
               {"filename": "甲-楷书/一_3.png", "char": "一", **base},
               {"filename": "甲-楷书/二_1.png", "calligrapher": "甲"}]
    (root / "bei_annotations.json").write_text(json.dumps(records, ensure_ascii=False),
                                               encoding="utf-8")
    out = tmp_path / "out"
    assert stats(root, out, "--no-figures") == 1
    doc = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert doc["classes"]["Bei/甲-楷书"]["images"] == 1
    assert doc["classes"]["Bei/甲-楷书"]["unusable"] == 2
    problems = {p["where"]: p["reason"] for p in doc["problems"]}
    assert "corrupt or unreadable image" in problems[str((cls / "一_2.png").resolve())]
    assert "image file not found" in problems[str((cls / "一_3.png").resolve())]
    assert "invalid or missing field(s)" in problems["bei_annotations.json record 3"]
    assert doc["n_problems"] == 3


def test_missing_release_is_a_usage_error(tmp_path: Path) -> None:
    assert stats(tmp_path, tmp_path / "out") == 2
    assert not (tmp_path / "out").exists()


def test_english_labels_for_figures_without_cjk_font() -> None:
    # HCSU paper's script names; calligrapher names from the records' calligrapher_en
    assert english("行书") == "Running" and english("隶书") == "Clerical"
    assert english("东晋") == "Eastern Jin"
    assert english("王羲之-行书") == "王羲之-Running"
    assert english("王羲之", "Wang Xizhi") == "Wang Xizhi"
    assert english("Bei") == "Bei"
