"""MUSE figures (matplotlib, Agg backend, PNG): correlation heatmaps, a radar chart of the
top models over the tasks, stacked bars of chosen distractor types, invalid rates.

Each figure has a ``*_figure`` builder returning the :class:`~matplotlib.figure.Figure`
(for tests that read the axes back) and a writer that saves it. Layout is constrained
(titles, tick labels and legends never overlap); legends sit outside the data. Scores
carry error bars from their 95 % intervals where these are given; rates start at 0.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from heritage_eval.benchmarks.muse.analysis.distractors import legend_label

#: default note drawn on a rate chart whose every value is 0
ALL_ZERO_NOTE = "all 0 %"


def _save(fig: Figure, path: Path) -> Path:
    """Write (PNG, 120 dpi, tight bounding box) and close ``fig``; returns ``path``."""
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _wrap(title: str, width: int = 70) -> str:
    return "\n".join(textwrap.wrap(title, width)) or title


def heatmap(rho: pd.DataFrame, path: Path, title: str) -> Path:
    """Annotated heatmap of a correlation matrix (values in [-1, 1]; NaN left blank)."""
    h, w = rho.shape
    fig, ax = plt.subplots(figsize=(1.1 + 0.65 * w, 1.0 + 0.5 * h), layout="constrained")
    im = ax.imshow(rho.to_numpy(dtype=float), cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(range(w), [str(c) for c in rho.columns], rotation=45, ha="right",
                  fontsize=8)
    ax.set_yticks(range(h), [str(i) for i in rho.index], fontsize=8)
    for i in range(h):
        for j in range(w):
            v = rho.iat[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(v) > 0.6 else "black")
    fig.colorbar(im, ax=ax, fraction=0.04, label="Spearman ρ")
    ax.set_title(_wrap(title, 60), fontsize=10)
    return _save(fig, path)


def _yerr(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Asymmetric error-bar lengths (2, n); 0 where the interval is missing."""
    lo = np.where(np.isfinite(low), values - low, 0.0)
    hi = np.where(np.isfinite(high), high - values, 0.0)
    return np.vstack([np.clip(lo, 0, None), np.clip(hi, 0, None)])


def radar_figure(table: pd.DataFrame, title: str, low: pd.DataFrame | None = None,
                 high: pd.DataFrame | None = None) -> Figure:
    """Radar chart: one polygon per row (model), one axis per column (task), 0–100, with a
    radial error bar at each vertex from ``low`` / ``high`` (same labels, percent; missing
    intervals drawn without). Missing values are drawn at 0; callers pass only columns
    every row has. The legend is below the chart, the title above the top label."""
    cols = list(table.columns)
    angles = np.linspace(0, 2 * np.pi, len(cols), endpoint=False)
    fig, ax = plt.subplots(figsize=(7.5, 7.8), subplot_kw={"polar": True},
                           layout="constrained")
    for model, row in table.iterrows():
        vals = row.fillna(0.0).to_numpy(dtype=float)
        closed_a, closed_v = np.append(angles, angles[0]), np.append(vals, vals[0])
        (line,) = ax.plot(closed_a, closed_v, linewidth=1.5, label=str(model))
        ax.fill(closed_a, closed_v, alpha=0.08, color=line.get_color())
        if low is not None and high is not None and model in low.index:
            lo = low.reindex(index=[model], columns=cols).to_numpy(dtype=float)[0]
            hi = high.reindex(index=[model], columns=cols).to_numpy(dtype=float)[0]
            ax.errorbar(angles, vals, yerr=_yerr(vals, lo, hi), fmt="none",
                        ecolor=line.get_color(), elinewidth=1, capsize=2, alpha=0.8)
    ax.set_xticks(angles, cols, fontsize=8)
    ax.set_ylim(0, 100)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title(_wrap(title), fontsize=10, pad=26)
    note = " (error bars: 95 % interval)" if low is not None else ""
    fig.legend(loc="outside lower center", ncols=min(3, max(1, len(table))), fontsize=8,
               title=f"model{note}", title_fontsize=8)
    return fig


def radar(table: pd.DataFrame, path: Path, title: str, low: pd.DataFrame | None = None,
          high: pd.DataFrame | None = None) -> Path:
    """:func:`radar_figure` written to ``path``."""
    return _save(radar_figure(table, title, low, high), path)


def stacked_bars_figure(table: pd.DataFrame, counts: pd.DataFrame, title: str,
                        xlabel: str) -> Figure:
    """Horizontal stacked bars: one bar per row, segments = columns (percent of the row).

    ``counts`` (same shape): the answer counts behind the percentages; each bar is labelled
    ``model (n=total)`` and each segment wide enough shows ``share% (count)``. The legend,
    below the bars, names every distractor type with its meaning (``oosi: an object of
    the same image (short phrase)``).
    """
    ncols = 2 if len(table.columns) > 3 else 1
    legend_rows = -(-len(table.columns) // ncols)
    fig, ax = plt.subplots(figsize=(9, 1.5 + 0.45 * len(table) + 0.2 * legend_rows),
                           layout="constrained")
    left = np.zeros(len(table))
    totals = counts.sum(axis=1)
    labels = [f"{i} (n={int(totals.get(i, 0))})" for i in table.index]
    for col in table.columns:
        vals = table[col].to_numpy(dtype=float)
        bars = ax.barh(labels, vals, left=left, label=legend_label(str(col)))
        for rect, v, c in zip(bars, vals, counts[col].to_numpy(), strict=True):
            if v >= 5.0:
                ax.text(rect.get_x() + rect.get_width() / 2, rect.get_y() + rect.get_height() / 2,
                        f"{v:.0f}% ({int(c)})", ha="center", va="center", fontsize=6)
        left += vals
    ax.set_xlabel(xlabel)
    ax.set_xlim(0, 100)
    ax.invert_yaxis()  # first model (Table 2 order) on top
    ax.set_title(_wrap(title, 90), fontsize=10)
    fig.legend(loc="outside lower center", ncols=ncols,
               fontsize=7, title="distractor type: what the chosen wrong option was",
               title_fontsize=7)
    return fig


def stacked_bars(table: pd.DataFrame, counts: pd.DataFrame, path: Path, title: str,
                 xlabel: str) -> Path:
    """:func:`stacked_bars_figure` written to ``path``."""
    return _save(stacked_bars_figure(table, counts, title, xlabel), path)


def bars_figure(values: pd.Series, title: str, xlabel: str,
                ci: pd.DataFrame | None = None, zero_note: str = ALL_ZERO_NOTE) -> Figure:
    """Horizontal bars of a rate (percent), one per index entry, first entry on top; the
    axis starts at 0, each bar is labelled with its value, error bars come from ``ci``
    (``ci_low`` / ``ci_high`` per index entry, percent) where given, and a chart whose
    every value is 0 says so (``zero_note``) on an axis from 0 to 1 %."""
    vals = values.fillna(0.0).to_numpy(dtype=float)
    names = [str(i) for i in values.index]
    fig, ax = plt.subplots(figsize=(7, 1.5 + 0.4 * len(values)), layout="constrained")
    xerr = None
    if ci is not None and not ci.empty:
        c = ci.reindex(values.index)
        xerr = _yerr(vals, c["ci_low"].to_numpy(dtype=float),
                     c["ci_high"].to_numpy(dtype=float))
    ax.barh(names, vals, xerr=xerr, capsize=3, color="tab:blue",
            error_kw={"elinewidth": 1, "ecolor": "black"})
    top = float(np.nanmax(vals + (xerr[1] if xerr is not None else 0.0))) if len(vals) else 0.0
    ax.set_xlim(0, top * 1.15 if top > 0 else 1.0)
    for y, v in enumerate(vals):
        ax.text(v, y, f" {v:.1f} %", va="center", ha="left", fontsize=7)
    if len(vals) and not np.any(vals):
        ax.text(0.5, 0.5, zero_note, transform=ax.transAxes, ha="center",
                va="center", fontsize=9, color="dimgray",
                bbox={"facecolor": "white", "edgecolor": "lightgray"})
    ax.invert_yaxis()
    ax.set_xlabel(xlabel + (" — error bars: 95 % interval" if xerr is not None else ""))
    ax.set_title(_wrap(title), fontsize=10)
    return fig


def bars(values: pd.Series, path: Path, title: str, xlabel: str,
         ci: pd.DataFrame | None = None, zero_note: str = ALL_ZERO_NOTE) -> Path:
    """:func:`bars_figure` written to ``path``."""
    return _save(bars_figure(values, title, xlabel, ci, zero_note), path)
