"""The four rule-based judges: one score in [0, 1] per image and task.

Each takes the task's ``extract`` dict (from :mod:`chronicles_ocr.extract`, or as stored
in an official ``results.jsonl``) and returns the official judge's result dict, whose
``score`` is the number the official summary averages. A stored extract of the wrong
shape (not an object, a non-text ``extracted_text``, non-iterable ``items``) raises
``TypeError`` / ``AttributeError`` where the official judge raises. Sources are the official
``Opensource/judges/*.py``; the protocol switches are :mod:`chronicles_ocr.protocol`.

- classification (``judges/classify.py``): 1 when the extracted script name equals the
  row's ``font_type`` (both stripped, both non-empty), else 0.
- parsing (``judges/extract_text.py``): both texts lose whitespace and punctuation
  (:func:`~chronicles_ocr.text_rules.squeeze_punct`) and ``[UNK]`` placeholders (order:
  :class:`~chronicles_ocr.protocol.Protocol` ``unk_before_punct``); then
  ``max(0, 1 - Levenshtein(pred, ref) / max(len(pred), len(ref)))``; 1 when both are
  empty, 0 when only the reference is.
- recognition (``judges/referring.py``): 1 when the answer character equals the
  reference character after stripping spaces and the marks of :data:`EDGE_MARKS` at both
  ends of each, else 0 (0 with ``error: no_gt`` without a reference).
- spotting (``judges/spotting.py``): predicted boxes against the reference boxes scaled
  to 0–1000 (:mod:`chronicles_ocr.boxes`); Detection F1 matches boxes only (every box,
  ``[UNK]`` ones included); Spotting F1 — the task's score — matches boxes whose
  characters are equal, after removing ``[UNK]`` boxes on both sides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rapidfuzz.distance import Levenshtein

from chronicles_ocr.boxes import (
    Item,
    match,
    reference_items,
    row_size,
    to_thousandths,
)
from chronicles_ocr.protocol import IOU_THRESHOLD, Protocol
from chronicles_ocr.text_rules import drop_unk, is_unk, squeeze, squeeze_punct

#: marks stripped at both ends of a recognition answer and reference
EDGE_MARKS = "。.；;，,\"'“”‘’《》<>()（）【】[]{}!?！？:：`·～~"


def fields(extract: Any) -> Mapping[str, Any]:
    """``extract or {}`` as the judges read it. Raises ``TypeError`` for a value that is
    set but not an object (the official judge fails on it; ``judge.py`` then scores 0,
    and ``summarize.py`` leaves a spotting image out)."""
    found = extract or {}
    if not isinstance(found, Mapping):
        raise TypeError(f"extract is a {type(found).__name__}, not an object")
    return found


def _text(extract: Any, key: str) -> str:
    return str(fields(extract).get(key, "") or "")


def judge_classification(extract: Any, font_type: str
                         ) -> dict[str, Any]:
    """``{"score", "gt", "pred"}`` for a classification answer."""
    gt = str(font_type or "").strip()
    pred = _text(extract, "category").strip()
    return {"score": 1.0 if gt and pred and gt == pred else 0.0, "gt": gt, "pred": pred}


def parsing_text(text: str | None, protocol: Protocol) -> str:
    """A parsing text as the judge compares it (module docstring)."""
    if protocol.unk_before_punct:
        return squeeze_punct(drop_unk(squeeze(text)))
    return drop_unk(squeeze_punct(text))


def judge_parsing(extract: Any, annotation: str | None,
                  protocol: Protocol) -> dict[str, Any]:
    """``{"score", "metric": "1ned", "edit_distance", "len_pred", "len_gt"}``."""
    gt = parsing_text(annotation or "", protocol)
    value = fields(extract).get("extracted_text", "") or ""
    if not isinstance(value, str):
        raise TypeError(f"extracted_text is a {type(value).__name__}, not text")
    pred = parsing_text(value, protocol)
    n_gt, n_pred = len(gt), len(pred)
    if n_gt == 0:
        return {"score": 1.0 if n_pred == 0 else 0.0, "metric": "1ned",
                "edit_distance": n_pred, "len_pred": n_pred, "len_gt": 0}
    distance = Levenshtein.distance(pred, gt)
    return {"score": max(0.0, 1.0 - distance / max(n_pred, n_gt)), "metric": "1ned",
            "edit_distance": distance, "len_pred": n_pred, "len_gt": n_gt}


def _edges(text: str) -> str:
    return (text or "").strip().strip(EDGE_MARKS)


def judge_recognition(extract: Any, gt_char: str | None
                      ) -> dict[str, Any]:
    """``{"score", "metric": "exact_match", "gt", "pred"}`` (plus ``error``)."""
    pred = _text(extract, "char").strip()
    gt = str(gt_char or "").strip()
    if not gt:
        return {"score": 0.0, "metric": "exact_match", "gt": "", "pred": pred,
                "error": "no_gt"}
    return {"score": 1.0 if _edges(pred) == _edges(gt) else 0.0, "metric": "exact_match",
            "gt": gt, "pred": pred}


def predicted_items(extract: Any) -> list[Item]:
    """The predicted boxes the spotting judge keeps from ``extract["items"]``: each a
    dict whose ``bbox`` is a list of 4 values ``float`` reads, with ``x2 > x1`` and
    ``y2 > y1`` (compared as the judge does: ``x2 <= x1`` or ``y2 <= y1`` drops it)."""
    out = []
    for raw in fields(extract).get("items") or []:
        if not isinstance(raw, dict):
            continue
        bbox = raw.get("bbox")
        if not isinstance(bbox, list | tuple) or len(bbox) != 4:
            continue
        try:
            x1, y1, x2, y2 = (float(v) for v in bbox)
        except (TypeError, ValueError):
            continue
        if x2 <= x1 or y2 <= y1:
            continue
        out.append(Item((x1, y1, x2, y2), str(raw.get("char", "") or "").strip()))
    return out


def judge_spotting(extract: Any, row: Mapping[str, Any],
                   protocol: Protocol) -> dict[str, Any]:
    """``{"score", "iou_thresh", "detection_f1", "spotting_f1", "detection": {tp, fp,
    fn}, "spotting": {…}, "n_pred", "n_gt"}``; ``score`` is the Spotting F1. Raises
    ``TypeError`` / ``ValueError`` for a ``width`` / ``height`` that ``int`` refuses."""
    width, height = row_size(dict(row))
    refs = to_thousandths(reference_items(dict(row)), width, height)
    preds = predicted_items(extract)
    strict = protocol.strict_iou
    det = match(preds, refs, IOU_THRESHOLD, same_char=False, strict=strict)
    spot = match([p for p in preds if not is_unk(p.char)],
                 [r for r in refs if not is_unk(r.char)], IOU_THRESHOLD, same_char=True,
                 strict=strict)
    return {"score": spot.f1(), "iou_thresh": IOU_THRESHOLD,
            "detection_f1": det.f1(), "spotting_f1": spot.f1(),
            "detection": det.as_dict(), "spotting": spot.as_dict(),
            "n_pred": len(preds), "n_gt": len(refs)}


def reference_boxes(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The reference boxes in the 0–1000 frame, for records and the viewer:
    ``[{"bbox": [x1, y1, x2, y2], "char": C}, …]`` (``[]`` without a usable size)."""
    try:
        width, height = row_size(dict(row))
    except (TypeError, ValueError, OverflowError):
        return []
    return [{"bbox": [round(v, 2) for v in i.box], "char": i.char}
            for i in to_thousandths(reference_items(dict(row)), width, height)]
