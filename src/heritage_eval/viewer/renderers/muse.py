"""MUSE detail view: the artwork with the question's boxes, the options with their
distractor types (chosen vs correct), jigsaw puzzle beside its candidate pieces.

Boxes are normalized COCO ``[x, y, w, h]`` (fractions of the image; (x, y) the top-left
corner), taken from the options (``details.options[].box``, labelled with the option
letter) and from the question parameters (``person_box``, ``box``, ``a_box``, ``b_box``,
``true_box`` in ``details.params`` / ``details.metadata``); a box drawn twice is drawn
once. Every turn of a dialogue is in the conversation below the view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heritage_eval.benchmarks.muse.analysis.distractors import MEANINGS
from heritage_eval.core.record import ImageRef, SampleRecord
from heritage_eval.viewer.html import Box, esc, figure, fmt_num, kv_table, table, valid_box

if TYPE_CHECKING:
    from heritage_eval.viewer.renderers import RenderContext

#: question-parameter keys holding a box -> label drawn on it
BOX_KEYS = {"person_box": "person", "box": "region", "a_box": "A", "b_box": "B",
            "true_box": "answer"}

#: distractor codes -> what they are (one table for the figures and the viewer)
DISTRACTORS = MEANINGS


def _artwork(record: SampleRecord) -> ImageRef | None:
    images = [im for t in record.turns for im in t.images]
    for im in images:
        if im.role in ("artwork", "image"):
            return im
    return images[0] if images else None


def boxes(record: SampleRecord) -> list[Box]:
    """Every box of the question, options first (label = letter; class ``correct`` /
    ``chosen`` / ``opt``), then the parameter boxes not already drawn."""
    d = record.details
    out: list[Box] = []
    seen: set[tuple[float, ...]] = set()

    def add(box: object, label: str, cls: str) -> None:
        b = valid_box(box)
        if b is None:
            return
        key = tuple(round(v, 4) for v in b)
        if key not in seen:
            seen.add(key)
            out.append((b, label, cls))

    for opt in d.get("options") or []:
        if isinstance(opt, dict) and opt.get("box") is not None:
            label = str(opt.get("label", ""))
            cls = ("correct" if label == record.reference else
                   "chosen" if label == record.answer else "opt")
            add(opt.get("box"), label, cls)
    for src in (d.get("params"), d.get("metadata")):
        if isinstance(src, dict):
            for key, label in BOX_KEYS.items():
                add(src.get(key), label, "param")
    return out


def _option_rows(record: SampleRecord, ctx: RenderContext) -> list[list[str]]:
    rows = []
    for opt in record.details.get("options") or []:
        if not isinstance(opt, dict):
            continue
        label = opt.get("label")
        kind = opt.get("distractor_type")
        marks = []
        if label == record.reference:
            marks.append('<span class="tag correct">correct</span>')
        if label == record.answer:
            marks.append('<span class="tag chosen">chosen</span>')
        img = opt.get("image")
        fig = figure(ctx.image(record, img), f"{label}", cls="small") \
            if isinstance(img, str) else ""
        box = valid_box(opt.get("box"))
        box_s = "[" + ", ".join(f"{v:.3f}" for v in box) + "]" if box else ""
        explain = DISTRACTORS.get(str(kind), "")
        rows.append([f"<b>{esc(label)}</b>", esc(opt.get("text")) + fig,
                     f'<code class="small">{esc(box_s)}</code>',
                     f'<span title="{esc(explain)}">{esc(kind)}</span>'
                     f'<div class="muted small">{esc(explain)}</div>', " ".join(marks)])
    return rows


def _jigsaw(record: SampleRecord, ctx: RenderContext) -> str:
    opts = [o for o in record.details.get("options") or []
            if isinstance(o, dict) and isinstance(o.get("image"), str)]
    turn = record.scored_turn or (record.turns[0] if record.turns else None)
    puzzle = [im for im in (turn.images if turn else [])
              if not (im.role or "").startswith("option")]
    if not opts or not puzzle:
        return ""
    im = puzzle[0]
    first = figure(ctx.image(record, im.path, im.page, width=im.width, height=im.height),
                   "puzzle (grey hole)", cls="puzzle", large=True)
    figs = []
    for o in opts:
        label = o.get("label")
        cls = ("is-correct " if label == record.reference else "") + (
            "is-chosen" if label == record.answer else "")
        kind = o.get("distractor_type")
        mark = " ✓" if label == record.reference and kind != "correct" else ""
        mark += " ← chosen" if label == record.answer else ""
        figs.append(figure(ctx.image(record, str(o["image"])), f"{label} · {kind}{mark}",
                           cls=cls))
    return ('<div class="lbl">puzzle and candidate pieces (actual size; green: correct, '
            f'red: chosen)</div><div class="jigsaw">{first}<div class="pieces">{"".join(figs)}'
            "</div></div>")


def _answer_table(record: SampleRecord) -> str:
    ans, ref = record.answer, record.reference
    if isinstance(ref, dict) or isinstance(ans, dict):
        a = ans if isinstance(ans, dict) else {}
        r = ref if isinstance(ref, dict) else {}
        raw = record.details.get("dims")
        dims: dict[str, Any] = raw if isinstance(raw, dict) else {}
        rows = [[esc(k), esc(a.get(k)), esc(r.get(k)), fmt_num(record.scores.get(k)),
                 "" if k not in dims else ("counted" if dims[k] else "not counted")]
                for k in dict.fromkeys([*r, *a])]
        return table(["dimension", "answer", "reference", "score", ""], rows)
    rows2: list[tuple[str, Any]] = [("answer", ans if ans is not None else "(no valid answer)"),
                                    ("reference", ref)]
    return kv_table(rows2)


def render(record: SampleRecord, ctx: RenderContext) -> str:
    """Artwork with boxes, options, jigsaw, answer vs reference."""
    d = record.details
    art = _artwork(record)
    drawn = boxes(record)
    fig = figure(ctx.image(record, art.path, art.page, width=art.width, height=art.height),
                 art.role or "artwork", boxes=drawn, cls="main artwork", large=True) \
        if art else ""
    facts: list[tuple[str, Any]] = [
        ("task", record.groups.get("task")), ("capability", record.groups.get("capability")),
        ("answer format", d.get("answer_format")), ("turn", d.get("turn")),
        ("question", d.get("question_id")), ("parse", d.get("parse_method")),
        ("chosen distractor", d.get("chosen_distractor"))]
    floor = d.get("chance_floor")
    if isinstance(floor, dict) and floor.get("floor") is not None:
        facts.append(("chance floor (cosine)", round(float(floor["floor"]), 3)))
    legend = "".join(f'<span class="box-key {c}">{esc(lbl)}</span>' for _, lbl, c in drawn)
    opts = _option_rows(record, ctx)
    opt_html = table(["", "option", "box", "distractor type", ""], opts, "grid options") \
        if opts else ""
    side = (f'<div class="mu-side">{kv_table((k, v) for k, v in facts if v is not None)}'
            f"{_answer_table(record)}</div>")
    jig = _jigsaw(record, ctx) if d.get("answer_format") == "choice" else ""
    if jig:  # the puzzle is the question's image: shown beside its pieces instead
        return f'{jig}<div class="mu-wide">{side}</div>{opt_html}'
    keys = f"<div class=small>boxes: {legend}</div>" if legend else ""
    return f'<div class="mu"><div class="mu-img">{fig}{keys}</div>{side}</div>{opt_html}'
