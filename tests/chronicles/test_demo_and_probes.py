"""The bundled Chronicles-OCR demo set and the parity fixtures are what they claim to be.

Runs without the plug-in: the demo's layout (official fields, seven script folders,
image sizes read from the PNG headers), the probe files are exactly what
``make_probes.py`` writes today, and the stored official outputs agree with the probes'
hand-computed geometry (numbers from the official judge, ``fixtures/official``).
"""

from __future__ import annotations

import json
import struct
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.chronicles import make_probes
from tests.chronicles.probe_kit import iou, load_demo, near_threshold, scaled_boxes

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"
OFFICIAL = HERE / "fixtures" / "official"
SCRIPTS = ["甲骨文", "金文", "篆书", "隶书", "楷书", "行书", "草书"]


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (bytes 16..24)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def _judged(tag: str) -> dict[str, dict[str, Any]]:
    path = OFFICIAL / "judge_results" / tag / "results.jsonl"
    rows = map(json.loads, path.read_text(encoding="utf-8").splitlines())
    return {Path(r["image_path"]).stem: r["judge_results"] for r in rows}


def test_demo_layout_matches_the_official_format() -> None:
    rows = list(load_demo().values())
    assert [r["font_type"] for r in rows] == [s for s in SCRIPTS for _ in range(3)]
    for row in rows:
        image = DEMO / row["image_path"]
        assert row["image_path"].startswith(f"images/{row['font_type']}/"), row
        assert image.is_file(), image
        if row["font_type"] in SCRIPTS[:3]:
            assert list(row) == ["image_path", "font_type", "annotation", "spotting",
                                 "width", "height"]
            assert _png_size(image) == (row["width"], row["height"])
            for it in row["spotting"]:
                b = it["bbox"]
                assert list(it) == ["bbox", "modern_char"] and list(b) == ["x1", "y1", "x2", "y2"]
                assert all(isinstance(v, int) for v in b.values())
                assert 0 <= b["x1"] < b["x2"] <= row["width"]
                assert 0 <= b["y1"] < b["y2"] <= row["height"]
        else:
            assert list(row) == ["image_path", "font_type", "annotation"]
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert total < 400_000


def test_probe_files_are_what_make_probes_writes() -> None:
    files, manifest = make_probes.build(load_demo())
    for tag, lines in files.items():
        path = make_probes.OUT / tag / "results.jsonl"
        assert path.read_text(encoding="utf-8") == "".join(f"{line}\n" for line in lines), tag
    stored = make_probes.MANIFEST.read_text(encoding="utf-8").splitlines()
    assert [json.loads(m) for m in stored] == manifest


def test_official_outputs_cover_every_probe_tag() -> None:
    tags = sorted(make_probes.TAGS)
    summary = json.loads((OFFICIAL / "summary.json").read_text(encoding="utf-8"))
    assert list(summary) == ["评分分析", "按字体分析"]
    for rows in summary.values():
        assert [r["模型名称"] for r in rows] == tags
    assert sorted(p.name for p in (OFFICIAL / "judge_results").iterdir()) == tags
    # judge.py scores exactly the predicted rows that are in the ground truth
    gt = {r["image_path"] for r in load_demo().values()}
    for tag in tags:
        pred = make_probes.OUT / tag / "results.jsonl"
        predicted = {json.loads(x)["image_path"] for x in pred.read_text("utf-8").splitlines()}
        assert set(_judged_paths(tag)) == predicted & gt


def _judged_paths(tag: str) -> list[str]:
    path = OFFICIAL / "judge_results" / tag / "results.jsonl"
    return [json.loads(x)["image_path"] for x in path.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("where", ["above", "exact", "below"])
@pytest.mark.parametrize("box", [(510, 112, 730, 288), (0, 0, 7, 9), (100, 40, 131, 57)])
def test_near_threshold_boxes(box: tuple[int, int, int, int], where: str) -> None:
    for grow in (False, True):
        try:
            found = near_threshold(box, where, grow=grow)
        except ValueError:
            assert where == "exact"  # not every size has a box at exactly 3/4
            continue
        r = iou(box, tuple(found))  # type: ignore[arg-type]
        want = {"above": r > Fraction(3, 4), "exact": r == Fraction(3, 4),
                "below": r < Fraction(3, 4)}[where]
        assert want, (box, found, r)


def _predicted_boxes(tag: str, stem: str) -> list[tuple[float, float, float, float]]:
    path = make_probes.OUT / tag / "results.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if Path(row["image_path"]).stem == stem:
            items = row["infer_results"]["字符检测"]["extract"]["items"]
            return [tuple(it["bbox"]) for it in items]
    raise KeyError(stem)


def test_official_spotting_at_the_iou_threshold() -> None:
    """The official judge on the threshold probes, against IoUs computed exactly."""
    gt = [b for b, _ in scaled_boxes(load_demo()["jiaguwen-01"])]
    assert gt[0] == (510.0, 112.0, 730.0, 288.0)  # 102*5, 28*4, 146*5, 72*4
    # probe-a: box 1 just above 3/4, box 2 just below: 6 TP, 1 FP, 1 FN, F1 = 6/7
    boxes = _predicted_boxes("probe-a", "jiaguwen-01")
    assert Fraction(3, 4) < iou(gt[0], boxes[0]) < Fraction(3, 4) + Fraction(1, 1000)
    assert Fraction(3, 4) - Fraction(1, 1000) < iou(gt[1], boxes[1]) < Fraction(3, 4)
    spot = _judged("probe-a")["jiaguwen-01"]["字符检测"]["score"]
    assert spot["spotting"] == {"tp": 6, "fp": 1, "fn": 1}
    assert spot["score"] == pytest.approx(6 / 7, abs=1e-12)  # P = R = 6/7
    # probe-b: box 1 at IoU exactly 3/4 counts (`>=`, the README says `>`)
    assert iou(gt[0], _predicted_boxes("probe-b", "jiaguwen-01")[0]) == Fraction(3, 4)
    exact = _judged("probe-b")["jiaguwen-01"]["字符检测"]["score"]
    assert exact["spotting"] == {"tp": 7, "fp": 0, "fn": 0} and exact["score"] == 1.0
    # probe-c: grown box just below 3/4 (FP + FN), shifted box just above (TP)
    boxes = _predicted_boxes("probe-c", "jiaguwen-01")
    assert iou(gt[0], boxes[0]) < Fraction(3, 4) < iou(gt[1], boxes[1])
    assert _judged("probe-c")["jiaguwen-01"]["字符检测"]["score"]["spotting"] == \
        {"tp": 6, "fp": 1, "fn": 1}
    # every GT character a placeholder: detection 1, spotting 0 (perfect answer)
    perfect = _judged("perfect")["jiaguwen-03"]["字符检测"]["score"]
    assert (perfect["detection_f1"], perfect["spotting_f1"]) == (1.0, 0.0)


def test_official_rounding_is_round_half_even_on_the_float() -> None:
    """``summarize.py`` writes ``round(v * 100, 1)``: the partial tag's 行书 Parsing mean is
    (0.875 + 0.75) / 2 = 13/16, i.e. 81.25 exactly, written 81.2 (half up would be 81.3);
    its Average (13/16 + 1) / 2 = 90.625 is written 90.6."""
    summary = json.loads((OFFICIAL / "summary.json").read_text(encoding="utf-8"))
    row = next(r for r in summary["按字体分析"] if r["模型名称"] == "partial")
    assert (row["行书/Parsing"], row["行书/Average"]) == (81.2, 90.6)
    assert round((0.875 + 0.75) / 2 * 100, 1) == 81.2
