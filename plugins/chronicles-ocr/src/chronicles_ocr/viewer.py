"""The viewer's detail part for a ``chronicles-ocr`` record (``heritage-eval view``).

Declared with ``BenchmarkPlugin(renderer="chronicles_ocr.viewer:render")``; everything
comes through ``ctx`` (``figure``, ``escape``), nothing imports the viewer. Per task:

- spotting: the image with the reference boxes (green, their characters) and the
  predicted boxes (red), from ``details.ref_boxes`` / ``details.pred_boxes`` (0–1000
  frame), and the box counts of the judge;
- recognition: the image sent (with its red box) and the reference character beside the
  answer;
- parsing: a character diff of the answer against the reference, both as compared
  (whitespace, punctuation and placeholders removed);
- classification: the reference script beside the answer.

``record.details`` is read defensively: a value of another shape is skipped.
"""

from __future__ import annotations

import difflib
from typing import Any, Protocol

from heritage_eval.plugin import SampleRecord

#: one box for ``ctx.figure(boxes=…)``: COCO ``[x, y, w, h]`` in 0–1, label, CSS class
Box = tuple[list[float], str, str]


class Context(Protocol):
    """The part of the viewer's render context this renderer uses."""

    def figure(self, record: SampleRecord, path: str, caption: str = "", *,
               page: int = 0, large: bool = False, boxes: Any = ()) -> str: ...

    def escape(self, value: object) -> str: ...


def _boxes(items: Any, cls: str) -> list[Box]:
    """The viewer's boxes for items ``{"bbox": [x1, y1, x2, y2] in 0..1000, "char"}``
    (corners on the official 0–1000 scale -> normalised COCO ``[x, y, w, h]``); items of
    another shape are skipped."""
    out: list[Box] = []
    for item in items if isinstance(items, list) else []:
        box = item.get("bbox") if isinstance(item, dict) else None
        try:
            x1, y1, x2, y2 = (max(0.0, min(1.0, float(v) / 1000)) for v in box or ())
        except (TypeError, ValueError):
            continue
        if x2 <= x1 or y2 <= y1:
            continue
        out.append(([x1, y1, x2 - x1, y2 - y1], str(item.get("char", "")), cls))
    return out


def _image(record: SampleRecord, ctx: Context, caption: str,
           boxes: list[Box] | None = None) -> str:
    turn = record.scored_turn
    if turn is None or not turn.images:
        return ""
    html = ctx.figure(record, turn.images[0].path, caption, large=True, boxes=boxes or ())
    return f'<div class="gallery">{html}</div>'


def _pair(left: str, right: str, ctx: Context, a: Any, b: Any) -> str:
    big = 'style="font-size:2.2em"'
    return (f'<div class="cols"><div><div class="lbl">{left}</div><div {big}>'
            f'{ctx.escape(a) or "—"}</div></div><div><div class="lbl">{right}</div>'
            f'<div {big}>{ctx.escape(b) or "—"}</div></div></div>')


def _spotting(record: SampleRecord, ctx: Context) -> str:
    d = record.details
    overlay = _boxes(d.get("ref_boxes"), "correct") + _boxes(d.get("pred_boxes"), "chosen")
    key = ('<p><span class="box-key correct">reference</span>'
           '<span class="box-key chosen">predicted</span></p>')
    judge = d.get("judge")
    inner = judge.get("score") if isinstance(judge, dict) else None
    inner = inner if isinstance(inner, dict) else {}
    counts = []
    for name in ("spotting", "detection"):
        c = inner.get(name)
        if isinstance(c, dict):
            counts.append(f"{name}: TP {ctx.escape(c.get('tp'))}, FP "
                          f"{ctx.escape(c.get('fp'))}, FN {ctx.escape(c.get('fn'))}")
    line = f'<p class="muted">{"; ".join(counts)}</p>' if counts else ""
    return _image(record, ctx, "reference (green) and predicted (red) boxes",
                  overlay) + key + line


def char_diff(answer: str, reference: str, ctx: Context) -> str:
    """The answer against the reference, character by character: equal runs plain,
    missing reference characters struck through, extra answer characters marked."""
    parts = []
    matcher = difflib.SequenceMatcher(a=reference, b=answer, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            parts.append(ctx.escape(reference[i1:i2]))
            continue
        if i2 > i1:
            parts.append(f'<del style="background:#fdd">{ctx.escape(reference[i1:i2])}</del>')
        if j2 > j1:
            parts.append(f'<ins style="background:#dfd">{ctx.escape(answer[j1:j2])}</ins>')
    return ('<div class="lbl">answer against reference (struck: missed, marked: extra)'
            f'</div><pre class="txt">{"".join(parts)}</pre>')


def _parsing(record: SampleRecord, ctx: Context) -> str:
    d = record.details
    answer, reference = d.get("pred_text"), d.get("ref_text")
    diff = char_diff(answer, reference, ctx) \
        if isinstance(answer, str) and isinstance(reference, str) else ""
    return _image(record, ctx, "image") + diff


def render(record: SampleRecord, ctx: Context) -> str:
    """The record's task-specific part (module docstring)."""
    task = record.groups.get("task")
    if task == "spotting":
        return _spotting(record, ctx)
    if task == "recognition":
        turn = record.scored_turn
        boxed = bool(turn and turn.images and turn.images[0].role == "red box")
        caption = "image sent (red box)" if boxed else "image (no red box was drawn)"
        return _image(record, ctx, caption) + _pair(
            "reference", "answer", ctx, record.reference, record.answer)
    if task == "parsing":
        return _parsing(record, ctx)
    if task == "classification":
        return _image(record, ctx, "image") + _pair(
            "reference script", "answer", ctx, record.reference, record.answer)
    return _image(record, ctx, "image")
