"""``heritage-eval paper muse-fig5`` and ``muse-fig12``: MUSE's radar charts.

- **Fig. 5**: one polygon per chosen model over the 12 tasks (percent), plus a dashed
  black "Best Available" polygon: on each task the best score any model of the runs
  reached (paper Fig. 5; over every run given, not only the drawn ones). Default models:
  the top 8 of Table 2's ranking (the paper draws the best model of each of 8 families;
  families are not recorded in a run, so pick them with ``--models a,b``). Axes: the
  tasks every drawn model has.
- **Fig. 12**: three radars, by (a) capability (the five of Table 1), (b) cognitive level
  (low / mid / high) and (c) spatial granularity (pixel / crop / image), each value the
  macro mean of the model's task scores in that group (paper App. A.2). The level and
  granularity of each task are our assignment (``taxonomy.py``; the paper's Fig. 2 shows
  them as a diagram only). A model is drawn in a panel only when it has every task of
  every group of that panel (a partial run's group mean would compare unlike things);
  the left-out models are named in the table's note.

Writes ``muse_fig5.png`` + ``muse_fig5.{md,csv,tex}``; ``muse_fig12_capability.png``,
``muse_fig12_level.png``, ``muse_fig12_granularity.png`` + ``muse_fig12.{md,csv,tex}``
(one table, the three groupings side by side).
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.tables import Column, Table, write_table
from heritage_eval.paper.muse_common import (
    BEST,
    add_models_arg,
    complete_columns,
    load,
    pick,
    table_rows,
    task_scores,
    with_best,
)
from heritage_eval.report.paper_io import (
    PaperInputError,
    add_common_args,
    formats_of,
    guarded,
    prepare_out,
    print_written,
    save_png,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from heritage_eval.benchmarks.muse.analysis.tables import ModelResult

DEFAULT_TOP = 8
LEVEL_NAMES = {"low": "Low-level", "mid": "Mid-level", "high": "High-level"}
GRANULARITY_NAMES = {"pixel": "Pixel-level", "crop": "Crop-level", "image": "Image-level"}


def _default_models(results: list[ModelResult]) -> list[str]:
    from heritage_eval.benchmarks.muse.analysis.tables import rank

    ranked = rank(results).ranked
    return ranked[:DEFAULT_TOP] if ranked else [r.name for r in results][:DEFAULT_TOP]


def style_dashed(fig: Figure, label: str) -> None:
    """Draw the series ``label`` of a :func:`radar_figure` dashed black (line, fill and
    legend entry), so a reference series (Best Available, Human) stands apart."""
    ax = fig.axes[0]
    for line in ax.get_lines():
        if line.get_label() == label:
            line.set(color="black", linestyle="--", linewidth=1.8)
    names = [str(line.get_label()) for line in ax.get_lines()
             if not str(line.get_label()).startswith("_")]
    if label in names:  # ax.fill adds one polygon per series, in series order
        patches = [p for p in ax.patches if type(p).__name__ == "Polygon"]
        if len(patches) == len(names):
            patches[names.index(label)].set(facecolor="none")
    for legend in fig.legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=False):
            if text.get_text() == label and handle is not None:
                handle.set(color="black", linestyle="--")


def fig5_data(results: list[ModelResult], models: str | None) -> pd.DataFrame:
    """Chosen models + Best Available (rows) x task names (columns every row has), %."""
    from heritage_eval.benchmarks.muse.taxonomy import TASKS

    chosen = pick(results, models, _default_models(results))
    pool = task_scores(results)
    df = with_best(pool.loc[[r.name for r in chosen]], pool)
    cols = complete_columns(df)
    if len(cols) < 3:
        raise PaperInputError(f"the chosen models share {len(cols)} task(s); a radar needs "
                              "at least 3 (choose models run on the same tasks with "
                              "--models)")
    return df[cols].rename(columns={t: TASKS[t].name for t in cols})


def _table(df: pd.DataFrame, title: str, note: list[str]) -> Table:
    cols = [Column("model", "Model", kind="text")]
    cols += [Column(str(c), str(c), decimals=1, rank="higher") for c in df.columns]
    return Table(cols, table_rows(df), title=title, footnotes=note)


def group_scores(results: list[ModelResult], key: str) -> tuple[pd.DataFrame, list[str]]:
    """Models x groups of ``key`` (``capability``, ``level`` or ``granularity``): macro
    mean of the task scores (%); models lacking a task of the panel are left out (their
    names are returned second)."""
    import pandas as pd

    from heritage_eval.benchmarks.muse.taxonomy import CAPABILITIES, TASKS

    order = {"capability": list(CAPABILITIES), "level": list(LEVEL_NAMES),
             "granularity": list(GRANULARITY_NAMES)}[key]
    names = {"level": LEVEL_NAMES, "granularity": GRANULARITY_NAMES}.get(key, {})
    scores = task_scores(results)
    members = {g: [t for t in scores.columns if getattr(TASKS[t], key) == g] for g in order}
    full = [m for m in scores.index if scores.loc[m].notna().all()]
    left_out = [m for m in scores.index if m not in full]
    df = pd.DataFrame({names.get(g, g): scores.loc[full, ts].mean(axis=1)
                       for g, ts in members.items()}, index=full)
    return df, left_out


def _radar(df: pd.DataFrame, path: Path, title: str, best: bool = False) -> Path:
    from heritage_eval.benchmarks.muse.analysis.figures import radar_figure

    fig = radar_figure(df, title)
    if best:
        style_dashed(fig, BEST)
    return save_png(fig, path)


def add_fig5_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "MUSE run folders ('heritage-eval run muse'); every model counts "
                       "toward Best Available")
    add_models_arg(p, f"the top {DEFAULT_TOP} of Table 2's ranking")


@guarded
def handle_fig5(args: argparse.Namespace) -> int:
    """Write ``muse_fig5.png`` and its table; exit 0 (2: unusable input)."""
    results = load(args.runs)
    df = fig5_data(results, args.models)
    formats = formats_of(args)
    out = prepare_out(args.out)
    note = [f"{BEST}: per-task maximum over all {len(results)} model(s) of the runs given. "
            "Percent; open-answer tasks are embedding cosine x100."]
    paths = write_table(_table(df, "MUSE Fig. 5: per-task scores (%)", note),
                        out / "muse_fig5", formats)
    paths.append(_radar(df, out / "muse_fig5.png",
                        f"Per-task score (%) of {len(df) - 1} model(s) and {BEST} "
                        f"(per-task maximum over {len(results)})", best=True))
    print_written(paths)
    return 0


def add_fig12_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "MUSE run folders ('heritage-eval run muse') covering all 12 tasks")
    add_models_arg(p, f"the top {DEFAULT_TOP} of Table 2's ranking")


@guarded
def handle_fig12(args: argparse.Namespace) -> int:
    """Write the three Fig. 12 radars and one table; exit 0 (2: unusable input)."""
    import pandas as pd

    results = load(args.runs)
    chosen = pick(results, args.models, _default_models(results))
    formats = formats_of(args)
    panels = {}
    left: list[str] = []
    for key in ("capability", "level", "granularity"):
        df, left = group_scores(chosen, key)
        panels[key] = df
    if panels["capability"].empty:
        raise PaperInputError("no chosen model has all 12 tasks; Fig. 12's group means "
                              "need complete runs")
    out = prepare_out(args.out)
    note = ["Each value: macro mean (%) of the model's task scores in the group; levels and "
            "granularities as assigned in taxonomy.py (see GENERATION.md)."]
    if left:
        note.append(f"Left out (lack some of the 12 tasks): {', '.join(left)}.")
    merged = pd.concat(panels.values(), axis=1)
    paths = write_table(_table(merged, "MUSE Fig. 12: scores by capability, cognitive "
                               "level and spatial granularity (%)", note),
                        out / "muse_fig12", formats)
    titles = {"capability": "(a) Capability", "level": "(b) Cognitive level (difficulty)",
              "granularity": "(c) Spatial granularity"}
    for key, df in panels.items():
        paths.append(_radar(df, out / f"muse_fig12_{key}.png",
                            f"{titles[key]}: macro mean of task scores (%)"))
    print_written(paths)
    return 0


MUSE_FIG5 = Command(
    name="muse-fig5", help="MUSE Fig. 5: per-task radar of chosen models plus 'Best Available'",
    add_args=add_fig5_args, handler=handle_fig5,
    description=textwrap.fill(
                "MUSE Fig. 5: a radar over the 12 tasks of the chosen models (--models, "
                "default the top 8 by Average) and a dashed 'Best Available' series, the "
                "per-task maximum over every model given. Writes muse_fig5.png and "
                "muse_fig5.md/.csv/.tex. Exit status 2 for unusable input.", 80))
MUSE_FIG12 = Command(
    name="muse-fig12", help="MUSE Fig. 12: radars per capability, cognitive level and "
                            "granularity",
    add_args=add_fig12_args, handler=handle_fig12,
    description=textwrap.fill(
                "MUSE Fig. 12: three radars of the chosen models (--models, default the "
                "top 8 by Average): by capability (5), cognitive level (low/mid/high) and "
                "spatial granularity (pixel/crop/image), each value the macro mean of the "
                "task scores of the group. Only runs with all 12 tasks are drawn. Writes "
                "muse_fig12_{capability,level,granularity}.png and muse_fig12.md/.csv/.tex.", 80))
