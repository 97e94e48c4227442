"""``heritage-eval paper muse-table2``: MUSE Table 2 from run folders.

Layout as the paper: one row per model, ordered by ``Average`` (best first); the 12
tasks as columns under a capability header row (Visual Perception: Object Cls., Object
Count; Semantic Understanding: Activity Loc., Activity Desc., Scene Cls.; Affective
Interpretation: Emotion Det., Visual Clue Ident., Emotion Cause Infer.; Compositional
Reasoning: Relative Position, Remote Interaction, Jigsaw Puzzle; Cultural: Cultural
Ident.), then ``Average``. Percentages with the paper's decimals: 2 for the two
semantic-similarity tasks (embedding cosine x100), 1 for the others and the Average.
Best bold, second underlined per column (:mod:`heritage_eval.core.tables`).

``Average`` and the row order follow ``muse analyze``'s ranking rule
(:func:`heritage_eval.benchmarks.muse.analysis.tables.rank`): a run lacking tasks of the
most complete runs is marked † and gets no Average. Each cell's 95 % interval from the
run's summary (cluster-robust, artworks as clusters): ``--intervals pm`` (``± half-width``, the
default), ``brackets`` or ``none``.

Writes ``muse_table2.md`` / ``.csv`` / ``.tex`` (``--formats``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.tables import Cell, Column, Table, write_table
from heritage_eval.paper.muse_common import (
    CAPABILITY_HEADER,
    SHORT,
    TABLE2_TASKS,
    decimals,
    load,
)
from heritage_eval.report.paper_io import (
    add_common_args,
    add_intervals_arg,
    formats_of,
    guarded,
    prepare_out,
    print_written,
)

NOTE = ("Object Cls.: Object Classification; Activity Loc.: Activity Localization; "
        "Activity Desc.: Activity Description; Scene Cls.: Scene Classification; Emotion "
        "Det.: Emotion Detection; Visual Clue Ident.: Visual Clue Identification; Emotion "
        "Cause Infer.: Emotion Cause Inference. Percentages; the two open-answer tasks are "
        "mean embedding cosine x100 (embedder in each run's summary).")


def columns() -> list[Column]:
    """Model, the 12 tasks under their capability group, Average."""
    from heritage_eval.benchmarks.muse.taxonomy import TASKS

    cols = [Column("model", "Model", kind="text")]
    for t in TABLE2_TASKS:
        cap = TASKS[t].capability
        cols.append(Column(t, SHORT[t], decimals=decimals(t), scale=100.0, rank="higher",
                           group=CAPABILITY_HEADER.get(cap, cap)))
    return [*cols, Column("average", "Average", decimals=1, scale=100.0, rank="higher")]


def _cell(value: Any, est: Any, intervals: str) -> Cell | None:
    if value is None:
        return None
    if intervals != "none" and isinstance(est, dict) and est.get("ci_low") is not None \
            and est.get("ci_high") is not None:
        return Cell(float(value), float(est["ci_low"]), float(est["ci_high"]))
    return Cell(float(value))


def build_table(run_dirs: list[Path], intervals: str = "pm") -> Table:
    """The Table 2 :class:`~heritage_eval.core.tables.Table` of the runs (module
    docstring); ``intervals``: ``"none"``, ``"pm"`` or ``"brackets"``. Raises
    ``PaperInputError`` for an unreadable run folder."""
    from heritage_eval.benchmarks.muse.analysis.tables import DAGGER, rank
    from heritage_eval.benchmarks.muse.taxonomy import TASKS

    results = load(run_dirs)
    ranking = rank(results)
    by_name = {r.name: r for r in results}
    rows: list[dict[str, Cell | float | str | None]] = []
    for name in ranking.order:
        res = by_name[name]
        groups = (res.block.get("groups") or {}).get("task") or {}
        row: dict[str, Cell | float | str | None] = {
            "model": Cell(name, mark=f" {DAGGER}" if name in ranking.partial else "")}
        for t in TABLE2_TASKS:
            row[t] = _cell(res.result.get("per_task", {}).get(t, {}).get("score"),
                           (groups.get(t) or {}).get("score"), intervals)
        if name in ranking.ranked and ranking.average_tasks:
            ids = [t for t in TABLE2_TASKS if TASKS[t].name in ranking.average_tasks]
            scores = [float(res.result["per_task"][t]["score"]) for t in ids]
            row["average"] = Cell(sum(scores) / len(scores))
        rows.append(row)
    notes = [NOTE, ranking.note]
    notes += [f"{DAGGER} {m}: partial run, lacks {', '.join(v)}; no Average, not ranked."
              for m, v in ranking.partial.items()]
    if intervals != "none":
        what = "± : half-width of" if intervals == "pm" else "[low, high]:"
        notes.append(f"{what} the 95 % interval (cluster-robust, artworks as "
                     "clusters, from each run's summary); Average without interval.")
    return Table(columns(), rows, title="MUSE Table 2: performance on the 12 tasks (%)",
                 footnotes=notes, intervals=intervals)  # type: ignore[arg-type]


def add_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "MUSE run folders ('heritage-eval run muse'), one or more models each")
    add_intervals_arg(p, "each task score")


@guarded
def handle(args: argparse.Namespace) -> int:
    """Write ``muse_table2.{md,csv,tex}`` into ``--out``; exit 0 (2: unusable input)."""
    table = build_table(args.runs, args.intervals)
    formats = formats_of(args)
    out = prepare_out(args.out)
    print_written(write_table(table, out / "muse_table2", formats))
    return 0


MUSE_TABLE2 = Command(
    name="muse-table2", help="MUSE Table 2: 12 tasks under their capabilities, Average",
    add_args=add_args, handler=handle,
    description=("MUSE Table 2 from run folders: models ordered by Average, the 12 tasks\n"
                 "grouped under the paper's five capabilities, the paper's decimals (2 for\n"
                 "the semantic-similarity tasks, 1 otherwise), best bold and second\n"
                 "underlined, 95 % intervals (--intervals pm|brackets|none, default pm).\n"
                 "Writes OUT/muse_table2.{md,csv,tex}. Exit status 2 for unusable input.\n\n"
                 "Example:\n  heritage-eval paper muse-table2 runs/muse-a runs/muse-chance "
                 "--out paper/"))
