"""``heritage-eval paper muse-fig9``: ranking shifts across the affective dialogue (MUSE
Fig. 9).

The four turns of the affective dialogue — Object Classification, Emotion Detection,
Visual Clue Identification, Emotion Cause Inference — as the x axis. The paper's figure
plots each model's **score** per task (y = score); so does ``--plot scores`` (the
default): one line per model, each point labelled with the model's rank among the chosen
models on that task. ``--plot ranks`` draws the bump chart instead (y = rank, points
labelled with the score). Ranks: 1 = best, ties share the best rank (``pandas``
``rank(method="min")``), compared within a task only, since the metrics differ across
tasks (paper: "within-task rankings"). Scores are percent; the open-answer turns are
embedding cosine x100, so their level is not comparable with the choice turns'.
Default models: the top 5 of Table 2's ranking (paper: five top models); ``--models``
chooses others. Every chosen model must have all four tasks.

Writes ``muse_fig9.png`` and ``muse_fig9.{md,csv,tex}`` (score and rank per task).
"""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.tables import Cell, Column, Table, write_table
from heritage_eval.paper.muse_common import add_models_arg, decimals, load, pick, task_scores
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

DEFAULT_TOP = 5
PLOTS = ("scores", "ranks")


def ranks(scores: pd.DataFrame) -> pd.DataFrame:
    """Rank of each model (rows) within each task (columns): 1 = highest score; ties
    share the smaller rank."""
    return scores.rank(axis=0, ascending=False, method="min").astype(int)


def bump_figure(scores: pd.DataFrame, title: str) -> Figure:
    """Bump chart: x = tasks (columns), y = rank (1 on top), one line per model,
    markers labelled with the score; legend below."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from heritage_eval.benchmarks.muse.taxonomy import TASKS

    rk = ranks(scores)
    n = len(scores)
    fig, ax = plt.subplots(figsize=(8.5, 1.8 + 0.6 * n), layout="constrained")
    xs = list(range(len(scores.columns)))
    for model in scores.index:
        (line,) = ax.plot(xs, rk.loc[model].to_numpy(), marker="o", markersize=9,
                          linewidth=2, label=str(model))
        for x, (task, r) in zip(xs, rk.loc[model].items(), strict=True):
            ax.annotate(f"{scores.loc[model, task]:.{decimals(str(task))}f}", (x, r), xytext=(0, 9),
                        textcoords="offset points", ha="center", fontsize=7,
                        color=line.get_color())
    ax.set_xticks(xs, ["\n".join(textwrap.wrap(TASKS[t].name, 14)) for t in scores.columns],
                  fontsize=9)
    ax.set_yticks(range(1, n + 1))
    ax.set_ylim(n + 0.6, 0.4)
    ax.set_ylabel("rank among the models shown (1 = best)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("\n".join(textwrap.wrap(title, 80)), fontsize=10)
    fig.legend(loc="outside lower center", ncols=min(3, n), fontsize=8,
               title="model (labels: task score, %)", title_fontsize=8)
    return fig


def score_figure(scores: pd.DataFrame, title: str) -> Figure:
    """Line chart as the paper's: x = tasks (columns), y = score (%, 0-100), one line per
    model, markers labelled with the within-task rank (``#1`` = best); legend below."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from heritage_eval.benchmarks.muse.taxonomy import TASKS

    rk = ranks(scores)
    n = len(scores)
    fig, ax = plt.subplots(figsize=(8.5, 4.6), layout="constrained")
    xs = list(range(len(scores.columns)))
    for model in scores.index:
        ys = scores.loc[model].to_numpy(dtype=float)
        (line,) = ax.plot(xs, ys, marker="o", markersize=7, linewidth=2, label=str(model))
        for x, y, r in zip(xs, ys, rk.loc[model].to_numpy(), strict=True):
            ax.annotate(f"#{r}", (x, y), xytext=(0, 7), textcoords="offset points",
                        ha="center", fontsize=7, color=line.get_color())
    ax.set_xticks(xs, ["\n".join(textwrap.wrap(TASKS[t].name, 14)) for t in scores.columns],
                  fontsize=9)
    ax.set_ylim(0, 105)
    ax.set_ylabel("score (%; open turns: embedding cosine x100)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("\n".join(textwrap.wrap(title, 80)), fontsize=10)
    fig.legend(loc="outside lower center", ncols=min(3, n), fontsize=8,
               title="model (labels: rank within the task)", title_fontsize=8)
    return fig


def add_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "MUSE run folders ('heritage-eval run muse') with the affective "
                       "dialogue (tasks 1-4)")
    add_models_arg(p, f"the top {DEFAULT_TOP} of Table 2's ranking")
    p.add_argument("--plot", choices=PLOTS, default="scores",
                   help="y axis of the figure: scores (default, as the paper plots) or "
                        "ranks (a bump chart); the table always gives both")


@guarded
def handle(args: argparse.Namespace) -> int:
    """Write ``muse_fig9.png`` and its table; exit 0 (2: unusable input)."""
    from heritage_eval.benchmarks.muse.analysis.tables import rank
    from heritage_eval.benchmarks.muse.taxonomy import AFFECTIVE_DIALOGUE, TASKS

    results = load(args.runs)
    default = rank(results).ranked[:DEFAULT_TOP]
    chosen = pick(results, args.models, default)
    scores = task_scores(chosen)[list(AFFECTIVE_DIALOGUE)]
    lacking = [m for m in scores.index if scores.loc[m].isna().any()]
    if lacking or len(scores) < 2:
        why = (f"{', '.join(lacking)} lack(s) some of the four affective tasks" if lacking
               else "a ranking needs at least 2 models")
        raise PaperInputError(f"muse-fig9: {why}; choose models with --models")
    formats = formats_of(args)
    out = prepare_out(args.out)
    rk = ranks(scores)
    cols = [Column("model", "Model", kind="text")]
    for t in AFFECTIVE_DIALOGUE:
        cols += [Column(f"{t}:score", "Score", decimals=decimals(t),
                        rank="higher", group=TASKS[t].name),
                 Column(f"{t}:rank", "Rank", decimals=0, group=TASKS[t].name)]
    rows: list[dict[str, Cell | float | str | None]] = []
    for m in scores.index:
        row: dict[str, Cell | float | str | None] = {"model": str(m)}
        for t in scores.columns:
            row[f"{t}:score"] = float(scores.loc[m, t])
            row[f"{t}:rank"] = float(rk.loc[m, t])
        rows.append(row)
    table = Table(cols, rows, title="MUSE Fig. 9: scores (%) and within-task ranks on the "
                  "affective dialogue", footnotes=[
                      "Rank 1 = best among the models shown, per task; ties share the "
                      "best rank. Visual Clue Identification and Emotion Cause Inference "
                      "are embedding cosine x100."])
    paths = write_table(table, out / "muse_fig9", formats)
    if getattr(args, "plot", "scores") == "ranks":
        fig = bump_figure(scores, "Ranking shifts across the affective dialogue "
                                  f"({len(scores)} models; rank within each task)")
    else:
        fig = score_figure(scores, "Scores across the affective dialogue "
                                   f"({len(scores)} models; labels: rank within each task)")
    paths.append(save_png(fig, out / "muse_fig9.png"))
    print_written(paths)
    return 0


MUSE_FIG9 = Command(
    name="muse-fig9", help="MUSE Fig. 9: scores and ranking shifts across the four "
                           "affective tasks",
    add_args=add_args, handler=handle,
    description=textwrap.fill(
                "MUSE Fig. 9: the chosen models' scores on object classification, emotion "
                "detection, visual clue identification and emotion cause inference, as the "
                "paper plots them, points labelled with the rank within each task "
                "(--plot ranks: a bump chart of the ranks instead); --models, default the "
                "top 5 by Average. Writes muse_fig9.png and muse_fig9.md/.csv/.tex (score "
                "and rank per task). Exit status 2 for unusable input.", 80))
