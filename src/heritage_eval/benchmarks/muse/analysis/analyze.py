"""``muse analyze``: multi-model tables, correlations and figures from run folders.

Writes into ``out``: ``analysis.md`` (every table, notes), CSV tables
(``table2_tasks.csv``, ``capability.csv``, ``level.csv``, ``granularity.csv``,
``invalid_rate.csv``, ``position_remote.csv``, ``open_answers.csv``,
``distractors_<task>.csv`` (percent) and ``distractors_<task>_counts.csv``,
``spearman_tasks.csv``, ``spearman_external.csv``) and PNG figures
(``spearman_tasks.png``, ``spearman_external.png``, ``radar_top_models.png``,
``distractors_<task>.png``, ``invalid_rate.png``).

Every table lists the models in the order of :class:`~.tables.Ranking` (ranked runs best
first, then partial runs marked †; see :mod:`.tables`). Correlations need at least
:data:`~.correlations.MIN_MODELS` models; with fewer, the report says so and the
correlation outputs are skipped; below :data:`~.correlations.CAVEAT_BELOW` models they
carry a caveat. The ``--external`` CSV is read and validated whatever the number of runs.
Warnings (different question files, ignored CSV columns) and notes (skipped analyses) go
to the top of ``analysis.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from heritage_eval.benchmarks.muse.analysis import figures
from heritage_eval.benchmarks.muse.analysis.consistency import question_file_warnings
from heritage_eval.benchmarks.muse.analysis.correlations import (
    MIN_MODELS,
    ExternalScores,
    pairwise_spearman,
    read_external,
    small_sample_caveat,
)
from heritage_eval.benchmarks.muse.analysis.intervals import (
    invalid_rate_intervals,
    task_score_intervals,
)
from heritage_eval.benchmarks.muse.analysis.summary import DISTRACTOR_TASKS
from heritage_eval.benchmarks.muse.analysis.tables import (
    DAGGER,
    Ranking,
    distractor_table,
    extra_table,
    group_table,
    invalid_table,
    load_results,
    open_table,
    rank,
    task_table,
)
from heritage_eval.benchmarks.muse.report import FLOOR_NOTE, cell
from heritage_eval.benchmarks.muse.taxonomy import TASKS
from heritage_eval.core.store import atomic_write_text


@dataclass
class AnalysisOutput:
    """Paths written, and the ``warnings`` (runs not comparable, CSV columns ignored) and
    ``notes`` (analyses skipped) shown at the top of ``analysis.md``."""

    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _md(df: pd.DataFrame, ranking: Ranking | None = None) -> str:
    if df.empty:
        return "(no data)\n"
    shown = df.astype(object).map(cell)
    if ranking is not None:
        shown.index = [ranking.label(str(m)) for m in shown.index]
        shown.index.name = df.index.name
    return str(shown.to_markdown(floatfmt=".1f")) + "\n"


def _csv(df: pd.DataFrame, path: Path, out: AnalysisOutput) -> None:
    atomic_write_text(path, df.to_csv(float_format="%.4f"))
    out.files.append(path)


def _table2_md(t2: pd.DataFrame, ranking: Ranking) -> list[str]:
    md = ["## Table 2: per task\n", ranking.note + "\n", _md(t2, ranking)]
    if ranking.partial:
        md.append("".join(f"{DAGGER} {m}: partial run, lacks {', '.join(missing)}; "
                          "no Average, not ranked.\n" for m, missing in
                          ranking.partial.items()))
    return md


def _distractors(res: list, ranking: Ranking, out_dir: Path, out: AnalysisOutput
                 ) -> list[str]:
    md: list[str] = []
    for task in DISTRACTOR_TASKS:
        shares, counts = distractor_table(res, task, ranking=ranking)
        if shares.empty:
            continue
        name = TASKS[task].name
        _csv(shares, out_dir / f"distractors_{task}.csv", out)
        _csv(counts, out_dir / f"distractors_{task}_counts.csv", out)
        out.files.append(figures.stacked_bars(
            shares, counts, out_dir / f"distractors_{task}.png",
            f"{name}: distractor types chosen in wrong answers (% of n wrong answers)",
            "percent of the model's wrong answers"))
        shown = shares.astype(object).map(cell)
        for col in shares.columns:
            shown[col] = [f"{cell(v)} ({int(c)})" for v, c in zip(shares[col], counts[col],
                                                                  strict=True)]
        shown.insert(0, "n wrong", counts.sum(axis=1))
        shown.index = [ranking.label(str(m)) for m in shown.index]
        md += [f"## {name}: chosen distractor types among wrong answers\n",
               "Percent of the model's wrong (parsed) answers, count in parentheses.\n",
               str(shown.to_markdown()) + "\n"]
    return md


def _correlations(t2: pd.DataFrame, ranking: Ranking, ext: ExternalScores | None,
                  out_dir: Path, out: AnalysisOutput) -> list[str]:
    tasks_only = t2.drop(columns=["Average"])
    n_models = len(tasks_only)
    if n_models < MIN_MODELS:
        out.notes.append(f"Only {n_models} model(s): Spearman correlations need at least "
                         f"{MIN_MODELS} models and were not computed.")
        return []
    rho, _ = pairwise_spearman(tasks_only)
    _csv(rho, out_dir / "spearman_tasks.csv", out)
    out.files.append(figures.heatmap(rho, out_dir / "spearman_tasks.png",
                                     f"Spearman ρ between MUSE tasks ({n_models} models)"))
    md = ["## Spearman ρ between tasks across models\n", _md_rho(rho)]
    if caveat := small_sample_caveat(n_models):
        md.append(caveat + "\n")
    if ext is None:
        return md
    rho_e, n_e = pairwise_spearman(ext.scores, tasks_only)
    _csv(rho_e, out_dir / "spearman_external.csv", out)
    lo, hi = int(n_e.to_numpy().min()), int(n_e.to_numpy().max())
    out.files.append(figures.heatmap(rho_e, out_dir / "spearman_external.png",
                                     f"Spearman ρ: external benchmarks vs MUSE ({lo}–{hi} "
                                     "models per pair)"))
    md += ["## Spearman ρ: external benchmarks vs MUSE tasks\n", _md_rho(rho_e),
           f"Models per pair: {lo}–{hi}.\n"]
    if caveat := small_sample_caveat(hi):
        md.append(caveat + "\n")
    if hi < MIN_MODELS:
        out.notes.append(f"No external benchmark shares {MIN_MODELS} models with the runs "
                         "(check that CSV model names match the run summaries).")
    return md


def analyze(run_dirs: list[Path], out_dir: Path, external: Path | None = None,
            top: int = 5) -> AnalysisOutput:
    """Run every analysis; raises ``RunFolderError`` / ``ExternalScoresError`` on bad input
    (before writing anything).

    ``top``: number of ranked models (Table 2 order) drawn in the radar chart.
    """
    res = load_results(run_dirs)
    ext = read_external(external) if external is not None else None
    out_dir.mkdir(parents=True, exist_ok=True)
    out = AnalysisOutput(warnings=question_file_warnings(res) + (ext.warnings if ext else []))
    ranking = rank(res)
    t2 = task_table(res, ranking)
    md = [f"# MUSE analysis — {len(res)} model(s)\n",
          "Scores are percentages. Open answers (tasks 3, 4) are mean embedding cosine "
          "x100 (see each run's summary for the embedder). Rows are in the same order in "
          "every table.\n", *_table2_md(t2, ranking)]
    _csv(t2, out_dir / "table2_tasks.csv", out)
    for key, name in (("per_capability", "capability"), ("per_level", "level"),
                      ("per_granularity", "granularity")):
        df = group_table(res, key, ranking)
        _csv(df, out_dir / f"{name}.csv", out)
        md += [f"## Per {name} (macro mean of the task scores each run has)\n",
               _md(df, ranking)]
    opened = open_table(res, ranking)
    if not opened.empty:
        _csv(opened, out_dir / "open_answers.csv", out)
        md += ["## Open answers: score, chance floor, floor-adjusted (our addition)\n",
               _md(opened, ranking), FLOOR_NOTE + "\n"]
    extra = extra_table(res, ranking)
    _csv(extra, out_dir / "position_remote.csv", out)
    md += ["## Relative position per dimension, remote interaction per turn\n",
           _md(extra, ranking)]
    inv = invalid_table(res, ranking)
    _csv(inv, out_dir / "invalid_rate.csv", out)
    out.files.append(figures.bars(inv["mean over tasks"], out_dir / "invalid_rate.png",
                                  "Mean invalid response rate over the tasks each run has",
                                  "percent of scored turns (unparsed / n)",
                                  invalid_rate_intervals(res),
                                  "all 0 %: no invalid (unparsed) response in any run"))
    md += ["## Invalid response rate (unparsed / n, only tasks the run has)\n",
           _md(inv, ranking)]
    md += _distractors(res, ranking, out_dir, out)
    md += _correlations(t2, ranking, ext, out_dir, out)
    radar_rows = t2.loc[ranking.ranked[:top], ranking.average_tasks]
    if not radar_rows.empty:
        low, high = task_score_intervals(res)
        out.files.append(figures.radar(
            radar_rows, out_dir / "radar_top_models.png",
            f"Per-task score (%) of the top {len(radar_rows)} ranked model(s) "
            f"(Table 2 order, {len(ranking.average_tasks)} tasks)", low, high))
    top_lines = ([f"> **Warning:** {w}\n>\n" for w in out.warnings]
                 + [f"> Note: {n}\n>\n" for n in out.notes])
    if top_lines:
        md.insert(1, "".join(top_lines) + "\n")
    atomic_write_text(out_dir / "analysis.md", "\n".join(md))
    out.files.append(out_dir / "analysis.md")
    return out


def _md_rho(rho: pd.DataFrame) -> str:
    return str(rho.to_markdown(floatfmt=".2f")) + "\n"
