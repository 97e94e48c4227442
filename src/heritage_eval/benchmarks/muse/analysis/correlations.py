"""Spearman rank correlations across models (scipy), as in the paper's Figures 6 and 7.

For each pair of columns, only models with a value in both are used ("pairwise-available
model scores"); fewer than :data:`MIN_MODELS` models, or a column that is constant over
them, gives ``NaN`` (undefined), never 0.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
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
    """The external benchmark CSV is unreadable, has no ``model`` column, repeats a model
    or has no numeric benchmark column; the message names the file."""


#: Below this many models a Spearman table gets a caveat: with n models even a perfect
#: rho = +-1 has an exact two-sided permutation p-value of 2 / n! (n = 4: 0.083,
#: n = 5: 0.017), so fewer than 5 models cannot show a correlation at the 5 % level.
CAVEAT_BELOW = 5


def small_sample_caveat(n_models: int) -> str | None:
    """A markdown caveat for a Spearman table over ``n_models`` models (``None`` when
    ``n_models >= CAVEAT_BELOW``)."""
    if n_models >= CAVEAT_BELOW:
        return None
    p = 2 / math.factorial(max(n_models, 1))
    return (f"Caveat: only {n_models} models. Spearman ρ over so few models is very "
            f"uncertain: even a perfect ρ = ±1 has an exact two-sided p = 2/{n_models}! = "
            f"{p:.3f}; read these values as descriptive, not as evidence of correlation "
            f"(at least {CAVEAT_BELOW} models are needed for p < 0.05).")


@dataclass
class ExternalScores:
    """External benchmark scores (models x benchmarks, floats) and the warnings raised
    while reading them (ignored columns)."""

    scores: pd.DataFrame
    warnings: list[str] = field(default_factory=list)


def read_external(path: Path) -> ExternalScores:
    """External benchmark scores: CSV with a ``model`` column (names as in the MUSE run
    summaries) and one numeric column per benchmark (any scale; ranks only matter).

    A column with a non-numeric cell (blank cells are allowed: missing scores) is ignored
    with a warning naming it. Raises :class:`ExternalScoresError` when the file cannot be
    read, lacks a ``model`` column, lists a model twice (names them) or has no numeric
    benchmark column.
    """
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise ExternalScoresError(f"{path}: cannot read CSV: {exc}") from exc
    if "model" not in df.columns:
        raise ExternalScoresError(f"{path}: needs a 'model' column, has {list(df.columns)}")
    names = df["model"].str.strip()
    dups = sorted(set(names[names.duplicated()]))
    if dups:
        raise ExternalScoresError(f"{path}: model(s) listed more than once: "
                                  f"{', '.join(dups)}")
    out = pd.DataFrame(index=pd.Index(names, name="model"))
    warns: list[str] = []
    for col in df.columns.drop("model"):
        cells = df[col].str.strip()
        values = pd.to_numeric(cells.where(cells != ""), errors="coerce")
        bad = cells[(cells != "") & values.isna()]
        if len(bad):
            warns.append(f"{path}: column {col!r} ignored: not numeric (e.g. "
                         f"{bad.iloc[0]!r} for model {names[bad.index[0]]!r})")
            continue
        out[col] = values.to_numpy(dtype=float)
    if out.shape[1] == 0:
        raise ExternalScoresError(f"{path}: no numeric benchmark column"
                                  + (f" ({'; '.join(warns)})" if warns else ""))
    return ExternalScores(out, warns)
