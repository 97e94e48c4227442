"""One-line reprs of runs and comparisons for notebooks and consoles, and the number
formats the notebook HTML shares with them.

A repr never reads the records (a 100,000-record run costs the same as a 27-record one):
the headline comes from ``summary.json`` (``models[model]["metrics"][name]`` with
``value``, ``ci_low``, ``ci_high``, ``n``, ``flags``), scaled and rounded as the
metric's spec says (``statistics.metric_specs``: ``scale``, ``decimals``, ``label``).
Every part is clipped, so a repr stays under :data:`REPR_LIMIT` characters whatever
the names, paths or number of models.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from heritage_eval.report.compare import Comparison

__all__ = ["REPR_LIMIT", "MetricFormat", "clip", "comparison_repr", "estimate_text",
           "metric_formats", "number_text", "run_repr"]

#: Upper bound on the length of every repr this module builds (characters).
REPR_LIMIT = 200
#: Printed for a missing value (as the Markdown tables do).
MISSING = "—"
#: Marks an estimate with flags (few clusters, one observation …: ``statistics.flags``).
FLAG_MARK = "†"


def clip(text: object, limit: int) -> str:
    """``text`` on one line (runs of whitespace, newlines included, become one space),
    cut to at most ``limit`` characters (>= 1) with a final ``…`` when cut."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:max(limit - 1, 0)] + "…"


def clip_path(path: object, limit: int) -> str:
    """``path`` as text, its tail kept when longer than ``limit`` (``…/runs/demo``)."""
    text = " ".join(str(path).split())
    return text if len(text) <= limit else "…" + text[-(limit - 1):]


@dataclass(frozen=True)
class MetricFormat:
    """How a metric prints: ``label``, ``scale`` (multiplies values and bounds: 100 for
    fractions shown as percent) and ``decimals``."""

    label: str
    scale: float = 100.0
    decimals: int = 2


def metric_formats(summary: Mapping[str, Any]) -> dict[str, MetricFormat]:
    """Metric name -> :class:`MetricFormat` from ``statistics.metric_specs`` (in spec
    order), then any metric of a model block without a spec (label from the estimate,
    scale 100, 2 decimals: the :class:`~heritage_eval.core.benchmark.MetricSpec`
    defaults)."""
    out: dict[str, MetricFormat] = {}
    stats = summary.get("statistics")
    specs = stats.get("metric_specs") if isinstance(stats, Mapping) else None
    for spec in specs if isinstance(specs, list) else []:
        if isinstance(spec, Mapping) and "name" in spec:
            out[str(spec["name"])] = MetricFormat(
                str(spec.get("label", spec["name"])), float(spec.get("scale", 100.0)),
                int(spec.get("decimals", 2)))
    models = summary.get("models")
    for block in models.values() if isinstance(models, Mapping) else []:
        metrics = block.get("metrics") if isinstance(block, Mapping) else None
        for name, est in metrics.items() if isinstance(metrics, Mapping) else []:
            if name not in out:
                label = est.get("label", name) if isinstance(est, Mapping) else name
                out[str(name)] = MetricFormat(str(label))
    return out


def number_text(value: Any, scale: float = 1.0, decimals: int = 2) -> str:
    """``value * scale`` with ``decimals`` digits (``-0.00`` prints ``0.00``);
    :data:`MISSING` for ``None``, NaN or anything not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    x = float(value) * scale
    if not math.isfinite(x):
        return MISSING if math.isnan(x) else str(x)
    text = f"{x:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def estimate_text(est: Any, fmt: MetricFormat, *, mark: bool = True) -> str:
    """``69.50 [53.49, 85.51]`` for an estimate dict (value and 95 % interval, scaled);
    the value alone without an interval; :data:`MISSING` without a value. With
    ``mark``, :data:`FLAG_MARK` follows when the estimate has flags."""
    if not isinstance(est, Mapping) or est.get("value") is None:
        return MISSING
    text = number_text(est["value"], fmt.scale, fmt.decimals)
    lo, hi = est.get("ci_low"), est.get("ci_high")
    if lo is not None and hi is not None:
        text += (f" [{number_text(lo, fmt.scale, fmt.decimals)}, "
                 f"{number_text(hi, fmt.scale, fmt.decimals)}]")
    return text + (FLAG_MARK if mark and est.get("flags") else "")


def _headline(blocks: Sequence[tuple[str, Mapping[str, Any]]],
              formats: Mapping[str, MetricFormat], budget: int) -> str:
    """``NED 69.50 [53.49, 85.51]`` (one model) or ``NED: a 69.50 […]; b …; +2 more``:
    the first metric of the model blocks (``(name, block)`` pairs), as many whole
    entries as fit in ``budget`` characters (empty when none does)."""
    if not formats or not blocks:
        return ""
    name, fmt = next(iter(formats.items()))

    def value(block: Mapping[str, Any]) -> str:
        metrics = block.get("metrics")
        return estimate_text(metrics.get(name) if isinstance(metrics, Mapping) else None,
                             fmt)

    label = clip(fmt.label, 16)
    if len(blocks) == 1:
        text = f"{label} {value(blocks[0][1])}"
        return text if len(text) <= budget else ""
    text = f"{label}:"
    for i, (model, block) in enumerate(blocks):
        entry = f"{clip(model, 26)} {value(block)}"
        rest = len(blocks) - i - 1
        tail = f"; +{rest} more" if rest else ""
        sep = " " if i == 0 else "; "
        if len(text) + len(sep) + len(entry) + len(tail) > budget:
            return f"{text} +{len(blocks) - i} more" if i else ""
        text += sep + entry
    return text


def _names(names: Sequence[str], limit: int) -> str:
    """``a, b`` or ``3 models: a, b, …`` within ``limit`` characters."""
    if len(names) == 1:
        return clip(names[0], limit)
    return clip(f"{len(names)} models: " + ", ".join(names), limit)


def _assemble(head: str, parts: Sequence[str], headline: str, at: int) -> str:
    """``<head: parts…>`` with ``headline`` inserted at position ``at`` of ``parts``
    when it fits in :data:`REPR_LIMIT` (the other parts are bounded so that it does)."""
    shown = [*parts[:at], headline, *parts[at:]] if headline else list(parts)
    return clip(f"<{head}: " + ", ".join(p for p in shown if p), REPR_LIMIT - 1) + ">"


def _budget(head: str, parts: Sequence[str]) -> int:
    """Characters left for the headline after ``<head: parts…>`` and its separator."""
    return REPR_LIMIT - len(f"<{head}: " + ", ".join(p for p in parts if p) + ">") - 2


def run_repr(summary: Mapping[str, Any], n_records: int, path: str | Path) -> str:
    """``<Run ancient-bench: rapidocr, 27 records, NED 69.50 [53.49, 85.51], /tmp/demo>``:
    benchmark, model(s), records, the first metric of the first model(s) with its 95 %
    interval (``†``: flagged; none for a study over conditions, whose summary has a
    ``headline_note``), ``PARTIAL`` for a ``--limit`` run, ``STOPPED`` for a
    stopped one, the folder. At most :data:`REPR_LIMIT` characters."""
    models = summary.get("models")
    blocks = [(str(m), b) for m, b in models.items() if isinstance(b, Mapping)] \
        if isinstance(models, Mapping) else []
    parts = [_names([m for m, _ in blocks], 40) if blocks else "no model",
             f"{n_records:,} records"]
    parts += ["PARTIAL"] * bool(summary.get("partial"))
    parts += ["STOPPED"] * bool(summary.get("run_stopped"))
    parts.append(clip_path(path, 44))
    head = f"Run {clip(summary.get('benchmark', '') or '?', 24)}"
    if summary.get("headline_note"):  # a study over conditions (e.g. K = 2..10): a value
        # pooled over them measures no setting, so none is shown (as the CLI does)
        return _assemble(head, parts, "per condition, no pooled headline", 2)
    headline = _headline(blocks, metric_formats(summary), _budget(head, parts))
    return _assemble(head, parts, headline, 2)


def comparison_repr(comp: Comparison) -> str:
    """``<Comparison ancient-bench: ref rapidocr, NED: a 69.50 […]; b …, 2 models, 27
    common samples, 3 disagreements, 1 PARTIAL run(s), 2 warning(s)>``: benchmark,
    reference, the first metric of as many models as fit with 95 % intervals, models,
    the sample set, disagreements, PARTIAL runs, warnings. At most :data:`REPR_LIMIT`
    characters."""
    blocks = [(m.name, m.block) for m in comp.models]
    formats = {s.name: MetricFormat(s.label, s.scale, s.decimals) for s in comp.metrics}
    parts = [f"ref {clip(comp.reference, 32)}", f"{len(comp.models)} models"]
    ss = comp.sample_set
    if ss is not None:
        parts.append(f"{ss.n_common:,} common samples" if ss.same or ss.rule == "common"
                     else "DIFFERENT sample sets")
    parts.append(f"{len(comp.disagreements):,} disagreements")
    if comp.partial_runs:
        parts.append(f"{len(comp.partial_runs)} PARTIAL run(s)")
    if comp.warnings:
        parts.append(f"{len(comp.warnings)} warning(s)")
    head = f"Comparison {clip(comp.benchmark or '?', 24)}"
    headline = _headline(blocks, formats, _budget(head, parts))
    return _assemble(head, parts, headline, 1)
