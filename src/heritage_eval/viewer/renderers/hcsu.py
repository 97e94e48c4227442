"""HCSU detail views.

- ``hcsu-discrimination``: the target image beside the K candidate styles (reference image
  and the description shown), the chosen candidate and the correct one marked.
- ``hcsu-description``: the target and the shots (image + description), the model's
  description beside the expert reference, BERTScore and the judge's scores with its
  reply (rationale).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heritage_eval.core.record import SampleRecord
from heritage_eval.viewer.html import esc, figure, kv_table, text_block

if TYPE_CHECKING:
    from heritage_eval.viewer.renderers import RenderContext


def _target(record: SampleRecord, ctx: RenderContext) -> str:
    d = record.details
    path = d.get("target_image")
    if not isinstance(path, str):
        turn = record.scored_turn
        found = [im.path for im in (turn.images if turn else []) if im.role == "target"]
        path = found[0] if found else None
    char = d.get("char")
    cap = f"target {char}" if isinstance(char, str) else "target"
    cls = record.groups.get("class")
    fig = figure(ctx.image(record, path), cap, cls="target") if path else ""
    return (f'<div class="hc-target">{fig}<div class="small">true class '
            f"<b>{esc(cls or d.get('correct_class'))}</b></div></div>")


def _candidate(record: SampleRecord, ctx: RenderContext, cand: dict[str, Any],
               chosen: object, correct: object) -> str:
    label = cand.get("label")
    marks = []
    if label is not None and label == correct:
        marks.append('<span class="tag correct">correct</span>')
    if label is not None and label == chosen:
        marks.append('<span class="tag chosen">chosen</span>')
    cls = " ".join(c for c in ("cand", "is-correct" if label == correct else "",
                               "is-chosen" if label == chosen else "") if c)
    img = cand.get("image")
    fig = figure(ctx.image(record, img), f"{label}") if isinstance(img, str) else ""
    desc = cand.get("description")
    origin = cand.get("description_from")
    note = (f'<div class="muted small">description written for {esc(origin)}</div>'
            if origin and origin != cand.get("class") else "")
    return (f'<div class="{cls}"><div class="cand-h"><b>{esc(label)}</b> '
            f'{esc(cand.get("class"))} {" ".join(marks)}</div>{fig}'
            f'<div class="desc">{esc(desc)}</div>{note}</div>')


def discrimination(record: SampleRecord, ctx: RenderContext) -> str:
    """Target beside the candidates; chosen vs correct."""
    d = record.details
    cands = [c for c in d.get("candidates") or [] if isinstance(c, dict)]
    chosen, correct = record.answer, record.reference
    cells = "".join(_candidate(record, ctx, c, chosen, correct) for c in cands)
    rows: list[tuple[str, object]] = [
        ("chosen", chosen if chosen is not None else "(no valid answer)"),
        ("correct", correct), ("predicted class", d.get("predicted_class")),
        ("K", d.get("k", len(cands) or None)), ("distractor pool", d.get("distractor_pool")),
        ("descriptions", d.get("descriptions")), ("parse", d.get("parse_method")),
        ("parse reason", d.get("parse_reason"))]
    notes = d.get("notes")
    if notes:
        rows.append(("notes", notes))
    return (f'<div class="hc">{_target(record, ctx)}<div class="hc-side">'
            f'{kv_table((k, v) for k, v in rows if v is not None)}</div></div>'
            f'<div class="cands">{cells or "<p class=muted>no candidates recorded</p>"}</div>')


def _shot(record: SampleRecord, ctx: RenderContext, i: int, shot: dict[str, Any]) -> str:
    img = shot.get("image")
    cap = f"shot {i + 1} {shot.get('char') or ''}".strip()
    fig = figure(ctx.image(record, img), cap) if isinstance(img, str) else ""
    return (f'<div class="cand">{fig}<div class="small"><b>{esc(shot.get("class"))}</b></div>'
            f'<div class="desc">{esc(shot.get("description"))}</div></div>')


def description(record: SampleRecord, ctx: RenderContext) -> str:
    """Shots, target, description vs expert reference, BERTScore and judge."""
    d = record.details
    shots = [s for s in d.get("shots") or [] if isinstance(s, dict)]
    shot_html = "".join(_shot(record, ctx, i, s) for i, s in enumerate(shots))
    scores = [("BERTScore-F1 ×10", record.scores.get("bertscore_x10")),
              ("judge: terminology", record.scores.get("terminology")),
              ("judge: richness", record.scores.get("richness")),
              ("expert reference: terminology", d.get("expert_terminology")),
              ("expert reference: richness", d.get("expert_richness")),
              ("words", d.get("words")), ("over word limit", d.get("over_word_limit")),
              ("BERTScore status", d.get("bertscore_status")),
              ("BERTScore reason", d.get("bertscore_reason")),
              ("judge status", d.get("judge_status")), ("judge reason", d.get("judge_reason"))]
    judge = d.get("judge_raw")
    judge_html = text_block("judge's reply (rationale)", judge, "judge") if judge else (
        '<p class="muted small">no judge reply recorded (no judge was named)</p>')
    return (f'<div class="hc">{_target(record, ctx)}<div class="hc-side">'
            f'{kv_table((k, v) for k, v in scores if v is not None)}</div></div>'
            '<div class="cols">' + text_block("model description", record.answer, "answer")
            + text_block("expert reference", record.reference, "reference") + "</div>"
            + judge_html
            + (f'<div class="lbl">shots</div><div class="cands">{shot_html}</div>'
               if shot_html else ""))


def render(record: SampleRecord, ctx: RenderContext) -> str:
    """The view for the record's HCSU task (description when it has shots)."""
    if record.benchmark == "hcsu-description" or "shots" in record.details:
        return description(record, ctx)
    return discrimination(record, ctx)


__all__ = ["description", "discrimination", "render"]
