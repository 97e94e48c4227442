"""``muse analyze``: multi-model tables, correlations and figures from run folders.

Writes into ``out``: ``analysis.md`` (every table, notes), CSV tables
(``table2_tasks.csv``, ``capability.csv``, ``level.csv``, ``granularity.csv``,
``invalid_rate.csv``, ``position_remote.csv``, ``distractors_<task>.csv``,
``spearman_tasks.csv``, ``spearman_external.csv``) and PNG figures
(``spearman_tasks.png``, ``spearman_external.png``, ``radar_top_models.png``,
``distractors_<task>.png``, ``invalid_rate.png``). Correlations need at least
:data:`~.correlations.MIN_MODELS` models; with fewer, the report says so and the
correlation outputs are skipped, everything else is still written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from heritage_eval.benchmarks.muse.analysis import figures
from heritage_eval.benchmarks.muse.analysis.correlations import (
    MIN_MODELS,
    pairwise_spearman,
    read_external,
)
from heritage_eval.benchmarks.muse.analysis.summary import DISTRACTOR_TASKS
from heritage_eval.benchmarks.muse.analysis.tables import (
    distractor_table,
    extra_table,
    group_table,
    invalid_table,
    load_results,
    task_table,
)
from heritage_eval.benchmarks.muse.taxonomy import TASKS
from heritage_eval.core.store import atomic_write_text


@dataclass
class AnalysisOutput:
    """Paths written and the notes shown in ``analysis.md``."""

    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _md(df: pd.DataFrame) -> str:
    return str(df.to_markdown(floatfmt=".1f")) + "\n" if not df.empty else "(no data)\n"


def _csv(df: pd.DataFrame, path: Path, out: AnalysisOutput) -> None:
    atomic_write_text(path, df.to_csv(float_format="%.4f"))
    out.files.append(path)


def analyze(run_dirs: list[Path], out_dir: Path, external: Path | None = None,
            top: int = 5) -> AnalysisOutput:
    """Run every analysis; raises ``RunFolderError`` / ``ExternalScoresError`` on bad input.

    ``top``: number of models (by Table 2 average) drawn in the radar chart.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    res = load_results(run_dirs)
    out = AnalysisOutput()
    t2 = task_table(res)
    md = [f"# MUSE analysis — {len(res)} model(s)\n",
          "Scores are percentages. Open answers (tasks 3, 4) are mean embedding cosine "
          "x100; see each run's summary for the embedder.\n",
          "## Table 2: per task (rows ordered by average)\n", _md(t2)]
    _csv(t2, out_dir / "table2_tasks.csv", out)
    for key, name in (("per_capability", "capability"), ("per_level", "level"),
                      ("per_granularity", "granularity")):
        df = group_table(res, key)
        _csv(df, out_dir / f"{name}.csv", out)
        md += [f"## Per {name} (macro mean of task scores)\n", _md(df)]
    extra = extra_table(res)
    _csv(extra, out_dir / "position_remote.csv", out)
    md += ["## Relative position per dimension, remote interaction per turn\n", _md(extra)]
    inv = invalid_table(res)
    _csv(inv, out_dir / "invalid_rate.csv", out)
    out.files.append(figures.bars(inv["mean over tasks"], out_dir / "invalid_rate.png",
                                  "Mean invalid response rate", "percent"))
    md += ["## Invalid response rate\n", _md(inv)]
    for task in DISTRACTOR_TASKS:
        dist = distractor_table(res, task)
        if dist.empty:
            continue
        _csv(dist, out_dir / f"distractors_{task}.csv", out)
        out.files.append(figures.stacked_bars(
            dist, out_dir / f"distractors_{task}.png",
            f"{TASKS[task].name}: chosen distractor types (wrong answers)", "percent"))
        md += [f"## {TASKS[task].name}: chosen distractor types among wrong answers\n",
               _md(dist)]
    tasks_only = t2.drop(columns=["Average"])
    if len(res) < MIN_MODELS:
        out.notes.append(f"Only {len(res)} model(s): Spearman correlations need at least "
                         f"{MIN_MODELS} models and were not computed.")
    else:
        rho, _ = pairwise_spearman(tasks_only)
        _csv(rho, out_dir / "spearman_tasks.csv", out)
        out.files.append(figures.heatmap(rho, out_dir / "spearman_tasks.png",
                                         f"Spearman ρ between MUSE tasks ({len(res)} models)"))
        md += ["## Spearman ρ between tasks across models\n", _md_rho(rho)]
        if external is not None:
            ext = read_external(external)
            rho_e, n_e = pairwise_spearman(ext, tasks_only)
            _csv(rho_e, out_dir / "spearman_external.csv", out)
            out.files.append(figures.heatmap(rho_e, out_dir / "spearman_external.png",
                                             "Spearman ρ: external benchmarks vs MUSE"))
            md += ["## Spearman ρ: external benchmarks vs MUSE tasks\n", _md_rho(rho_e),
                   f"Models per pair: {int(n_e.to_numpy().min())}–"
                   f"{int(n_e.to_numpy().max())}.\n"]
            if int(n_e.to_numpy().max()) < MIN_MODELS:
                out.notes.append("No external benchmark shares 3 models with the runs "
                                 "(check that CSV model names match the run summaries).")
    radar_rows = t2.head(top).drop(columns=["Average"])
    if not radar_rows.empty:
        out.files.append(figures.radar(radar_rows, out_dir / "radar_top_models.png",
                                       f"Top {len(radar_rows)} models per task"))
    if out.notes:
        md.insert(1, "".join(f"> {n}\n" for n in out.notes) + "\n")
    atomic_write_text(out_dir / "analysis.md", "\n".join(md))
    out.files.append(out_dir / "analysis.md")
    return out


def _md_rho(rho: pd.DataFrame) -> str:
    return str(rho.to_markdown(floatfmt=".2f")) + "\n"
