"""The official summary's arithmetic, the recognition target and red box, and the loader
of the chronicles-ocr plug-in.

Expected values: the workbook cells are computed by hand from the rules of the official
``summarize.py`` (23a37c6); the demo's recognition targets are those the official
``prompts/referring.py`` picks (listed in fixtures/README.md, B2, from the official
code); pixel positions of the red box follow Pillow's inclusive rectangle with the width
drawn inwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("chronicles_ocr")

from chronicles_ocr.loader import load_release
from chronicles_ocr.official_summary import (
    CLASSIFICATION,
    DETECTION,
    PARSING,
    SHEET_GROUPS,
    SHEET_SCRIPTS,
    SPOTTING,
    cell,
    workbook,
)
from chronicles_ocr.redbox import draw, line_width, pick_target
from PIL import Image

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"


def test_workbook_cells_by_hand() -> None:
    book = workbook({
        "A": [("甲骨文", CLASSIFICATION, 1.0), ("甲骨文", PARSING, 0.5),
              ("甲骨文", DETECTION, 0.9), ("甲骨文", SPOTTING, 0.75),
              ("甲骨文", CLASSIFICATION, 0.0), ("甲骨文", CLASSIFICATION, 0.0),
              ("隶书", CLASSIFICATION, 1.0), ("隶书", PARSING, 0.7)],
        "B": [("草书", CLASSIFICATION, 0.0)]})
    a_groups, b_groups = book.rows[SHEET_GROUPS]
    # ancient: Spotting .75, Parsing .5, Classification 1/3; Average = mean of the three
    assert a_groups == {"模型名称": "A", "平均分_古代/Average": 52.8,
                        "平均分_古代/Spotting": 75.0, "平均分_古代/Recognition": None,
                        "平均分_古代/Parsing": 50.0, "平均分_古代/Classification": 33.3,
                        "平均分_近代/Average": 85.0, "平均分_近代/Parsing": 70.0,
                        "平均分_近代/Classification": 100.0}
    assert b_groups["平均分_近代/Classification"] == 0.0
    assert b_groups["平均分_古代/Average"] is None
    a_scripts = book.rows[SHEET_SCRIPTS][0]
    # columns: tasks and scripts of all models together (no Recognition: nobody has it;
    # 草书 comes from B); Detection is computed but never shown
    assert list(a_scripts) == [
        "模型名称", "平均分/Average", "平均分/Spotting", "平均分/Parsing",
        "平均分/Classification", "甲骨文/Average", "甲骨文/Spotting", "甲骨文/Parsing",
        "甲骨文/Classification", "隶书/Average", "隶书/Parsing", "隶书/Classification",
        "草书/Average", "草书/Parsing", "草书/Classification"]
    # 平均分/Average: the mean of all five cells (1/3, .5, .75, 1, .7) = .65667
    assert a_scripts["平均分/Average"] == 65.7
    assert a_scripts["平均分/Parsing"] == 60.0          # mean of .5 and .7 over scripts
    assert a_scripts["平均分/Classification"] == 66.7   # mean of 1/3 and 1
    assert a_scripts["甲骨文/Average"] == 52.8 and a_scripts["隶书/Average"] == 85.0
    assert a_scripts["草书/Average"] is None and a_scripts["草书/Classification"] is None


def test_cells_round_as_python_rounds_the_float() -> None:
    assert cell(0.8125) == 81.2    # 81.25: a tie, to even
    assert cell(0.90625) == 90.6
    assert cell(None) is None


def test_a_model_without_scores_gets_a_row_of_empty_cells() -> None:
    book = workbook({"blank": [], "A": [("楷书", CLASSIFICATION, 1.0)]})
    blank = book.for_model("blank")
    assert blank[SHEET_GROUPS][0]["平均分_近代/Average"] is None
    assert blank[SHEET_SCRIPTS][0]["楷书/Classification"] is None
    assert [r["模型名称"] for r in book.rows[SHEET_GROUPS]] == ["A", "blank"]  # sorted


def _demo_rows() -> dict[str, dict[str, object]]:
    rows = {}
    for line in (DEMO / "Chronicles_OCR.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[Path(row["image_path"]).stem] = row
    return rows


@pytest.mark.parametrize(("seed", "want"), [
    (42, {"jiaguwen-01": ("癸", 0), "jiaguwen-02": ("占", 1), "jinwen-01": ("宝", 5),
          "jinwen-02": ("赐", 1), "jinwen-03": ("对", 0), "zhuanshu-01": ("昌", 7),
          "zhuanshu-02": ("千", 0), "zhuanshu-03": ("长", 0)}),
    (7, {"jiaguwen-01": "癸", "jiaguwen-02": "吉", "jinwen-01": "子", "jinwen-02": "十",
         "jinwen-03": "休", "zhuanshu-01": "永", "zhuanshu-02": "岁", "zhuanshu-03": "忘"}),
])
def test_recognition_targets_are_the_official_ones(seed: int, want: dict[str, object]
                                                   ) -> None:
    rows = _demo_rows()
    got = {}
    for stem, row in rows.items():
        if row["font_type"] in ("甲骨文", "金文", "篆书") and stem != "jiaguwen-03":
            target = pick_target(row, seed)
            assert target is not None
            got[stem] = (target.char, target.index) if seed == 42 else target.char
    assert got == want
    assert pick_target(rows["jiaguwen-03"], seed) is None  # every glyph a placeholder


@pytest.mark.parametrize(("w", "h", "want"), [
    (100, 100, 3), (1000, 2000, 6), (1250, 1250, 8), (1083, 1083, 6), (5000, 5000, 12)])
def test_red_box_width(w: int, h: int, want: int) -> None:
    # round(0.006 * min(w, h)) (half to even: 7.5 -> 8), clipped to 3..12
    assert line_width(w, h) == want


def test_red_box_pixels(tmp_path: Path) -> None:
    Image.new("RGB", (200, 100), "white").save(tmp_path / "a.png")
    out = draw(tmp_path / "a.png", (10, 10, 50, 40), tmp_path / "boxes")
    with Image.open(out) as im:
        px = im.convert("RGB").load()
        assert px is not None
        red, white = (255, 0, 0), (255, 255, 255)
        # width 3, drawn inwards from the corners (10, 10) and (50, 40)
        assert px[10, 10] == px[12, 12] == px[50, 40] == px[48, 38] == red
        assert px[13, 13] == px[47, 37] == px[9, 9] == px[51, 41] == white
    assert draw(tmp_path / "a.png", (10, 10, 50, 40), tmp_path / "boxes") == out  # reused
    clipped = draw(tmp_path / "a.png", (-5, -5, 500, 500), tmp_path / "boxes")
    with Image.open(clipped) as im:
        px = im.convert("RGB").load()
        assert px is not None
        assert px[0, 0] == px[199, 99] == (255, 0, 0)  # corners clipped to 0..W-1, 0..H-1


def test_loader_turns_bad_lines_into_error_samples(tmp_path: Path) -> None:
    (tmp_path / "images" / "甲骨文").mkdir(parents=True)
    for name in ("a.png", "b.png"):
        Image.new("RGB", (40, 20)).save(tmp_path / "images" / "甲骨文" / name)
    (tmp_path.parent / "outside.png").write_bytes(b"x")
    good = {"image_path": "images/甲骨文/a.png", "font_type": "甲骨文", "annotation": "天",
            "spotting": [{"bbox": [1, 1, 5, 5], "modern_char": "天"}], "width": 40,
            "height": 20}
    lines = [json.dumps(good, ensure_ascii=False), "{not json", "[1, 2]",
             json.dumps({**good, "font_type": "宋体", "image_path": "x.png"}),
             json.dumps(good, ensure_ascii=False),                       # repeated path
             json.dumps({**good, "image_path": "images/missing.png", "font_type": "楷书"}),
             json.dumps({**good, "image_path": "../outside.png", "font_type": "楷书"}),
             json.dumps({**good, "image_path": "images/甲骨文/b.png", "width": "wide"}),
             ""]
    (tmp_path / "Chronicles_OCR.jsonl").write_text("\n".join(lines), encoding="utf-8")
    release = load_release(tmp_path, seed=42)
    by_id = {s.id: s for s in release.samples}
    good_ids = [f"images/甲骨文/a.png#{t}" for t in
                ("classification", "parsing", "spotting", "recognition")]
    assert all(by_id[i].load_error is None for i in good_ids)
    target = by_id[good_ids[3]].target
    assert target is not None and target.char == "天"
    assert "not valid JSON" in (by_id["line-2"].load_error or "")
    assert "not a JSON object" in (by_id["line-3"].load_error or "")
    assert "宋体" in (by_id["x.png#row@4"].load_error or "")
    assert "line 1" in (by_id["images/甲骨文/a.png#row@5"].load_error or "")
    assert by_id["images/missing.png#parsing"].load_error is not None
    assert by_id["../outside.png#classification"].load_error is not None
    # a width that is not a number spoils spotting only
    assert "width" in (by_id["images/甲骨文/b.png#spotting"].load_error or "")
    assert by_id["images/甲骨文/b.png#parsing"].load_error is None
    assert release.rows == 8 and release.info()["load_errors"] == len(
        [s for s in release.samples if s.load_error])
    only = load_release(tmp_path, seed=42, tasks=("parsing",), scripts=("oracle_bone",))
    assert {s.id for s in only.samples if not s.load_error} == {
        "images/甲骨文/a.png#parsing", "images/甲骨文/b.png#parsing"}
