"""The header of each run on the site (static HTML, shown before any script runs).

Per run: name, benchmark, PARTIAL badge; per model: each metric with its 95 % interval,
n and standard error (in the metric's display scale and decimals), the invalid rate,
the outcome-state counts, a table per group key; provenance (model, backend, generation
settings, prompt hash, data, package version, git commit, command); the run's plots;
a "problems" box listing what could not be read.

A study run (HCSU K / shot sweep, ablation, robustness) names its condition tag in
``summary.json`` ``condition_keys``: its conditions differ (chance 1/K …), so its headline
is the per-condition table (value [95 % interval] per condition, shown open), and the
pooled metrics are folded away under a label that says they are not meaningful
(``headline_note``).

A model none of whose metric estimates has a value (a run with ``--no-bertscore`` and
no judge, say) shows one line, :func:`~heritage_eval.core.run_tables.nothing_scored`,
as the console and ``summary.md`` do, in place of its metric rows, its per-condition
table and its per-group tables (tables of "—" with n 0); its invalid-rate and
model-failure rows stay, since they count answers, not scores (:func:`has_estimate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heritage_eval.core.run_tables import nothing_scored
from heritage_eval.viewer.html import badge, esc, json_details, kv_table, table
from heritage_eval.viewer.runs import RunData

STATES = ("scored", "unparsed", "error", "unscored")
_PROV_KEYS = ("model", "backend", "generation_settings", "base_url", "judge", "embedder",
              "prompt_templates_hash", "prompt_hash", "prompt_source", "protocol", "data",
              "package_version", "git_commit", "created_utc", "command")


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def metric_specs(summary: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The summary's metric specs (``name``, ``label``, ``scale``, ``decimals``), or specs
    guessed from the first model's metric names (scale 1, 3 decimals)."""
    if not summary:
        return []
    stats = summary.get("statistics")
    specs = stats.get("metric_specs") if isinstance(stats, dict) else None
    if isinstance(specs, list) and all(isinstance(s, dict) and "name" in s for s in specs):
        return specs
    models = _d(summary.get("models"))
    first = _d(next(iter(models.values()), None))
    return [{"name": n, "label": _d(m).get("label", n), "scale": 1.0, "decimals": 3}
            for n, m in _d(first.get("metrics")).items()]


def fmt_estimate(est: Any, spec: dict[str, Any], *, with_n: bool = False) -> str:
    """``value [ci_low, ci_high]`` in display units (``—`` when absent; ``[—]`` for a
    value without an interval, e.g. n = 1; a ``†`` whose tooltip lists the estimate's
    flags)."""
    if not isinstance(est, dict) or not isinstance(est.get("value"), int | float):
        return '<span class="muted">—</span>'
    scale = float(spec.get("scale") or 1.0)
    dec = spec.get("decimals")
    dec = int(dec) if isinstance(dec, int | float) else 3
    out = f"<b>{est['value'] * scale:.{dec}f}</b>"
    lo, hi = est.get("ci_low"), est.get("ci_high")
    if isinstance(lo, int | float) and isinstance(hi, int | float):
        out += f' <span class="ci">[{lo * scale:.{dec}f}, {hi * scale:.{dec}f}]</span>'
    else:
        out += ' <span class="ci">[—]</span>'
    flags = [str(f) for f in est.get("flags") or () if f not in ("n_1", "one_cluster")]
    if flags:
        out += f' <span class="muted" title="{esc(", ".join(flags))}">†</span>'
    if with_n and est.get("n") is not None:
        out += f' <span class="muted">n={esc(est["n"])}</span>'
    return out


def _has_value(est: Any) -> bool:
    return isinstance(est, dict) and isinstance(est.get("value"), int | float)


def has_estimate(block: dict[str, Any]) -> bool:
    """Whether any metric estimate of a model's summary block has a value: a headline
    metric (``metrics``) or a group's (``groups.<key>.<value>``); the invalid rate and
    the model-failure rate do not count."""
    groups = (_d(ests).values() for vals in _d(block.get("groups")).values()
              for ests in _d(vals).values())
    return any(_has_value(e) for e in _d(block.get("metrics")).values()) or any(
        _has_value(e) for g in groups for e in g)


def _nothing_scored(summary: dict[str, Any] | None) -> str:
    return f'<p class="muted nothing-scored">{esc(nothing_scored(summary))}</p>'


def _metrics_table(block: dict[str, Any], specs: Sequence[dict[str, Any]],
                   with_metrics: bool = True) -> str:
    rows = []
    metrics = _d(block.get("metrics")) if with_metrics else {}
    for spec in specs:
        est = metrics.get(spec["name"])
        if est is None:
            continue
        scale = float(spec.get("scale") or 1.0)
        se = est.get("stderr") if isinstance(est, dict) else None
        rows.append([esc(spec.get("label", spec["name"])), fmt_estimate(est, spec),
                     esc(est.get("n") if isinstance(est, dict) else ""),
                     "—" if not isinstance(se, int | float) else f"{se * scale:.3g}"])
    for key, label in (("invalid_rate", "invalid rate (%)"),
                       ("model_failure_rate", "model failures (%)")):
        inv = block.get(key)
        if isinstance(inv, dict):
            rows.append([label, fmt_estimate(inv, {"scale": 100, "decimals": 1}),
                         esc(inv.get("n")), "—" if not isinstance(inv.get("stderr"), float)
                         else f"{inv['stderr'] * 100:.3g}"])
    if not rows and not with_metrics:
        return ""
    return table(["metric", "value [95 % CI]", "n", "stderr"], rows, "grid metrics")


def _states(block: dict[str, Any]) -> str:
    states = _d(block.get("states"))
    return '<div class="states">' + " ".join(
        f'{badge(s)} <b>{esc(states.get(s, 0))}</b>' for s in STATES) + "</div>"


def _groups(block: dict[str, Any], specs: Sequence[dict[str, Any]]) -> str:
    groups = _d(block.get("groups"))
    out = []
    for key, values in groups.items():
        if not isinstance(values, dict) or not values:
            continue
        rows = []
        for value, ests in values.items():
            cells = [fmt_estimate(ests.get(s["name"]) if isinstance(ests, dict) else None,
                                  s, with_n=True) for s in specs]
            rows.append([esc(value), *cells])
        head = [esc(key)] + [esc(s.get("label", s["name"])) for s in specs]
        out.append(f'<details class="groups"><summary>by {esc(key)} ({len(values)})'
                   f"</summary>{table(head, rows, 'grid groups')}</details>")
    return "".join(out)


def _condition_headline(block: dict[str, Any], specs: Sequence[dict[str, Any]],
                        key: str, note: str) -> str:
    """The headline of a study: per value of the condition tag ``key`` each metric with
    its interval (open table), then the pooled table folded away and labelled."""
    values = _d(_d(block.get("groups")).get(key))
    rows = [[esc(v), *(fmt_estimate(_d(ests).get(s["name"]), s, with_n=True)
                       for s in specs)] for v, ests in values.items()]
    head = [esc(key)] + [esc(s.get("label", s["name"])) for s in specs]
    return (f'<div class="condition-headline"><b>per {esc(key)}</b>'
            f"{table(head, rows, 'grid groups')}"
            f'<p class="muted small">{esc(note)}</p></div>'
            f'<details class="pooled"><summary>pooled over every {esc(key)} '
            f"(not meaningful)</summary>{_metrics_table(block, specs)}</details>")


def _provenance(run: RunData) -> str:
    prov = run.summary.get("provenance") if run.summary else None
    if not isinstance(prov, dict):
        prov = {}
    rows = [(k, prov[k]) for k in _PROV_KEYS if prov.get(k) not in (None, "", {}, [])]
    cfg_hash = run.run_json.get("config_hash") if run.run_json else None
    if cfg_hash:
        rows.append(("config hash", cfg_hash))
    body = kv_table(rows, "kv prov") if rows else '<p class="muted">no provenance recorded</p>'
    full = json_details("full provenance", prov) if prov else ""
    cfg = json_details("run.json", run.run_json) if run.run_json else ""
    return f'<details class="prov"><summary>provenance</summary>{body}{full}{cfg}</details>'


def problems_box(problems: Sequence[str], limit: int = 200) -> str:
    """The "problems" box (skipped lines, missing files …); empty when none."""
    if not problems:
        return ""
    items = "".join(f"<li><code>{esc(p)}</code></li>" for p in problems[:limit])
    more = f"<li>… and {len(problems) - limit} more</li>" if len(problems) > limit else ""
    return (f'<div class="problems"><b>problems ({len(problems)})</b><ul>{items}{more}</ul>'
            "</div>")


def run_header(run: RunData, index: int, plots: Sequence[str],
               problems: Sequence[str]) -> str:
    """The header block of run ``index``: see the module docstring. ``plots``: site paths
    of the run's plots; ``problems``: notes to list."""
    s = run.summary or {}
    partial = bool(s.get("partial")) or bool(run.run_json and run.run_json.get("partial"))
    tag = ' <span class="badge partial" title="a --limit or interrupted run: not every '\
          'sample was evaluated">PARTIAL</span>' if partial else ""
    parts = [f'<section class="run" id="run-{index}"><h2>{esc(run.name)} '
             f'<span class="bench">{esc(run.benchmark or "unknown benchmark")}</span>{tag}'
             f'</h2><div class="muted small path">{esc(run.path)}</div>']
    if run.refused:
        parts.append(f'<p class="problem refused">{esc(run.refused)}</p>')
    specs = metric_specs(run.summary)
    models = _d(s.get("models"))
    cond = [str(k) for k in s.get("condition_keys") or () if isinstance(k, str)][:1]
    note = str(s.get("headline_note") or "the conditions differ: a pooled value is not "
               "meaningful")
    for model, block in models.items():
        if not isinstance(block, dict):
            continue
        scored = has_estimate(block)
        head = (_condition_headline(block, specs, cond[0], note) if cond and scored
                else _metrics_table(block, specs) if scored
                else _nothing_scored(run.summary)
                + _metrics_table(block, specs, with_metrics=False))
        parts.append(f'<div class="model-block"><h3>{esc(model)}</h3>'
                     f'<div class="mb-row">{head}{_states(block)}'
                     f"</div>{_groups(block, specs) if scored else ''}</div>")
    parts.append(_provenance(run))
    if plots:
        figs = "".join(f'<a href="{esc(p)}" target="_blank"><img src="{esc(p)}" alt="plot" '
                       f'loading="lazy"></a>' for p in plots)
        parts.append(f'<details class="plots" open><summary>plots ({len(plots)})</summary>'
                     f'<div class="plot-row">{figs}</div></details>')
    parts.append(problems_box(problems))
    parts.append("</section>")
    return "".join(parts)
