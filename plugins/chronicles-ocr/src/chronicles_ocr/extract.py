"""Reading each task's answer out of a model's text, as the official code does.

In the official pipeline this happens at inference time (``infer.py`` calls the task's
``extract`` from ``prompts/<task>.py`` and stores its dict as ``extract`` in
``results.jsonl``; a failed extraction stores no ``extract`` and ``judge.py`` then
scores ``no_extract``). The readers here return the same dicts, or ``None`` where the
official reader fails. Every reader first keeps the final answer
(:func:`~chronicles_ocr.text_rules.final_answer`).

- classification (``prompts/classify.py``): the value after ``字体分类:`` / ``字体:`` /
  ``分类:``; a script name equal to it, else one contained in it, else — over the whole
  answer — the script name occurring last (``fallback``). Where the value contains two
  names the official code picks by iterating a Python ``set`` (so the pick depends on
  the interpreter's string-hash seed); here the name occurring first in the value wins,
  a fixed rule (docs/chronicles-ocr.md).
- parsing (``prompts/extract_text.py``): the value after ``提取文本:`` (or ``提取结果``,
  ``识别结果``, ``识别文本``, ``文本``), with the lines that follow; else the whole
  answer minus lines of preamble (``好的…``, ``以下是…`` …) and other tasks' fields, when
  that leaves at least two characters (``fallback``).
- recognition (``prompts/referring.py``): the value after ``现代汉字:`` (or ``汉字``,
  ``识别结果``, ``识别``, ``答案``, ``char``), else the whole answer cleaned; ``[UNK]``
  / ``<UNK>`` / ``UNK`` give ``[UNK]``; else its first CJK ideograph; else the first
  character of its first word.
- spotting (``prompts/spotting.py``): a JSON array of ``{"bbox": [x1, y1, x2, y2],
  "char": …}`` (0–1000 coordinates), see :func:`read_spotting`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from chronicles_ocr.names import SCRIPTS
from chronicles_ocr.text_rules import after_prefix, clean, final_answer, unfence

SCRIPT_NAMES = tuple(s.zh for s in SCRIPTS)
CLASSIFY_PREFIXES = ("字体分类", "字体", "分类")
PARSING_PREFIXES = ("提取文本", "提取结果", "识别结果", "识别文本", "文本")
RECOGNITION_PREFIXES = ("现代汉字", "汉字", "识别结果", "识别", "答案", "char")

_OTHER_FIELD = re.compile(r"(?:字体分类|字体|分类)\s*[:：]")
_PREAMBLE = re.compile(
    r"^(?:好的|好|没问题|当然|根据(?:图片|图像)|这是|以下是"
    r"|图片中(?:的)?(?:内容|文字|字符)?(?:为|是|如下)?|无法(?:识别|看清)|抱歉|对不起)")
_CJK = re.compile("[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df"
                  "\U0002a700-\U0002ebef\U00030000-\U0003134f]")
_JSON_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)
_BRACKETED = re.compile(r"\[[\s\S]*?\]")
#: what reading JSON may raise (bad text; nesting too deep for the parser)
_JSON_ERRORS = (ValueError, RecursionError)


def read_classification(answer: str | None) -> dict[str, Any] | None:
    """``{"category": NAME}`` (plus ``"fallback": True`` from the whole-answer scan), or
    ``None`` when no script name is found."""
    text = final_answer(answer)
    value = after_prefix(text, CLASSIFY_PREFIXES)
    if value in SCRIPT_NAMES:
        return {"category": value}
    if value:
        inside = [(value.find(n), n) for n in SCRIPT_NAMES if n in value]
        if inside:
            return {"category": min(inside)[1]}
    if text:
        last = max((text.rfind(n), n) for n in SCRIPT_NAMES)
        if last[0] >= 0:
            return {"category": last[1], "fallback": True}
    return None


def _whole_answer_text(text: str) -> str:
    """The parsing fallback: the answer's lines without preamble and other fields."""
    raw = unfence(text.strip()) if text else ""
    kept: list[str] = []
    for line in raw.splitlines():
        bare = line.strip().strip("`").strip()
        if not bare or _OTHER_FIELD.match(bare) or _PREAMBLE.match(bare):
            continue
        other = _OTHER_FIELD.search(bare)
        if other:
            bare = bare[:other.start()].rstrip()
            if not bare:
                continue
        kept.append(bare)
    joined = "\n".join(kept).strip()
    joined = clean(joined) or joined
    return joined if len(joined) >= 2 else ""


def read_parsing(answer: str | None) -> dict[str, Any] | None:
    """``{"extracted_text": TEXT}`` (plus ``"fallback": True``), or ``None``."""
    text = final_answer(answer)
    value = after_prefix(text, PARSING_PREFIXES, multiline=True)
    if value:
        return {"extracted_text": value}
    whole = _whole_answer_text(text)
    return {"extracted_text": whole, "fallback": True} if whole else None


def read_recognition(answer: str | None) -> dict[str, Any] | None:
    """``{"char": C}`` (``C`` one character, or ``"[UNK]"``), or ``None``."""
    text = final_answer(answer)
    value = after_prefix(text, RECOGNITION_PREFIXES) or clean(text)
    if not value:
        return None
    value = value.strip()
    if value.upper() in {"[UNK]", "<UNK>", "UNK"}:
        return {"char": "[UNK]"}
    found = _CJK.search(value)
    if found:
        return {"char": found.group(0)}
    words = value.split()
    return {"char": words[0][:1]} if words else None


@dataclass
class Spotting:
    """What :func:`read_spotting` read: ``items`` (the valid boxes, in answer order, each
    ``{"idx", "bbox": [x1, y1, x2, y2] ints in 0..1000, "char"}``), ``ok`` (the official
    reader's verdict: an array was found and every element was valid, or it was empty)
    and ``found`` (a JSON array was found at all)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    ok: bool = False
    found: bool = False

    def official(self) -> dict[str, Any] | None:
        """The official ``extract`` dict (``{"items": …}``), or ``None`` when the official
        reader fails (and ``infer.py`` stores no ``extract``)."""
        return {"items": self.items} if self.ok else None


def _json_array(text: str) -> list[Any] | None:
    """The JSON array in ``text``: the whole text, else from the first ``[`` to the last
    ``]``, else the first ``[…]`` (shortest, scanning left to right) that parses as an
    array. A whole text that parses as another JSON value gives ``None``."""
    try:
        whole = json.loads(text)
    except _JSON_ERRORS:
        whole = None
    else:
        return whole if isinstance(whole, list) else None
    start, end = text.find("["), text.rfind("]")
    if start != -1 and end != -1 and end > start:
        try:
            span = json.loads(text[start:end + 1])
        except _JSON_ERRORS:
            span = None
        else:
            return span if isinstance(span, list) else None
    for piece in _BRACKETED.finditer(text):
        try:
            value = json.loads(piece.group(0))
        except _JSON_ERRORS:
            continue
        if isinstance(value, list):
            return value
    return None


def _box(element: Any, position: int) -> dict[str, Any] | None:
    """One array element as an item, or ``None`` when it is not a valid box: ``bbox``
    must be a list of 4 numbers (booleans count as numbers, as in Python); each is
    rounded half-to-even and clipped to 0..1000; then ``x1 < x2`` and ``y1 < y2``.
    Raises ``ValueError`` / ``OverflowError`` for a NaN or infinite number (JSON as
    Python reads it accepts ``NaN`` and ``Infinity``), as the official reader does."""
    if not isinstance(element, dict):
        return None
    bbox = element.get("bbox")
    if not isinstance(bbox, list) or len(bbox) != 4 or \
            not all(isinstance(v, int | float) for v in bbox):
        return None
    x1, y1, x2, y2 = (max(0, min(1000, round(float(v)))) for v in bbox)
    if not (x1 < x2 and y1 < y2):
        return None
    char = element.get("char", "")
    if not isinstance(char, str):
        char = "" if char is None else str(char)
    idx = element.get("idx", position)
    return {"idx": int(idx) if isinstance(idx, int | float) else position,
            "bbox": [x1, y1, x2, y2], "char": char.strip()}


def read_spotting(answer: str | None) -> Spotting:
    """The boxes of a spotting answer (see :class:`Spotting`). The final answer, without
    a ```` ```json ```` fence around it, is searched for a JSON array
    (:func:`_json_array`); each element is read by :func:`_box`."""
    if not answer:
        return Spotting()
    text = final_answer(answer).strip()
    fenced = _JSON_FENCE.match(text)
    text = fenced.group(1).strip() if fenced else text
    array = _json_array(text)
    if array is None:
        return Spotting()
    items: list[dict[str, Any]] = []
    all_valid, crashed = True, False
    for position, element in enumerate(array, start=1):
        try:
            item = _box(element, position)
        except (ValueError, OverflowError):  # the official reader stops with an error
            item, crashed = None, True
        if item is None:
            all_valid = False
        else:
            items.append(item)
    ok = not crashed and ((not array) or (bool(items) and all_valid))
    return Spotting(items=items, ok=ok, found=True)
