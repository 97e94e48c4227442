"""``heritage-eval paper muse-fig8``: which wrong option the models chose (MUSE Fig. 8).

For Activity Localization (task 5), Activity Description (task 6) and Remote Interaction
(task 11): per model, the share of its wrong (parsed) answers that picked each distractor
type, as horizontal stacked bars (one PNG per task), the counts beside the percentages.
Every legend entry spells the code out (``oosi: an object of the same image (short
phrase)``; :mod:`heritage_eval.benchmarks.muse.analysis.distractors`), so the paper's
abbreviations need no look-up. Built on ``muse analyze``'s
:func:`~heritage_eval.benchmarks.muse.analysis.tables.distractor_table` and
:func:`~heritage_eval.benchmarks.muse.analysis.figures.stacked_bars_figure`.

Writes ``muse_fig8_<task>.png`` and ``muse_fig8_<task>.{md,csv,tex}`` (percent, with the
answer counts in a second table ``muse_fig8_<task>_counts``) for each task some model got
wrong; a task without wrong answers is reported in a note and skipped.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.tables import Column, Table, write_table
from heritage_eval.paper.muse_common import add_models_arg, load, pick, table_rows
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

FIG8_TASKS = ("activity_localization", "activity_description", "remote_interaction")


def _table(df: pd.DataFrame, title: str, decimals: int, note: list[str]) -> Table:
    from heritage_eval.benchmarks.muse.analysis.distractors import legend_label

    cols = [Column("model", "Model", kind="text")]
    cols += [Column(str(c), str(c), decimals=decimals) for c in df.columns]
    codes = "Codes: " + "; ".join(legend_label(str(c)) for c in df.columns) + "."
    return Table(cols, table_rows(df), title=title, footnotes=[*note, codes])


def add_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "MUSE run folders ('heritage-eval run muse')")
    add_models_arg(p, "every model of the runs, in Table 2 order")


@guarded
def handle(args: argparse.Namespace) -> int:
    """Write the Fig. 8 panels; exit 0 (2: unusable input or no wrong answer at all)."""
    from heritage_eval.benchmarks.muse.analysis.figures import stacked_bars_figure
    from heritage_eval.benchmarks.muse.analysis.tables import distractor_table, rank
    from heritage_eval.benchmarks.muse.taxonomy import TASKS

    results = load(args.runs)
    ranking = rank(results)
    chosen = pick(results, args.models, ranking.order)
    formats = formats_of(args)
    panels = {t: distractor_table(chosen, t, wrong_only=True, ranking=ranking)
              for t in FIG8_TASKS}
    if all(shares.empty for shares, _ in panels.values()):
        raise PaperInputError("no wrong parsed answer on activity localization, activity "
                              "description or remote interaction in these runs")
    out = prepare_out(args.out)
    paths = []
    for task, (shares, counts) in panels.items():
        name = TASKS[task].name
        if shares.empty:
            print(f"note: {name}: no wrong parsed answer; panel skipped")
            continue
        note = [f"Percent of each model's wrong parsed answers on {name}; n wrong per "
                "model in the counts table."]
        paths += write_table(_table(shares, f"MUSE Fig. 8, {name}: distractor types of "
                                    "wrong answers (%)", 1, note),
                             out / f"muse_fig8_{task}", formats)
        paths += write_table(_table(counts, f"MUSE Fig. 8, {name}: wrong answers per "
                                    "distractor type (count)", 0, []),
                             out / f"muse_fig8_{task}_counts", formats)
        fig = stacked_bars_figure(shares, counts, f"{name}: distractor types chosen in "
                                  "wrong answers (% of the model's n wrong answers)",
                                  "percent of the model's wrong answers")
        paths.append(save_png(fig, out / f"muse_fig8_{task}.png"))
    print_written(paths)
    return 0


MUSE_FIG8 = Command(
    name="muse-fig8", help="MUSE Fig. 8: distractor types chosen in wrong answers "
                           "(tasks 5, 6, 11)",
    add_args=add_args, handler=handle,
    description=textwrap.fill(
                "MUSE Fig. 8: for activity localization, activity description and remote "
                "interaction, the distractor types of each model's wrong answers (stacked "
                "bars, percent with counts; every legend entry explains its code). Writes "
                "muse_fig8_<task>.png and .md/.csv/.tex tables. Exit status 2 for unusable "
                "input.", 80))
