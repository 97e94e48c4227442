"""Ancient-Bench detail view: the artifact image (zoomable), ground truth and prediction
aligned with a character-level diff, NED and F1, the error counts, the raw response.

The diff is computed here, at build time (:func:`heritage_eval.viewer.diff.char_ops`),
on the normalized strings the scorer compared (``details.normalized_ground_truth`` /
``normalized_prediction``; the raw reference / answer without whitespace when absent).
Each aligned pair is one cell: ground truth above, prediction below, coloured by kind
(``d-eq``, ``d-sub``, ``d-st`` simplified/traditional only, ``d-ins``, ``d-del``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from heritage_eval.core.record import SampleRecord
from heritage_eval.viewer.diff import char_ops, op_counts, tokens
from heritage_eval.viewer.html import esc, figure, kv_table, needs_escape, text_block

if TYPE_CHECKING:
    from heritage_eval.viewer.renderers import RenderContext

_CLS = {"=": "d-eq", "s": "d-sub", "t": "d-st", "i": "d-ins", "d": "d-del"}
_TITLE = {"s": "substitution", "t": "substitution: simplified/traditional form only",
          "i": "insertion (not in the ground truth)", "d": "deletion (missed)"}
_GAP = "\u3000"  # an ideographic space keeps the empty side of a cell as wide as a char
EQ_CHUNK = 8  # equal characters per cell (a cell never breaks across lines)


def _plain(value: Any) -> str:
    if value is None:
        return ""
    return re.sub(r"\s+", "", value if isinstance(value, str) else str(value))


def diff_html(ops: list[list[str]]) -> str:
    """The aligned diff: one cell per token pair, ground truth on top."""
    cells: list[str] = []
    # escape per cell only when some text needs it (most texts: no markup characters)
    e = esc if needs_escape("".join(g + p for _, g, p in ops)) else str
    for kind, gt, pred in ops:
        if kind == "=":  # the same text on both rows lines up by itself; chunks wrap
            toks = tokens(gt)
            for k in range(0, len(toks), EQ_CHUNK):
                t = e("".join(toks[k:k + EQ_CHUNK]))
                cells.append(f'<span class="dc d-eq"><i>{t}</i><i>{t}</i></span>')
            continue
        g, p = e(gt) or _GAP, e(pred) or _GAP
        cells.append(f'<span class="dc {_CLS[kind]}" title="{_TITLE[kind]}">'
                     f"<i>{g}</i><i>{p}</i></span>")
    legend = ('<div class="legend"><span class="dc d-sub"><i>字</i></span> substitution '
              '<span class="dc d-st"><i>字</i></span> simplified/traditional only '
              '<span class="dc d-ins"><i>字</i></span> inserted '
              '<span class="dc d-del"><i>字</i></span> deleted · top: ground truth, '
              "bottom: prediction</div>")
    return f'<div class="diff" lang="zh">{"".join(cells)}</div>{legend}'


def render(record: SampleRecord, ctx: RenderContext) -> str:
    """Image, GT vs prediction, diff, scores and counts."""
    d = record.details
    turn = record.scored_turn or (record.turns[0] if record.turns else None)
    figs = "".join(figure(ctx.image(record, im.path, im.page, width=im.width,
                                    height=im.height), im.role or "image", cls="main", large=True)
                   for im in (turn.images if turn else []))
    gt = d.get("normalized_ground_truth")
    pred = d.get("normalized_prediction")
    gt = gt if isinstance(gt, str) else _plain(record.reference)
    pred = pred if isinstance(pred, str) else _plain(record.answer)
    ops = char_ops(gt, pred)
    counts = op_counts(ops)
    rows: list[tuple[str, object]] = [
        ("NED (1 − normalized edit distance)", record.scores.get("ned_score")),
        ("character F1", record.scores.get("f1"))]
    for key in ("insertions", "deletions", "substitutions", "st_only_substitutions",
                "n_gt_tokens", "n_pred_tokens", "hallucination_rate", "missing_prediction"):
        if key in d:
            rows.append((key.replace("_", " "), d[key]))
    rows.append(("diff shown (ins / del / sub / s-t only)",
                 f"{counts['insertions']} / {counts['deletions']} / "
                 f"{counts['substitutions']} / {counts['st_only']}"))
    texts = ('<div class="cols">' + text_block("ground truth", record.reference, "reference")
             + text_block("prediction (parsed)", record.answer, "answer") + "</div>")
    raw = text_block("raw response", record.response_text, "response")
    side = f'<div class="ab-scores">{kv_table(rows)}</div>'
    return (f'<div class="ab"><div class="ab-img">{figs}</div><div class="ab-text">'
            f'<div class="lbl">aligned (normalized, as scored)</div>{diff_html(ops)}'
            f"{side}{texts}{raw}</div></div>")
