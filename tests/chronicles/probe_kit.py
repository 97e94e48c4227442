"""Building blocks of the Chronicles-OCR probe predictions (:mod:`.make_probes`).

- :func:`load_demo`: the bundled demo set's rows (``Chronicles_OCR.jsonl``) by image stem.
- :class:`Answer`: one probe answer of one task: the raw model output, what the official
  ``infer.py`` stores as ``extract`` (or nothing when its extraction fails), and where
  that ``extract`` comes from (``source``).
- :func:`task_record`: the ``infer_results[<task>]`` record ``infer.py`` writes for it.
- :func:`referring_target`: the recognition target ``infer.py`` samples (seeded), written
  from the protocol's description: the non-placeholder spotting items, a
  ``random.Random`` seeded by the first 16 hex digits of
  ``md5("<seed>::image_path=<path>|sp_fp=<md5(sorted-key json of spotting)[:12]>")``.
  ``check_probes.py`` compares every record with the official code.
- spotting geometry: GT boxes scaled to the 0–1000 grid, boxes whose IoU with a GT box is
  the nearest whole-number box just above / exactly at / just below 0.75.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEMO_JSONL = REPO / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo" / \
    "Chronicles_OCR.jsonl"

CLASSIFY, PARSE, SPOT, RECOG = "字体分类", "字符提取", "字符检测", "单字识别"
ANCIENT = ("甲骨文", "金文", "篆书")
#: Task order of infer.py's records (ancient rows: all four, modern rows: the first two).
TASK_ORDER = (CLASSIFY, PARSE, SPOT, RECOG)
META_KEYS = ("gt_char", "target_bbox_xyxy", "target_index", "sample_key", "seed")
API_ERROR = "API 调用失败或返回空结果"
UNK_BLOCKS = frozenset("□■▢◻◼")
#: Traditional forms of the demo's simplified characters (the forms the images show).
TRADITIONAL = {"贞": "貞", "祸": "禍", "孙": "孫", "宝": "寶", "赐": "賜", "贝": "貝",
               "对": "對", "扬": "揚", "于": "於", "寿": "壽", "万": "萬", "岁": "歲",
               "长": "長", "黄": "黃", "乐": "樂", "学": "學", "时": "時", "习": "習",
               "说": "說", "远": "遠", "来": "來", "愠": "慍", "贤": "賢", "毕": "畢",
               "岭": "嶺", "尽": "盡", "觉": "覺", "晓": "曉"}

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Answer:
    """One probe answer of one task.

    ``rule``: the probe's name (README of the fixtures lists them). ``answer`` /
    ``thinking``: the raw output. ``extract``: what infer.py stores (``None``: its
    extraction failed, so the record has no ``extract`` key). ``source``: ``"infer"``
    (``extract`` is exactly what the official extraction gives for ``answer``),
    ``"hand"`` (``extract`` written directly, as another pipeline might), ``"ambiguous"``
    (the official extraction's result depends on ``PYTHONHASHSEED``). ``error``: an API
    failure record instead. ``seed``: the recognition sampling seed. ``gt_char``: False
    drops the recognition target from the record."""

    rule: str
    answer: str = ""
    extract: Any = None
    source: str = "infer"
    thinking: str = ""
    error: str | None = None
    seed: int = 42
    gt_char: bool = True


def load_demo(path: Path = DEMO_JSONL) -> dict[str, dict[str, Any]]:
    """The demo rows keyed by image stem (``"jiaguwen-01"``), in file order."""
    rows: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[Path(row["image_path"]).stem] = row
    return rows


def is_placeholder(ch: str | None) -> bool:
    """``[UNK]`` / ``<UNK>`` / ``UNK`` (any case), blocks (□ ■ ▢ ◻ ◼) or empty."""
    s = (ch or "").strip()
    return not s or s.lower() in ("[unk]", "<unk>", "unk") or all(c in UNK_BLOCKS for c in s)


def gt_boxes(row: dict[str, Any]) -> list[tuple[Box, str]]:
    """The row's spotting boxes in pixels with their characters."""
    out = []
    for it in row.get("spotting") or []:
        b = it["bbox"]
        out.append(((float(b["x1"]), float(b["y1"]), float(b["x2"]), float(b["y2"])),
                    str(it["modern_char"]).strip()))
    return out


def referring_target(row: dict[str, Any], seed: int) -> dict[str, Any] | None:
    """The recognition target for ``seed`` (``None`` when every glyph is a placeholder):
    ``{"gt_char", "target_bbox_xyxy", "target_index", "sample_key", "seed"}``."""
    spotting = row.get("spotting") or []
    candidates = [(i, ch, box) for i, (box, ch) in enumerate(gt_boxes(row))
                  if not is_placeholder(ch) and box[2] > box[0] and box[3] > box[1]]
    if not candidates:
        return None
    fingerprint = hashlib.md5(json.dumps(spotting, ensure_ascii=False, sort_keys=True)
                              .encode("utf-8")).hexdigest()[:12]
    key = f"image_path={row['image_path']}|sp_fp={fingerprint}"
    digest = hashlib.md5(f"{seed}::{key}".encode()).hexdigest()
    index, ch, box = random.Random(int(digest[:16], 16)).choice(candidates)
    return {"gt_char": ch, "target_bbox_xyxy": list(box), "target_index": index,
            "sample_key": key, "seed": seed}


def task_record(task: str, ans: Answer, row: dict[str, Any]) -> dict[str, Any]:
    """``infer_results[task]`` as infer.py writes it for ``ans``."""
    meta: dict[str, Any] = {}
    if task == RECOG:
        target = referring_target(row, ans.seed)
        if target is None:
            return {"thinking": "", "answer": "", "error": "no_referring_target",
                    "skipped": True}
        meta = {k: target[k] for k in META_KEYS if ans.gt_char or k != "gt_char"}
    if ans.error is not None:
        return {"thinking": "", "answer": "", "error": ans.error, **meta}
    rec: dict[str, Any] = {"thinking": ans.thinking, "answer": ans.answer}
    if ans.extract is not None:
        rec["extract"] = ans.extract
    rec.update(meta)
    return rec


# ---- spotting geometry (0–1000 grid) ---------------------------------------------------

def scaled_boxes(row: dict[str, Any]) -> list[tuple[Box, str]]:
    """GT boxes on the 0–1000 grid (``x * (1000 / width)``), with their characters."""
    sx, sy = 1000.0 / int(row["width"]), 1000.0 / int(row["height"])
    return [((b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy), ch) for b, ch in gt_boxes(row)]


def iou(a: Box, b: Box) -> Fraction:
    """Exact IoU of two boxes with whole-number (or exactly representable) corners."""
    fa = [Fraction(v) for v in a]
    fb = [Fraction(v) for v in b]
    iw = min(fa[2], fb[2]) - max(fa[0], fb[0])
    ih = min(fa[3], fb[3]) - max(fa[1], fb[1])
    if iw <= 0 or ih <= 0:
        return Fraction(0)
    inter = iw * ih
    union = (fa[2] - fa[0]) * (fa[3] - fa[1]) + (fb[2] - fb[0]) * (fb[3] - fb[1]) - inter
    return inter / union


def whole(box: Box) -> tuple[int, int, int, int]:
    """``box`` as integers; raises ``ValueError`` unless every corner is whole."""
    if any(v != int(v) for v in box):
        raise ValueError(f"not a whole-number box: {box}")
    x1, y1, x2, y2 = (int(v) for v in box)
    return x1, y1, x2, y2


def near_threshold(box: Box, where: str, grow: bool = False) -> list[int]:
    """The whole-number box sharing ``box``'s top-left corner whose IoU with ``box`` is
    the nearest to 3/4 strictly ``"above"``, ``"below"`` or ``"exact"``-ly 3/4.

    ``grow``: search boxes containing ``box`` (IoU = area ratio the other way)."""
    x1, y1, x2, y2 = whole(box)
    w, h = x2 - x1, y2 - y1
    best: tuple[Fraction, list[int]] | None = None
    widths = range(w, 2 * w) if grow else range(1, w + 1)
    heights = range(h, 2 * h) if grow else range(1, h + 1)
    for ww in widths:
        for hh in heights:
            r = Fraction(w * h, ww * hh) if grow else Fraction(ww * hh, w * h)
            ok = {"above": r > Fraction(3, 4), "below": r < Fraction(3, 4),
                  "exact": r == Fraction(3, 4)}[where]
            if ok and (best is None or abs(r - Fraction(3, 4)) < best[0]):
                best = (abs(r - Fraction(3, 4)), [x1, y1, x1 + ww, y1 + hh])
    if best is None:
        raise ValueError(f"no {where} box for {box}")
    return best[1]


def item(idx: int, bbox: list[Any], char: Any) -> dict[str, Any]:
    """One spotting answer item as the prompt asks for it."""
    return {"idx": idx, "bbox": bbox, "char": char}


def extracted_items(items: list[dict[str, Any]]) -> dict[str, Any]:
    """What the official spotting extraction keeps of well-formed ``items``: corners
    rounded (half to even) and clamped to [0, 1000], ``char`` stripped."""
    out = []
    for i, it in enumerate(items, start=1):
        x1, y1, x2, y2 = (max(0, min(1000, round(float(v)))) for v in it["bbox"])
        assert x1 < x2 and y1 < y2, it
        idx = it.get("idx", i)
        out.append({"idx": int(idx) if isinstance(idx, int | float) else i,
                    "bbox": [x1, y1, x2, y2], "char": str(it.get("char", "")).strip()})
    return {"items": out}


def exact_items(row: dict[str, Any], unk: str = "[UNK]") -> list[dict[str, Any]]:
    """A perfect answer: every GT box on the 0–1000 grid (rounded), its character (``unk``
    for placeholders)."""
    return [item(i, [round(v) for v in box], unk if is_placeholder(ch) else ch)
            for i, (box, ch) in enumerate(scaled_boxes(row), start=1)]


def spot_answer(rule: str, items: list[dict[str, Any]], before: str = "",
                after: str = "") -> Answer:
    """A well-formed spotting answer: the JSON of ``items`` between ``before`` and
    ``after``."""
    return Answer(rule, before + json.dumps(items, ensure_ascii=False) + after,
                  extracted_items(items))
