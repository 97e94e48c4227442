"""MUSE figures (matplotlib, Agg backend, PNG): correlation heatmaps, a radar chart of the
top models over the tasks, stacked bars of chosen distractor types, invalid rates."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure


def _save(fig: Figure, path: Path) -> Path:
    """Lay out, write (PNG, 120 dpi, tight bounding box) and close ``fig``; returns ``path``."""
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def heatmap(rho: pd.DataFrame, path: Path, title: str) -> Path:
    """Annotated heatmap of a correlation matrix (values in [-1, 1]; NaN left blank)."""
    h, w = rho.shape
    fig, ax = plt.subplots(figsize=(1.1 + 0.65 * w, 1.0 + 0.5 * h))
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
    ax.set_title(title, fontsize=10)
    return _save(fig, path)


def radar(table: pd.DataFrame, path: Path, title: str) -> Path:
    """Radar chart: one polygon per row (model), one axis per column (task), 0–100.
    Missing values are drawn at 0; callers pass only columns every row has."""
    cols = list(table.columns)
    angles = np.linspace(0, 2 * np.pi, len(cols), endpoint=False).tolist()
    fig, ax = plt.subplots(figsize=(7, 7), subplot_kw={"polar": True})
    for model, row in table.iterrows():
        vals = row.fillna(0.0).tolist()
        ax.plot(angles + angles[:1], vals + vals[:1], linewidth=1.5, label=str(model))
        ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.08)
    ax.set_xticks(angles, cols, fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", bbox_to_anchor=(1.35, 1.1), fontsize=7)
    return _save(fig, path)


def stacked_bars(table: pd.DataFrame, counts: pd.DataFrame, path: Path, title: str,
                 xlabel: str) -> Path:
    """Horizontal stacked bars: one bar per row, segments = columns (percent of the row).

    ``counts`` (same shape): the answer counts behind the percentages; each bar is labelled
    ``model (n=total)`` and each segment wide enough shows ``share% (count)``.
    """
    fig, ax = plt.subplots(figsize=(9, 1.4 + 0.45 * len(table)))
    left = np.zeros(len(table))
    totals = counts.sum(axis=1)
    labels = [f"{i} (n={int(totals.get(i, 0))})" for i in table.index]
    for col in table.columns:
        vals = table[col].to_numpy(dtype=float)
        bars = ax.barh(labels, vals, left=left, label=str(col))
        for rect, v, c in zip(bars, vals, counts[col].to_numpy(), strict=True):
            if v >= 8.0:
                ax.text(rect.get_x() + rect.get_width() / 2, rect.get_y() + rect.get_height() / 2,
                        f"{v:.0f}% ({int(c)})", ha="center", va="center", fontsize=6)
        left += vals
    ax.set_xlabel(xlabel)
    ax.set_xlim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
    return _save(fig, path)


def bars(values: pd.Series, path: Path, title: str, xlabel: str) -> Path:
    """Horizontal bars, one per index entry."""
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.35 * len(values)))
    ax.barh([str(i) for i in values.index], values.fillna(0.0).to_numpy(dtype=float))
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    return _save(fig, path)
