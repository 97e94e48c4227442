"""Spotting (字符检测) probe answers: one rule per (model tag, ancient image).

Each answer's expected official numbers are in ``fixtures/official/judge_results``; the
comment of each rule says what it probes (README of the fixtures has the table).
Images: J1–J3 = jiaguwen-01..03, B1–B3 = jinwen-01..03, Z1–Z3 = zhuanshu-01..03.
J1, B1 and Z1 have whole-number boxes on the 0–1000 grid.
"""

from __future__ import annotations

import json
from typing import Any

from tests.chronicles.probe_kit import (
    API_ERROR,
    Answer,
    exact_items,
    extracted_items,
    item,
    near_threshold,
    scaled_boxes,
    spot_answer,
    whole,
)

Rows = dict[str, dict[str, Any]]


def _box(row: dict[str, Any], k: int) -> tuple[int, int, int, int]:
    return whole(scaled_boxes(row)[k][0])


def _shift_above(box: tuple[int, int, int, int]) -> list[int]:
    """``box`` moved right by the largest whole dx whose IoU stays above 3/4:
    (w - dx) / (w + dx) > 3/4  <=>  dx < w / 7."""
    x1, y1, x2, y2 = box
    dx = (x2 - x1 - 1) // 7
    return [x1 + dx, y1, x2 + dx, y2]


def _with(items: list[dict[str, Any]], k: int, **changes: Any) -> list[dict[str, Any]]:
    out = [dict(it) for it in items]
    out[k].update(changes)
    return out


def perfect(rows: Rows) -> dict[str, Answer]:
    """Every GT box (rounded to the grid) with its character, ``[UNK]`` for placeholders."""
    return {stem: spot_answer("exact_boxes", exact_items(row))
            for stem, row in rows.items() if "spotting" in row}


def probe_a(rows: Rows) -> dict[str, Answer]:
    j1, j2, j3 = rows["jiaguwen-01"], rows["jiaguwen-02"], rows["jiaguwen-03"]
    b1, b2 = rows["jinwen-01"], rows["jinwen-02"]
    z2 = rows["zhuanshu-02"]
    j1_items = _with(exact_items(j1), 0, bbox=near_threshold(_box(j1, 0), "above"))
    j1_items = _with(j1_items, 1, bbox=near_threshold(_box(j1, 1), "below"))
    b1_items = exact_items(b1)
    b2_items = _with(_with(exact_items(b2), 1, char="賜"), 2, char="貝")
    z2_bad = exact_items(z2)
    z2_bad[2] = dict(z2_bad[2], bbox=[str(v) for v in z2_bad[2]["bbox"]])
    return {
        # box 1 IoU just above 0.75 (TP), box 2 just below (FP + FN)
        "jiaguwen-01": spot_answer("iou_just_above_and_just_below", j1_items),
        # GT placeholder box labelled "<unk>", plus an unmatched box labelled "□":
        # placeholders leave the spotting sets (no FP), stay in detection
        "jiaguwen-02": spot_answer("unk_labels_and_unk_extra_box",
                                   [*exact_items(j2, unk="<unk>"),
                                    item(8, [0, 0, 150, 120], "□")]),
        # every GT character is a placeholder: detection 1, spotting 0 (nothing to match)
        "jiaguwen-03": spot_answer("all_placeholder_gt_exact_boxes", exact_items(j3)),
        # the first box twice: one TP, one FP
        "jinwen-01": spot_answer("duplicate_box", [*b1_items, dict(b1_items[0], idx=8)]),
        # right boxes, traditional forms 賜 貝 for 赐 贝: detection TP, spotting FP + FN
        "jinwen-02": spot_answer("right_box_wrong_char", b2_items),
        # an empty list: parsed, no boxes, F1 0 (counted)
        "jinwen-03": Answer("no_boxes", "[]", {"items": []}),
        # prose, no JSON: extraction fails, no `extract` (left out of the averages)
        "zhuanshu-01": Answer("unparseable_output", "图中文字漫漶，无法检测。"),
        # one box with string corners: infer.py's extraction rejects the whole answer
        "zhuanshu-02": Answer("string_coords_in_output",
                              json.dumps(z2_bad, ensure_ascii=False)),
        # a <think> block and a ```json fence around a perfect answer
        "zhuanshu-03": spot_answer("think_and_json_fence", exact_items(rows["zhuanshu-03"]),
                                   "<think>先从右列读起。</think>\n```json\n", "\n```"),
    }


def probe_b(rows: Rows) -> dict[str, Answer]:
    j1, j2 = rows["jiaguwen-01"], rows["jiaguwen-02"]
    b1, b2, b3 = rows["jinwen-01"], rows["jinwen-02"], rows["jinwen-03"]
    z1, z2, z3 = rows["zhuanshu-01"], rows["zhuanshu-02"], rows["zhuanshu-03"]
    pixel = [item(i, [it["bbox"][k] for k in ("x1", "y1", "x2", "y2")], it["modern_char"])
             for i, it in enumerate(j2["spotting"], start=1)]
    xywh = [item(i, [x1, y1, x2 - x1, y2 - y1], ch) for i, ((x1, y1, x2, y2), ch)
            in enumerate(((whole(b), c) for b, c in scaled_boxes(b1)), start=1)]
    b2_items = _with(exact_items(b2), 0, bbox=[-30, *exact_items(b2)[0]["bbox"][1:]])
    b2_items = _with(b2_items, 1, bbox=[*b2_items[1]["bbox"][:3], 1200])
    b3_exact = exact_items(b3)
    x1, y1, x2, y2 = b3_exact[3]["bbox"]
    b3_hand = [
        {"idx": 1, "bbox": [str(v) for v in b3_exact[0]["bbox"]], "char": "对"},  # kept
        {"idx": 2, "bbox": b3_exact[1]["bbox"][:3], "char": "扬"},  # 3 corners: dropped
        "休",  # not an object: dropped
        {"idx": 3, "char": "休"},  # no bbox: dropped
        {"idx": 4, "bbox": [x2, y1, x1, y2], "char": "休"},  # x1 > x2: dropped
        {"idx": 5, "bbox": [x1, y1, x2, y2], "char": 5},  # right box, char 5 -> "5"
    ]
    z1_half = [dict(it, bbox=[it["bbox"][0] + 0.5, it["bbox"][1] + 0.5,
                              it["bbox"][2] - 0.5, it["bbox"][3] + 0.5])
               for it in exact_items(z1)]
    z2_items = exact_items(z2)
    z2_items = _with(_with(_with(z2_items, 0, char="千秋"), 1, char=" 秋 "), 2, char="萬")
    z3_items = [{"bbox": it["bbox"], "char": it["char"]} for it in exact_items(z3)]
    return {
        # box 1 IoU exactly 0.75: official `>=` counts it (README says `> 0.75`)
        "jiaguwen-01": spot_answer("iou_exactly_075",
                                   _with(exact_items(j1), 0,
                                         bbox=near_threshold(_box(j1, 0), "exact"))),
        # pixel corners instead of the 0–1000 grid
        "jiaguwen-02": spot_answer("pixel_coordinates", pixel),
        # no boxes where every GT character is a placeholder
        "jiaguwen-03": Answer("no_boxes_all_placeholder_gt", "[]", {"items": []}),
        # [x, y, w, h] boxes: some have x2 < x1, so infer.py rejects the answer
        "jinwen-01": Answer("xywh_boxes", json.dumps(xywh, ensure_ascii=False)),
        # corners -30 and 1200 clamped to 0 and 1000 by the extraction
        "jinwen-02": spot_answer("out_of_range_coords_clamped", b2_items),
        # hand-written extract with malformed items the judge itself filters
        "jinwen-03": Answer("hand_malformed_items", json.dumps(b3_hand, ensure_ascii=False),
                            {"items": b3_hand}, source="hand"),
        # .5 corners: rounded half to even by the extraction
        "zhuanshu-01": spot_answer("half_coords_round_half_even", z1_half),
        # "千秋" (two characters), " 秋 " (stripped), "萬" (traditional) for 千 秋 万
        "zhuanshu-02": spot_answer("multichar_whitespace_traditional", z2_items),
        # JSON inside prose, items without "idx" (numbered by position)
        "zhuanshu-03": Answer("json_in_prose_without_idx",
                              "检测结果如下：\n" + json.dumps(z3_items, ensure_ascii=False)
                              + "\n以上为全部字符。", extracted_items(z3_items)),
    }


def probe_c(rows: Rows) -> dict[str, Answer]:
    j1, j2, j3 = rows["jiaguwen-01"], rows["jiaguwen-02"], rows["jiaguwen-03"]
    b1, z1 = rows["jinwen-01"], rows["zhuanshu-01"]
    j1_items = _with(exact_items(j1), 0, bbox=near_threshold(_box(j1, 0), "below", grow=True))
    j1_items = _with(j1_items, 1, bbox=_shift_above(_box(j1, 1)))
    j2_items = [*exact_items(j2)[:-2], item(6, [0, 0, 150, 120], "王"),
                item(7, [0, 880, 160, 1000], "雨"), item(8, [420, 900, 560, 1000], "其")]
    j3_items = exact_items(j3)
    j3_items = [dict(j3_items[0], char=""), {"idx": 2, "bbox": j3_items[1]["bbox"]},
                dict(j3_items[2], char="UNK")]
    b1_items = exact_items(b1)
    lower = b1_items[0]["bbox"]
    b1_items.append(item(8, [lower[0], lower[1] + 20, lower[2], lower[3] + 20], "子"))
    z1_hand = exact_items(z1)
    z1_hand[0] = dict(z1_hand[0], bbox=[500.4, 90.2, 690.0, 280.0])
    z1_hand.append(item(9, [-50, -40, 60, 80], "受"))
    return {
        # grown box just below 0.75 (FP + FN), shifted box just above (TP)
        "jiaguwen-01": spot_answer("grown_box_below_shifted_box_above", j1_items),
        # last two GT boxes missed, three boxes where nothing is written
        "jiaguwen-02": spot_answer("missing_and_extra_boxes", j2_items),
        # perfect boxes, characters "", missing, "UNK": detection 1, spotting 0
        "jiaguwen-03": spot_answer("empty_missing_and_bare_unk_chars", j3_items),
        # the first box again 20 units lower (IoU ~0.78): one TP, one FP
        "jinwen-01": spot_answer("duplicate_box_lower_iou", b1_items),
        # hand-written extract {}: no items, F1 0 (counted)
        "jinwen-02": Answer("hand_empty_extract", "[]", {}, source="hand"),
        # hand-written extract that is a non-empty list: the judge raises, score 0.0
        # without detection/spotting F1 (left out of the averages)
        "jinwen-03": Answer("hand_extract_not_a_dict", "[]", [{"items": []}], source="hand"),
        # hand-written float corners and a negative box (the judge neither rounds nor
        # clamps)
        "zhuanshu-01": Answer("hand_float_and_negative_coords",
                              json.dumps(z1_hand, ensure_ascii=False), {"items": z1_hand},
                              source="hand"),
        # no 字符检测 entry in infer_results ("no_infer"; left out of the averages)
        "zhuanshu-02": Answer("task_missing", source="absent"),
        # an API failure record (no extract)
        "zhuanshu-03": Answer("api_error", error=API_ERROR),
    }
