"""Spearman rank correlations across models (scipy), as in the paper's Figures 6 and 7.

For each pair of columns, only models with a value in both are used ("pairwise-available
model scores"); fewer than :data:`MIN_MODELS` models, or a column that is constant over
them, gives ``NaN`` (undefined), never 0.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

MIN_MODELS = 3


def _rho(x: pd.Series, y: pd.Series) -> tuple[float, int]:
    both = pd.concat([x, y], axis=1).dropna()
    n = len(both)
    if n < MIN_MODELS or both.iloc[:, 0].nunique() < 2 or both.iloc[:, 1].nunique() < 2:
        return float("nan"), n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = spearmanr(both.iloc[:, 0], both.iloc[:, 1]).statistic
    return float(rho), n


def pairwise_spearman(a: pd.DataFrame, b: pd.DataFrame | None = None
                      ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Spearman rho between every column of ``a`` and every column of ``b`` (``a`` itself
    when ``None``), rows aligned on the index (model). Returns ``(rho, n_models)``
    frames of shape (columns of a, columns of b); rho in [-1, 1] or NaN."""
    b = a if b is None else b
    rho = pd.DataFrame(np.nan, index=a.columns, columns=b.columns, dtype=float)
    n = pd.DataFrame(0, index=a.columns, columns=b.columns, dtype=int)
    for ca in a.columns:
        for cb in b.columns:
            x, y = a[ca].align(b[cb], join="inner")
            rho.loc[ca, cb], n.loc[ca, cb] = _rho(x, y)
    return rho, n


class ExternalScoresError(ValueError):
    """The external benchmark CSV is unreadable or has no ``model`` column."""


def read_external(path: Path) -> pd.DataFrame:
    """External benchmark scores: CSV with a ``model`` column (names as in the MUSE run
    summaries) and one numeric column per benchmark (any scale; ranks only matter).
    Non-numeric cells become NaN. Raises :class:`ExternalScoresError`."""
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ExternalScoresError(f"{path}: cannot read CSV: {exc}") from exc
    if "model" not in df.columns:
        raise ExternalScoresError(f"{path}: needs a 'model' column, has {list(df.columns)}")
    df = df.set_index(df["model"].astype(str)).drop(columns=["model"])
    return df.apply(pd.to_numeric, errors="coerce")
