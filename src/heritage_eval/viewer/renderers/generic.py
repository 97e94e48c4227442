"""The generic detail view, and the frame every benchmark's view sits in.

:func:`render`: the scored turn's images, the parsed answer beside the reference (used
for benchmarks without a renderer of their own). :func:`wrap`: the head (id, model,
state, scores, groups, error, source), the benchmark part, every turn of the
conversation (prompt, images, response with reasoning kept apart, finish reason, tokens,
latency, cached) and the raw ``details``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heritage_eval.core.record import SampleRecord, TurnRecord
from heritage_eval.viewer.html import (
    badge,
    esc,
    figure,
    fmt_num,
    json_details,
    kv_table,
    scores_line,
    text_block,
)

if TYPE_CHECKING:
    from heritage_eval.viewer.renderers import RenderContext


def turn_images(record: SampleRecord, turn: TurnRecord, ctx: RenderContext,
                cls: str = "") -> str:
    """The images of one turn as thumbnails with their role as caption."""
    figs = [figure(ctx.image(record, im.path, im.page, width=im.width, height=im.height),
                   im.role or f"image {i + 1}", cls=cls)
            for i, im in enumerate(turn.images)]
    return f'<div class="gallery">{"".join(figs)}</div>' if figs else ""


def answer_vs_reference(record: SampleRecord) -> str:
    """Parsed answer beside the reference."""
    return ('<div class="cols">' + text_block("answer (parsed)", record.answer, "answer")
            + text_block("reference", record.reference, "reference") + "</div>")


def render(record: SampleRecord, ctx: RenderContext) -> str:
    """Generic view: the scored turn's images, answer vs reference."""
    turn = record.scored_turn
    imgs = turn_images(record, turn, ctx) if turn else ""
    return imgs + answer_vs_reference(record)


def _response(turn: TurnRecord) -> str:
    resp = turn.response
    if resp is None:
        return '<p class="muted">no response recorded</p>'
    out = text_block("response", resp.text, "response")
    if resp.reasoning:
        out += (f'<details class="reasoning"><summary>reasoning ({len(resp.reasoning)} '
                f'chars, not parsed)</summary><pre class="txt">{esc(resp.reasoning)}</pre>'
                "</details>")
    meta = [("finish", resp.finish_reason), ("prompt tokens", resp.prompt_tokens),
            ("completion tokens", resp.completion_tokens),
            ("latency s", None if resp.latency_s is None else round(resp.latency_s, 3)),
            ("attempts", resp.attempts), ("cached", resp.cached)]
    shown = " · ".join(f"{k} {fmt_num(v)}" for k, v in meta if v is not None)
    if shown:
        out += f'<div class="meta">{shown}</div>'
    if resp.error:
        out += f'<p class="problem">error: {esc(resp.error)}</p>'
    failure = getattr(resp, "failure", None)
    if failure:
        out += f'<p class="problem">failure: {esc(failure)}</p>'
    return out


def conversation(record: SampleRecord, ctx: RenderContext) -> str:
    """Every turn: prompt, images, response; the scored turn marked."""
    parts = []
    if record.system:
        parts.append(text_block("system prompt", record.system, "system"))
    for i, turn in enumerate(record.turns):
        mark = ' <span class="tag scored">scored</span>' if turn.scored else ""
        parts.append(f'<div class="turn{" is-scored" if turn.scored else ""}">'
                     f'<div class="turn-h">turn {i + 1}{mark}</div>'
                     + text_block("prompt", turn.prompt, "prompt")
                     + turn_images(record, turn, ctx, "small") + _response(turn) + "</div>")
    if not parts:
        return ""
    return ('<details class="conv" open><summary>conversation '
            f'({len(record.turns)} turn{"s" if len(record.turns) != 1 else ""})</summary>'
            + "".join(parts) + "</details>")


#: ``details`` keys shown as flags in the head of a sample (docs/denominators.md,
#: docs/answer-extraction.md, docs/metrics.md): key -> label.
FLAG_KEYS = {"model_failure": "model failure", "truncated": "truncated",
             "parse_flags": "answer", "metric_flags": "metric"}


def flags(details: dict[str, object]) -> str:
    """The flagged conditions of a record as chips: the model failure (and the policy it
    was scored under), truncation, unusual answer forms the parser decided, and metrics
    that had to truncate, skip or clip. Empty when nothing is flagged."""
    chips = []
    for key, label in FLAG_KEYS.items():
        value = details.get(key)
        if not value:
            continue
        if value is True:
            text = label
        elif isinstance(value, list | tuple):
            text = f"{label}: {', '.join(str(v) for v in value)}"
        else:
            text = f"{label}: {value}"
        if key == "model_failure" and details.get("failure_policy"):
            wrong = details["failure_policy"] == "wrong"
            text += " (scored as wrong)" if wrong else " (left out)"
        chips.append(f'<span class="flag" data-flag="{esc(key)}">{esc(text)}</span>')
    return f'<div class="flags">{" ".join(chips)}</div>' if chips else ""


def head(record: SampleRecord) -> str:
    """Id, model, state, scores, flags, groups, error, source."""
    groups = " ".join(f'<span class="grp"><b>{esc(k)}</b> {esc(v)}</span>'
                      for k, v in record.groups.items())
    err = f'<p class="problem">{esc(record.state)}: {esc(record.error)}</p>' \
        if record.error else ""
    return (f'<div class="s-head"><div class="s-id">{esc(record.id)}</div>'
            f'<div>{badge(record.state.value)} <span class="model">{esc(record.model)}</span>'
            f' {scores_line(record.scores)}</div>{flags(record.details)}'
            f'<div>{groups}</div>{err}'
            f'<div class="muted small">source {esc(record.source or "—")}</div></div>')


def wrap(record: SampleRecord, body: str, ctx: RenderContext) -> str:
    """The whole detail view of ``record`` around the benchmark part ``body``."""
    raw = json_details("details (raw)", record.details) if record.details else ""
    return (f'<article class="sample" data-bench="{esc(record.benchmark)}">'
            f'{head(record)}<div class="s-body">{body}</div>'
            f"{conversation(record, ctx)}{raw}</article>")


__all__ = ["answer_vs_reference", "conversation", "flags", "head", "kv_table", "render",
           "turn_images", "wrap"]
