"""The four judges of the chronicles-ocr plug-in (chronicles_ocr.judges / .boxes).

Expected values are computed by hand (IoU, F1, edit distances) from the rules of the
official ``Opensource/judges/*.py`` (23a37c6), written out in docs/chronicles-ocr.md; the
Levenshtein distance is checked against the textbook dynamic programme written here.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("chronicles_ocr")

from chronicles_ocr.boxes import Item, iou, match, reference_items
from chronicles_ocr.judges import (
    judge_classification,
    judge_parsing,
    judge_recognition,
    judge_spotting,
)
from chronicles_ocr.protocol import CORRECTED, OFFICIAL

CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5)


def spot(refs: list[dict[str, Any]], preds: list[dict[str, Any]], protocol: Any = OFFICIAL,
         size: int = 1000) -> dict[str, Any]:
    """The spotting judge on a ``size`` x ``size`` image (1000: pixels = the 0–1000 frame)."""
    row = {"spotting": refs, "width": size, "height": size}
    return judge_spotting({"items": preds}, row, protocol)


def ref(x1: float, y1: float, x2: float, y2: float, char: str = "天") -> dict[str, Any]:
    return {"bbox": {"x1": x1, "y1": y1, "x2": x2, "y2": y2}, "modern_char": char}


def pred(box: list[float], char: str = "天") -> dict[str, Any]:
    return {"bbox": box, "char": char}


def test_iou_by_hand() -> None:
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert iou((0, 0, 10, 10), (10, 0, 20, 10)) == 0.0   # touching edges
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((5, 5, 5, 9), (0, 0, 10, 10)) == 0.0      # an empty box


@given(st.integers(1, 60), st.integers(1, 200))
def test_iou_exactly_at_the_threshold(a: int, h: int) -> None:
    # reference 4a x h, prediction 3a x h sharing its corner: IoU = 3ah / 4ah = 3/4 exactly
    refs, preds = [ref(0, 0, 4 * a, h)], [pred([0, 0, 3 * a, h])]
    assert spot(refs, preds, OFFICIAL)["spotting_f1"] == 1.0    # official: iou >= 0.75
    assert spot(refs, preds, CORRECTED)["spotting_f1"] == 0.0   # README: iou > 0.75


@given(st.integers(2, 60), st.integers(1, 200))
def test_iou_just_above_and_below(a: int, h: int) -> None:
    # (3a + 1) / 4a > 3/4 matches under both; (3a - 1) / 4a < 3/4 under neither
    refs = [ref(0, 0, 4 * a, h)]
    for protocol in (OFFICIAL, CORRECTED):
        assert spot(refs, [pred([0, 0, 3 * a + 1, h])], protocol)["score"] == 1.0
        assert spot(refs, [pred([0, 0, 3 * a - 1, h])], protocol)["score"] == 0.0


def test_duplicates_are_one_match_and_false_positives() -> None:
    got = spot([ref(0, 0, 100, 100)], [pred([0, 0, 100, 100])] * 3)
    # TP 1, FP 2, FN 0: P = 1/3, R = 1, F1 = 2PR/(P+R) = 0.5
    assert got["spotting"] == {"tp": 1, "fp": 2, "fn": 0}
    assert got["spotting_f1"] == pytest.approx(0.5)


def test_matching_is_greedy_by_iou_not_optimal() -> None:
    # IoU(P1, G1) = 95/105 = .905, IoU(P1, G2) = 90/110 = .818, IoU(P2, G1) = 90/110,
    # IoU(P2, G2) = 75/125 = .6: greedy takes P1-G1 first, then nothing is left for P2
    # (an optimal matching would pair P1-G2 and P2-G1): TP 1, FP 1, FN 1 -> F1 0.5
    refs = [ref(0, 0, 100, 100), ref(0, 15, 100, 115)]
    preds = [pred([0, 5, 100, 105]), pred([0, -10, 100, 90])]
    got = spot(refs, preds)
    assert got["detection"] == {"tp": 1, "fp": 1, "fn": 1}
    assert got["detection_f1"] == pytest.approx(0.5)


def test_characters_must_agree_for_spotting_not_for_detection() -> None:
    got = spot([ref(0, 0, 100, 100, "天")], [pred([0, 0, 100, 100], "地")])
    assert got["detection_f1"] == 1.0 and got["spotting_f1"] == 0.0


def test_unk_boxes_leave_spotting_but_count_in_detection() -> None:
    refs = [ref(0, 0, 100, 100, "天"), ref(200, 0, 300, 100, "□")]
    preds = [pred([0, 0, 100, 100], "天"), pred([200, 0, 300, 100], "[UNK]"),
             pred([400, 0, 500, 100], "")]
    got = spot(refs, preds)
    # detection: 3 predictions, 2 references, 2 matched -> P 2/3, R 1, F1 0.8
    assert got["detection"] == {"tp": 2, "fp": 1, "fn": 0}
    assert got["detection_f1"] == pytest.approx(0.8)
    # spotting: the [UNK] / "" / □ boxes leave both sides: 天 against 天 -> 1.0
    assert got["spotting"] == {"tp": 1, "fp": 0, "fn": 0}


def test_nothing_to_find_and_nothing_found_scores_zero() -> None:
    # official _f1: 0 whenever there is no true positive (kept under both protocols)
    assert spot([ref(0, 0, 100, 100, "[UNK]")], [])["score"] == 0.0
    assert spot([], [])["detection_f1"] == 0.0


def test_reference_boxes_in_every_shape_and_scaled() -> None:
    row = {"spotting": [
        {"bbox": {"x1": 20, "y1": 10, "x2": 40, "y2": 30}, "text": "天"},
        {"bbox": [20, 10, 20, 20], "modern_char": "地"},     # [x, y, w, h] with modern_char
        {"bbox": [20, 10, 40, 30], "text": "玄"},             # corners without it
        {"bbox": [40, 30, 20, 20], "text": "黄"},             # x2 < x1: read as x, y, w, h
        {"bbox": [0, 0, 0, 5], "text": "宇"},                 # no area: dropped
        {"bbox": {"x1": 1}, "text": "宙"},                    # unreadable: dropped
    ]}
    got = [(i.box, i.char) for i in reference_items(row)]
    assert got == [((20, 10, 40, 30), "天"), ((20, 10, 40, 30), "地"),
                   ((20, 10, 40, 30), "玄"), ((40, 30, 60, 50), "黄")]
    # a 200 x 100 image: x * 1000/200, y * 1000/100; the prediction is that box exactly
    judged = judge_spotting({"items": [pred([100, 100, 200, 300])]},
                            {**row, "width": 200, "height": 100}, OFFICIAL)
    assert judged["spotting"] == {"tp": 1, "fp": 0, "fn": 3}
    # without width/height there is no reference box: every prediction is an FP
    assert judge_spotting({"items": [pred([0, 0, 9, 9])]}, row, OFFICIAL)["n_gt"] == 0


def test_match_counts_by_hand() -> None:
    a = Item((0, 0, 10, 10), "天")
    assert match([], [a], 0.75, same_char=True, strict=False).as_dict() == \
        {"tp": 0, "fp": 0, "fn": 1}
    assert match([a, a], [a], 0.75, same_char=True, strict=True).f1() == pytest.approx(2 / 3)


def levenshtein(a: str, b: str) -> int:
    """The textbook dynamic programme (unit costs)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, start=1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[len(b)]


@given(st.text(alphabet=CJK, max_size=12), st.text(alphabet=CJK, max_size=12))
def test_parsing_is_one_minus_ned(gt: str, answer: str) -> None:
    got = judge_parsing({"extracted_text": answer}, gt, OFFICIAL)
    if not gt:
        assert got["score"] == (1.0 if not answer else 0.0)
    else:
        want = 1 - levenshtein(answer, gt) / max(len(answer), len(gt))
        assert got["score"] == pytest.approx(max(0.0, want))


@given(st.text(alphabet=CJK, min_size=1, max_size=10), st.integers(1, 4),
       st.sampled_from(["[UNK]", "<UNK>", "[unk]"]))
def test_unk_in_the_reference_official_vs_corrected(gt: str, k: int, token: str) -> None:
    reference = token * k + gt  # k unreadable characters, then the readable ones
    answer = {"extracted_text": gt}
    # official: brackets go with the punctuation first, the letters UNK (3 per token)
    # stay: distance 3k over max(len(gt), len(gt) + 3k)
    official = judge_parsing(answer, reference, OFFICIAL)
    assert official["score"] == pytest.approx(1 - 3 * k / (len(gt) + 3 * k))
    assert official["len_gt"] == len(gt) + 3 * k
    # corrected: the placeholders are removed before the punctuation: a perfect answer
    assert judge_parsing(answer, reference, CORRECTED)["score"] == 1.0


def test_parsing_drops_space_punctuation_and_blocks() -> None:
    got = judge_parsing({"extracted_text": "天 地，\n玄\\n黄。"}, "天地□玄黄", OFFICIAL)
    assert got["score"] == 1.0 and got["len_gt"] == 4


def test_recognition_and_classification_by_hand() -> None:
    assert judge_recognition({"char": "“王”"}, "王")["score"] == 1.0   # edge marks
    assert judge_recognition({"char": "「王」"}, "王")["score"] == 0.0  # not in that set
    assert judge_recognition({"char": "王"}, "")["error"] == "no_gt"
    assert judge_classification({"category": "楷书"}, " 楷书 ")["score"] == 1.0
    assert judge_classification({}, "楷书")["score"] == 0.0


def test_a_stored_extract_of_another_shape_raises_as_the_official_judge() -> None:
    with pytest.raises(TypeError):
        judge_parsing({"extracted_text": 5}, "天", OFFICIAL)
    with pytest.raises(TypeError):
        judge_classification(["楷书"], "楷书")
    assert judge_classification("", "楷书")["score"] == 0.0  # falsy: read as {}
