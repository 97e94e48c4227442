"""The viewer's detail part for an ``oracle-recognition`` record (``heritage-eval view``).

Declared with ``BenchmarkPlugin(renderer="oracle_demo.viewer:render")``. The viewer
calls ``render(record, ctx)`` and puts the HTML it returns between the record's head
(state, scores, flags) and its conversation. Everything comes through ``ctx`` — the
image (``ctx.figure``) and escaping (``ctx.escape``) — so nothing here imports the
viewer. ``record.details`` is read defensively: a value of another shape is skipped.
"""

from __future__ import annotations

from typing import Protocol

from heritage_eval.plugin import SampleRecord


class Context(Protocol):
    """The part of the viewer's render context this renderer uses."""

    def figure(self, record: SampleRecord, path: str, caption: str = "", *,
               page: int = 0, large: bool = False) -> str: ...

    def escape(self, value: object) -> str: ...


def _candidates(record: SampleRecord, ctx: Context) -> str:
    found = record.details.get("candidates")
    if not isinstance(found, list):
        return ""
    if not found:
        return '<p class="muted">no character in the answer</p>'
    chips = []
    for rank, char in enumerate(found, start=1):
        hit = " scored" if char == record.reference else ""
        chips.append(f'<span class="tag{hit}" title="candidate {rank}">'
                     f"{rank}. {ctx.escape(char)}</span>")
    return f'<div>candidates: {" ".join(chips)}</div>'


def render(record: SampleRecord, ctx: Context) -> str:
    """The glyph image large, the reference beside the model's ranked candidates (the
    reference's chip marked), and k."""
    turn = record.scored_turn
    image = ""
    if turn is not None and turn.images:
        image = ctx.figure(record, turn.images[0].path, "glyph", large=True)
    k = record.details.get("k")
    head = (f'<div class="cols"><div><div class="lbl">reference</div>'
            f'<div style="font-size:3em">{ctx.escape(record.reference)}</div></div>'
            f'<div><div class="lbl">answer (k = {ctx.escape(k)})</div>'
            f'<div style="font-size:3em">{ctx.escape(record.answer) or "—"}</div></div>'
            "</div>")
    return f'<div class="gallery">{image}</div>{head}{_candidates(record, ctx)}'
