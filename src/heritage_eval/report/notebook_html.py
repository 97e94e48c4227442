"""The notebook view (``_repr_html_``) of a run and of a comparison.

A run shows its headline table (model rows; per metric the value with its 95 % interval
``[low, high]``, scaled as the metric's spec says, and its n; records, unparsed and
error counts), the PARTIAL / stopped notices, the flags of the estimates shown (``†``,
explained from ``statistics.flags``), then its first :data:`MAX_SAMPLES` samples: id,
model, groups, state, reference, answer, scores. A comparison shows the models table,
the paired differences against the reference, the first warnings and the largest
disagreements.

Size is bounded whatever the run holds: at most :data:`MAX_ROWS` rows per table,
:data:`MAX_METRICS` metrics, :data:`MAX_SAMPLES` samples, :data:`MAX_WARNINGS`
warnings, every text cell clipped to :data:`MAX_CELL` characters; only the first
records are read. Every text (names, answers, references, paths, warnings) is
HTML-escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.core.record import SampleRecord
from heritage_eval.core.summary import FLAG_NOTES
from heritage_eval.report.notebook_repr import (
    FLAG_MARK,
    MISSING,
    MetricFormat,
    clip,
    clip_path,
    estimate_text,
    metric_formats,
    number_text,
)

if TYPE_CHECKING:
    from heritage_eval.report.compare import Comparison

__all__ = ["MAX_CELL", "MAX_METRICS", "MAX_ROWS", "MAX_SAMPLES", "MAX_WARNINGS",
           "comparison_html", "run_html"]

MAX_SAMPLES = 5
MAX_ROWS = 20
MAX_METRICS = 8
MAX_WARNINGS = 5
MAX_CELL = 160
_MAX_FLAGS = 6
_NUM = ' style="text-align:right"'
_LEFT = ' style="text-align:left"'


def _esc(value: object, limit: int = MAX_CELL) -> str:
    """``value`` as escaped, clipped text (``None``: :data:`MISSING`; JSON for lists and
    dicts)."""
    if value is None:
        return MISSING
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str)
    return html.escape(clip(value, limit))


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]],
           numeric: Sequence[bool]) -> str:
    """A table of already escaped cells (``numeric`` right-aligns a column)."""
    head = "".join(f"<th{_NUM if n else _LEFT}>{h}</th>" for h, n in zip(
        headers, numeric, strict=True))
    body = "".join("<tr>" + "".join(f"<td{_NUM if n else _LEFT}>{c}</td>" for c, n in zip(
        row, numeric, strict=True)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _note(text: str) -> str:
    return f'<p style="font-size:smaller">{text}</p>'


def _more(shown: int, total: int, what: str) -> str:
    return _note(f"{shown} of {total:,} {what} shown.") if total > shown else ""


def _flag_notes(flags: Sequence[str], notes: Mapping[str, Any]) -> str:
    """``† flagged: few_clusters (fewer than 20 clusters …); …`` for the distinct
    ``flags`` (their meaning from ``statistics.flags``; ``name:detail`` flags by name)."""
    distinct = list(dict.fromkeys(flags))
    if not distinct:
        return ""
    parts = []
    for flag in distinct[:_MAX_FLAGS]:
        key = next((k for k in notes if k == flag or (":" in k and flag.startswith(
            k.split(":", 1)[0] + ":"))), None)
        meaning = f" ({clip(notes[key], 100)})" if key is not None else ""
        parts.append(_esc(f"{flag}{meaning}", 160))
    more = f"; +{len(distinct) - _MAX_FLAGS} more" if len(distinct) > _MAX_FLAGS else ""
    return _note(f"{FLAG_MARK} flagged: " + "; ".join(parts) + more
                 + " (each estimate's <code>flags</code> in summary.json).")


def _estimate_cells(metrics: Any, formats: Mapping[str, MetricFormat],
                    flags: list[str]) -> list[str]:
    """Value [interval] and n of each metric of ``formats``; collects the flags."""
    cells = []
    for name, fmt in formats.items():
        est = metrics.get(name) if isinstance(metrics, Mapping) else None
        if isinstance(est, Mapping) and est.get("value") is not None:
            flags += [str(f) for f in est.get("flags") or ()]
        cells += [_esc(estimate_text(est, fmt)),
                  _esc(est.get("n") if isinstance(est, Mapping) else None)]
    return cells


def _metric_headers(formats: Mapping[str, MetricFormat]) -> list[str]:
    return [h for f in formats.values() for h in (_esc(f.label, 40), "n")]


def _scores_text(scores: Mapping[str, Any], formats: Mapping[str, MetricFormat]) -> str:
    """``NED 69.50, F1 70.00, cer 0.31`` (spec'd metrics scaled as the headline)."""
    parts = []
    for name, value in list(scores.items())[:MAX_METRICS]:
        fmt = formats.get(name)
        parts.append(f"{fmt.label} {number_text(value, fmt.scale, fmt.decimals)}" if fmt
                     else f"{name} {number_text(value, 1.0, 4)}")
    return ", ".join(parts)


def _groups_text(groups: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in groups.items())


def _samples(records: Sequence[SampleRecord], total: int,
             formats: Mapping[str, MetricFormat], with_model: bool) -> str:
    """The first :data:`MAX_SAMPLES` records as a table."""
    shown = list(records[:MAX_SAMPLES])
    if not shown:
        return _note("No sample record.")
    headers = ["id", *(["model"] if with_model else []), "groups", "state", "reference",
               "answer", "scores"]
    rows = [[_esc(r.id, 60), *([_esc(r.model, 40)] if with_model else []),
             _esc(_groups_text(r.groups), 80), _esc(r.state.value),
             _esc(r.reference), _esc(r.answer if r.answer is not None else r.error),
             _esc(_scores_text(r.scores, formats))] for r in shown]
    title = f"<p>First {len(shown)} of {total:,} samples:</p>"
    return title + _table(headers, rows, [False] * len(headers))


def _cut(formats: dict[str, MetricFormat]) -> tuple[dict[str, MetricFormat], str]:
    """The first :data:`MAX_METRICS` formats, and a note on the rest."""
    kept = dict(list(formats.items())[:MAX_METRICS])
    rest = len(formats) - len(kept)
    return kept, _note(f"{rest} more metric(s) in summary.json.") if rest > 0 else ""


def run_html(summary: Mapping[str, Any], records: Sequence[SampleRecord],
             path: str | Path) -> str:
    """The notebook view of a run (module docstring): ``summary`` is ``summary.json``
    as a dict, ``records`` the run's records (only the first :data:`MAX_SAMPLES` are
    read), ``path`` its folder. Returns an HTML fragment (a ``<div>``)."""
    formats, cut_note = _cut(metric_formats(summary))
    models = summary.get("models")
    blocks = list(models.items()) if isinstance(models, Mapping) else []
    flags: list[str] = []
    rows = []
    for name, block in blocks[:MAX_ROWS]:
        block = block if isinstance(block, Mapping) else {}
        states = block.get("states")
        states = states if isinstance(states, Mapping) else {}
        rows.append([_esc(name, 60), *_estimate_cells(block.get("metrics"), formats, flags),
                     _esc(block.get("n_records")), _esc(states.get("unparsed")),
                     _esc(states.get("error"))])
    headers = ["model", *_metric_headers(formats), "records", "unparsed", "errors"]
    parts = [f"<p><b>Run</b> {_esc(summary.get('benchmark') or '?', 60)} · "
             f"{len(records):,} records · <code>{_esc(clip_path(path, 120))}</code></p>"]
    if summary.get("partial"):
        limit = (summary.get("provenance") or {}).get("limit")
        parts.append(f"<p><b>PARTIAL</b>: a <code>limit={_esc(limit)}</code> run; only "
                     "part of the data was evaluated, not comparable with a full run.</p>")
    if summary.get("run_stopped"):
        parts.append(f"<p><b>STOPPED</b>: {_esc(summary['run_stopped'], 300)}</p>")
    parts.append(_table(headers, rows, [False, *[True] * (len(headers) - 1)]))
    stats = summary.get("statistics")
    notes = stats.get("flags") if isinstance(stats, Mapping) else None
    parts += [_more(len(rows), len(blocks), "models"), cut_note,
              _note("Values with 95 % intervals [low, high], scaled as the tables print "
                    "them."),
              _flag_notes(flags, notes if isinstance(notes, Mapping) else FLAG_NOTES),
              _samples(records, len(records), formats, len(blocks) > 1)]
    return '<div class="heritage-eval">' + "".join(parts) + "</div>"


# --- comparison --------------------------------------------------------------------------

def _models_table(comp: Comparison, formats: dict[str, MetricFormat],
                  flags: list[str]) -> str:
    rows = []
    for m in comp.models[:MAX_ROWS]:
        why = comp.not_ranked.get(m.name)
        rows.append([_esc(m.name, 60), *_estimate_cells(m.block.get("metrics"), formats,
                                                        flags),
                     _esc(len(m.records)), _esc(f"not ranked: {why}" if why else "")])
    headers = ["model", *_metric_headers(formats), "records", "note"]
    return (_table(headers, rows, [False, *[True] * (len(headers) - 2), False])
            + _more(len(rows), len(comp.models), "models"))


def _paired_table(comp: Comparison, formats: dict[str, MetricFormat]) -> str:
    if not comp.paired:
        return _note("Only one model: nothing to pair.")
    rows = []
    for p in comp.paired[:MAX_ROWS]:
        fmt = formats.get(p.metric, MetricFormat(p.label))
        diff = estimate_text({"value": p.difference, "ci_low": p.ci_low,
                              "ci_high": p.ci_high}, fmt)
        rows.append([_esc(p.model, 60), _esc(p.label, 40), _esc(diff),
                     _esc(f"{p.p_value:.3g}" if p.p_value is not None else None),
                     _esc(p.n), _esc(", ".join(p.flags) or "")])
    headers = ["model", "metric", "model − reference [95 % CI]", "p", "n pairs", "flags"]
    return (_table(headers, rows, [False, False, True, True, True, False])
            + _more(len(rows), len(comp.paired), "paired differences"))


def _disagreements(comp: Comparison, formats: dict[str, MetricFormat]) -> str:
    n = len(comp.disagreements)
    if not n:
        return _note("No disagreement with the reference.")
    names = [m.name for m in comp.models[:4]]
    rows = []
    for d in comp.disagreements[:MAX_SAMPLES]:
        cells = [_esc(d.id, 60), _esc(_groups_text(d.groups), 80), _esc(d.reference)]
        for name in names:
            e = d.models.get(name)
            if e is None:
                cells.append(MISSING)
                continue
            said = e.get("answer") if e.get("answer") is not None else e.get("error")
            cells.append(_esc(f"{clip(MISSING if said is None else said, 100)} "
                              f"({_scores_text(e.get('scores') or {}, formats)})"))
        rows.append(cells)
    headers = ["id", "groups", "reference", *(_esc(x, 40) for x in names)]
    return (f"<p>Largest {min(n, MAX_SAMPLES)} of {n:,} disagreements with the reference "
            f"(<code>disagreements</code>):</p>" + _table(headers, rows, [False] * len(headers)))


def comparison_html(comp: Comparison) -> str:
    """The notebook view of a :class:`~heritage_eval.report.compare.Comparison`: runs
    (PARTIAL marked), reference, sample set, models table with intervals, paired
    differences, first warnings, largest disagreements. Returns a ``<div>``."""
    formats, cut_note = _cut({s.name: MetricFormat(s.label, s.scale, s.decimals)
                              for s in comp.metrics})
    runs = "".join(f"<li><code>{_esc(clip_path(r, 120))}</code>"
                   + (" <b>PARTIAL</b>" if r in comp.partial_runs else "") + "</li>"
                   for r in comp.runs[:MAX_ROWS])
    parts = [f"<p><b>Comparison</b> {_esc(comp.benchmark or '?', 60)} · reference "
             f"<b>{_esc(comp.reference, 60)}</b></p><ul>{runs}</ul>",
             _more(min(len(comp.runs), MAX_ROWS), len(comp.runs), "runs")]
    ss = comp.sample_set
    if ss is not None:
        parts.append(_note(f"Samples: every model counts the same {ss.n_common:,}." if ss.same
                           else f"Samples: {ss.n_common:,} common to all models (rule "
                           f"<code>{_esc(ss.rule)}</code>)."))
    flags: list[str] = []
    parts += [_models_table(comp, formats, flags), cut_note]
    parts += [_note("Values with 95 % intervals [low, high], scaled as the tables print "
                    "them."), _flag_notes(flags, FLAG_NOTES)]
    parts += [f"<p>Paired differences against <b>{_esc(comp.reference, 60)}</b>:</p>",
              _paired_table(comp, formats)]
    if comp.warnings:
        items = "".join(f"<li>{_esc(w, 300)}</li>" for w in comp.warnings[:MAX_WARNINGS])
        parts += [f"<p>Warnings:</p><ul>{items}</ul>",
                  _more(min(len(comp.warnings), MAX_WARNINGS), len(comp.warnings),
                        "warnings")]
    parts.append(_disagreements(comp, formats))
    return '<div class="heritage-eval">' + "".join(parts) + "</div>"
