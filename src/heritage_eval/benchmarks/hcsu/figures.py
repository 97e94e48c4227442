"""Figures of the HCSU studies (matplotlib, Agg backend, PNG): ``k_sweep.png`` and
``shot_sweep.png`` in the study's run folder.

Each has a ``*_figure`` builder returning the :class:`~matplotlib.figure.Figure` (tests
read its axes back) and a ``plot_*`` writer. Every point is a number of the study's
``results`` (the table's number); its error bar is the 95 % interval of the same mean
computed from the sample records (:data:`Intervals`: a study folds them one record at
a time, :mod:`.study_stream`; :func:`record_intervals` builds them from a list) with the
summary's statistics (cluster-robust over classes; the average over domains
combining the domains' standard errors, as ``summary.json``'s ``groups.<tag>.<value>``). Scores
start at 0; the title names the model(s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.summary import ModelFacts

Entry = Mapping[str, Any]
#: error-bar note added to every axis label
CI_NOTE = "error bars: 95 % interval"
#: upper end of the description scales (BERTScore x10, judge scores 0-10)
DESCRIPTION_TOP = 10.0


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _domains(results: Sequence[Entry]) -> list[str]:
    return sorted({d for r in results for d in (r.get("per_domain") or {})})


def _models(results: Sequence[Entry]) -> str:
    return ", ".join(dict.fromkeys(str(r.get("model")) for r in results)) or "?"


#: tag value (``str``) -> the condition's interval block: a
#: :func:`~heritage_eval.core.summary.model_block` of its records grouped by ``domain``
#: (``metrics.<name>`` over all domains, ``groups.domain.<domain>.<name>`` within one)
Intervals = Mapping[str, Mapping[str, Any]]


def record_intervals(records: Sequence[SampleRecord], key: str,
                     metrics: Sequence[MetricSpec]) -> dict[str, dict[str, Any]]:
    """The :data:`Intervals` of listed ``records`` under the tag ``key`` (records
    without it are left out): what a streamed study folds one record at a time
    (:class:`~.study_stream.StudyStream`)."""
    facts: dict[str, ModelFacts] = {}
    for r in records:
        value = r.groups.get(key)
        if value is not None:
            facts.setdefault(str(value), ModelFacts(metrics, ("domain",))).add(r)
    return {v: f.block() for v, f in facts.items()}


def _blocks(source: Intervals | Sequence[SampleRecord], key: str,
            metrics: Sequence[MetricSpec]) -> Intervals:
    if isinstance(source, Mapping):
        return source
    return record_intervals(source, key, metrics)


def _estimate(blocks: Intervals, value: Any, spec: MetricSpec, domain: str | None = None
              ) -> Mapping[str, Any]:
    """The estimate of ``spec`` in the condition ``value`` (within ``domain``, or over
    all domains); empty when there is none."""
    block = blocks.get(str(value)) or {}
    if domain is None:
        return (block.get("metrics") or {}).get(spec.name) or {}
    dom = ((block.get("groups") or {}).get("domain") or {}).get(domain) or {}
    return dom.get(spec.name) or {}


def _interval(blocks: Intervals, value: Any, spec: MetricSpec, domain: str | None = None
              ) -> tuple[float | None, float | None]:
    """``(ci_low, ci_high)`` of :func:`_estimate`."""
    est = _estimate(blocks, value, spec, domain)
    return est.get("ci_low"), est.get("ci_high")


def errorbar_line(ax: Axes, xs: Sequence[float], ys: Sequence[float | None],
                  cis: Sequence[tuple[float | None, float | None]], scale: float,
                  **style: Any) -> None:
    """One line with asymmetric error bars (``ys`` and ``cis`` in score units, drawn times
    ``scale``; ``style``: matplotlib ``errorbar`` keywords); points without a value are left out, a
    missing interval gives a bar of length 0."""
    pts = [(x, y, ci) for x, y, ci in zip(xs, ys, cis, strict=True) if y is not None]
    if not pts:
        return
    x = np.array([p[0] for p in pts], dtype=float)
    y = np.array([scale * float(p[1]) for p in pts])
    lo = np.array([y_ - scale * c[0] if c[0] is not None else 0.0
                   for y_, (_, _, c) in zip(y, pts, strict=True)])
    hi = np.array([scale * c[1] - y_ if c[1] is not None else 0.0
                   for y_, (_, _, c) in zip(y, pts, strict=True)])
    ax.errorbar(x, y, yerr=np.vstack([np.clip(lo, 0, None), np.clip(hi, 0, None)]),
                capsize=3, elinewidth=1, marker="o", markersize=4, **style)


def k_sweep_figure(results: Sequence[Entry],
                   intervals: Intervals | Sequence[SampleRecord]) -> Figure:
    """Accuracy (%) per K: one line per domain and the average over domains (Avg. Acc),
    each with 95 % error bars, and the chance level 1/K. ``results``: the study's
    ``results`` entries (``k``, ``per_domain``, ``avg_accuracy``); ``intervals``: its
    :data:`Intervals` by ``k``, or its sample records (groups ``k`` and ``domain``)."""
    ks = [int(r["k"]) for r in results]
    blocks = _blocks(intervals, "k", (ACCURACY,))
    domains = _domains(results)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    offsets = np.linspace(-0.06, 0.06, len(domains) + 1) if domains else [0.0]
    for off, domain in zip(offsets, domains, strict=False):
        ys = [((r.get("per_domain") or {}).get(domain) or {}).get("accuracy")
              for r in results]
        cis = [_interval(blocks, k, ACCURACY, domain) for k in ks]
        errorbar_line(ax, [k + off for k in ks], ys, cis, 100.0, label=f"{domain} Acc",
              linewidth=1.2, alpha=0.9)
    cis = [_interval(blocks, k, ACCURACY) for k in ks]
    errorbar_line(ax, [k + offsets[-1] for k in ks], [r.get("avg_accuracy") for r in results],
                  cis, 100.0, label="Avg. Acc (mean of domains)", color="black", linewidth=2)
    ax.plot(ks, [100 / k for k in ks], "--", color="gray", label="chance (1/K)")
    pool = {str(r.get("distractor_pool")) for r in results if r.get("distractor_pool")}
    desc = {str(r.get("descriptions")) for r in results if r.get("descriptions")}
    ax.set_title(f"HCSU K-way discrimination — {_models(results)}\n"
                 f"distractor pool: {', '.join(sorted(pool)) or '?'}; "
                 f"descriptions: {', '.join(sorted(desc)) or '?'}", fontsize=9)
    ax.set_xlabel("K (candidates per question)")
    ax.set_ylabel(f"accuracy (%) — {CI_NOTE}", fontsize=8)
    ax.set_xticks(ks)
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    fig.legend(loc="outside right center", fontsize=8)
    return fig


def plot_k_sweep(results: Sequence[Entry], intervals: Intervals | Sequence[SampleRecord],
                 path: Path) -> Path:
    """:func:`k_sweep_figure` written to ``path``."""
    return _save(k_sweep_figure(results, intervals), path)


def _shot_panel(ax: Axes, spec: MetricSpec, results: Sequence[Entry], blocks: Intervals,
                domains: list[str]) -> None:
    shots = [int(r["shots"]) for r in results]
    offsets = np.linspace(-0.08, 0.08, len(domains) + 1) if domains else [0.0]
    colors = {d: f"C{i}" for i, d in enumerate(domains)}
    for off, domain in zip(offsets, domains, strict=False):
        ys = [((r.get("per_domain") or {}).get(domain) or {}).get(spec.name)
              for r in results]
        cis = [_interval(blocks, n, spec, domain) for n in shots]
        errorbar_line(ax, [n + off for n in shots], ys, cis, 1.0, label=domain,
                      color=colors[domain], linewidth=1.2)
        expert = next((((r.get("per_domain") or {}).get(domain) or {})
                       .get(f"expert_{spec.name}") for r in results
                       if ((r.get("per_domain") or {}).get(domain) or {})
                       .get(f"expert_{spec.name}") is not None), None)
        if expert is not None:
            ax.axhline(float(expert), ls=":", color=colors[domain],
                       label=f"{domain} expert reference (judged)")
    pooled = [_estimate(blocks, n, spec) for n in shots]  # no macro_over: pooled mean
    errorbar_line(ax, [n + offsets[-1] for n in shots], [e.get("value") for e in pooled],
                  [(e.get("ci_low"), e.get("ci_high")) for e in pooled], 1.0,
                  label="all domains", color="black", linewidth=2)
    if spec.name == "bertscore_x10":
        ref = next((r["expert_reference"]["bertscore_x10"] for r in results
                    if (r.get("expert_reference") or {}).get("bertscore_x10") is not None),
                   None)
        if ref is not None:
            ax.axhline(float(ref), ls=":", color="gray",
                       label=f"expert reference vs itself ({float(ref):.2f}, ceiling)")
    ax.set_title(spec.label, fontsize=9)
    ax.set_xticks(shots)
    ax.set_xlabel("shots (example descriptions in the prompt)")
    ax.set_ylim(0, DESCRIPTION_TOP * 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")


def shot_sweep_figure(results: Sequence[Entry],
                      intervals: Intervals | Sequence[SampleRecord]) -> Figure:
    """Description scores per shot count: one panel per metric that has a value
    (BERTScore x10; Term. and Rich. with a judge), one line per domain and the pooled
    mean over all samples (the table's number), each with 95 % error bars, and the
    expert-reference lines (references scored against themselves for BERTScore, the
    judge's scores of the references for Term. / Rich.). ``intervals``: the study's
    :data:`Intervals` by ``shots``, or its sample records. Without any score the figure
    says so."""
    specs = [s for s in DESCRIPTION_METRICS
             if any(((r.get("per_domain") or {}).get(d) or {}).get(s.name) is not None
                    for r in results for d in (r.get("per_domain") or {}))]
    domains = _domains(results)
    blocks = _blocks(intervals, "shots", DESCRIPTION_METRICS)
    fig, axes = plt.subplots(1, max(1, len(specs)), figsize=(4.6 * max(1, len(specs)), 4.2),
                             layout="constrained", squeeze=False)
    for ax, spec in zip(axes[0], specs, strict=False):
        _shot_panel(ax, spec, results, blocks, domains)
    if not specs:
        axes[0][0].text(0.5, 0.5, "no description score to plot\n(no BERTScore, no judge)",
                        ha="center", va="center", transform=axes[0][0].transAxes)
        axes[0][0].set_axis_off()
    axes[0][0].set_ylabel(f"score (0–10) — {CI_NOTE}", fontsize=8)
    fig.suptitle(f"HCSU few-shot description — {_models(results)}", fontsize=10)
    return fig


def plot_shot_sweep(results: Sequence[Entry],
                    intervals: Intervals | Sequence[SampleRecord], path: Path) -> Path:
    """:func:`shot_sweep_figure` written to ``path``."""
    return _save(shot_sweep_figure(results, intervals), path)
