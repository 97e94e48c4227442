"""``heritage-eval paper hcsu-table2 | hcsu-table4 | hcsu-table5``: the HCSU paper's
discrimination tables from run folders, with 95 % intervals and a footnote saying how
each number is computed.

- **Table 2** (``hcsu-discrimination`` runs, one row per model, optional row blocks
  ``--group MODEL=LABEL`` such as Proprietary / Open-weight, best bold and second
  underlined *within each block* as the paper does): per domain (Bei, Tie) Acc, F1,
  Recall, Precision (macro over the domain's classes), then **Avg. Acc = (Acc_Bei +
  Acc_Tie) / 2**, the unweighted mean of the domains (paper, Table 2 caption).
- **Table 4** (an ``hcsu robustness`` run, one row per condition: Wild (Raw),
  Wild-Resize, Origin): Acc, F1, Recall, Precision **pooled over Bei and Tie by the
  answered count: (n_Bei·v_Bei + n_Tie·v_Tie) / (n_Bei + n_Tie)** (paper, Table 4
  caption: a weighted average of the subsets), and the description BERTScore / Term. /
  Rich. pooled the same way (:func:`heritage_eval.benchmarks.hcsu.tables.pooled`).
  So Table 4's Acc of a condition and Table 2's Avg. Acc of the same predictions differ
  whenever n_Bei ≠ n_Tie.
- **Table 5** (``hcsu ablation`` runs, one row per description mode): Table 2's columns.

Intervals (``Acc`` and ``Avg. Acc``; Table 4 ``Acc``): 95 % intervals over the records
(:func:`heritage_eval.core.summary.estimate`: classes as clusters; Avg. Acc combines the
domains' standard errors), the method of the runs' ``summary.json``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.tables import Cell, Column, Table, write_table
from heritage_eval.report.paper_io import (
    PaperInputError,
    add_common_args,
    add_intervals_arg,
    check_models,
    formats_of,
    guarded,
    prepare_out,
    print_written,
    read_runs,
)
from heritage_eval.report.runs import RunData

DOMAINS = ("Bei", "Tie")
DOMAIN_NAMES = {"Bei": "Bei (Stone Rubbing)", "Tie": "Tie (Ink Manuscript)"}
CLS = (("accuracy", "Acc"), ("macro_f1", "F1"), ("macro_recall", "Recall"),
       ("macro_precision", "Precision"))
AVG_NOTE = ("Avg. Acc = (Acc_Bei + Acc_Tie) / 2, the unweighted mean of the two domains "
            "(HCSU Table 2); it is not the pooled accuracy over all answers, which "
            "Table 4 reports (weighted by each domain's n), so the two differ for the "
            "same predictions when n_Bei ≠ n_Tie.")
POOLED_NOTE = ("Every value pools Bei and Tie weighted by the answered count: "
               "v = (n_Bei·v_Bei + n_Tie·v_Tie) / (n_Bei + n_Tie) (HCSU Table 4: Origin is "
               "the weighted average of the Bei and Tie subsets). Table 2's Avg. Acc is "
               "instead the unweighted mean of the domains, so it differs for the same "
               "predictions when n_Bei ≠ n_Tie.")
CLS_NOTE = ("Acc = correct ÷ answered (an invalid answer counts wrong); F1, Recall, "
            "Precision: macro means over the domain's classes; percent. Intervals: 95 % "
            "cluster-robust (Korn-Graubard Wilson), classes as clusters.")


def interval(records: Sequence[SampleRecord], macro: bool, **match: str) -> Cell | None:
    """Accuracy of the records whose groups match, with its 95 % interval (``macro``:
    mean of domains); ``None`` when nothing was answered."""
    from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
    from heritage_eval.core.summary import estimate

    subset = [r for r in records if all(r.groups.get(k) == v for k, v in match.items())]
    est = estimate(subset, ACCURACY, macro=macro)
    if est.get("value") is None:
        return None
    return Cell(float(est["value"]), est.get("ci_low"), est.get("ci_high"))


def disc_columns(label: str) -> list[Column]:
    """``label`` column, then per domain Acc/F1/Recall/Precision, then Avg. Acc."""
    cols = [Column("label", label, kind="text")]
    cols += [Column(f"{d}:{key}", name, scale=100.0, rank="higher", group=DOMAIN_NAMES[d])
             for d in DOMAINS for key, name in CLS]
    return [*cols, Column("avg", "Avg. Acc", scale=100.0, rank="higher")]


def disc_row(label: str, entry: Mapping[str, Any], records: Sequence[SampleRecord],
             **match: str) -> dict[str, Cell | float | str | None]:
    """One Table 2 / 5 row from a ``results`` entry; Acc cells take the interval of the
    matching records (``match``: extra group tags such as ``descriptions``)."""
    row: dict[str, Cell | float | str | None] = {"label": label}
    per = entry.get("per_domain") or {}
    for d in DOMAINS:
        v = per.get(d) or {}
        for key, _ in CLS:
            row[f"{d}:{key}"] = v.get(key)
        if v.get("accuracy") is not None:
            ci = interval(records, False, domain=d, **match)
            row[f"{d}:accuracy"] = Cell(float(v["accuracy"]), ci.ci_low if ci else None,
                                        ci.ci_high if ci else None)
    avg = entry.get("avg_accuracy")
    ci = interval(records, True, **match) if avg is not None else None
    row["avg"] = None if avg is None else Cell(float(avg), ci.ci_low if ci else None,
                                               ci.ci_high if ci else None)
    return row


def _settings(entries: Sequence[Mapping[str, Any]]) -> str:
    ks = sorted({str(e.get("k")) for e in entries})
    pools = sorted({str(e.get("distractor_pool")) for e in entries})
    chance = ", ".join(f"{100 / int(k):.2f} %" for k in ks if k.isdigit())
    return (f"K = {', '.join(ks)} candidates (chance {chance}); distractor pool "
            f"{', '.join(pools)}." + (" Rows with different K are not comparable."
                                     if len(ks) > 1 else ""))


def table2(runs: Sequence[RunData], groups: Mapping[str, str], intervals: str) -> Table:
    """Table 2 of ``hcsu-discrimination`` runs (module docstring). ``groups``: model ->
    block label; models without one go to a block ``Models`` (no blocks at all when
    ``groups`` is empty). :class:`PaperInputError` listing the runs' models when a model
    of ``groups`` is in none of the runs (a ``--group`` typo)."""
    rows: dict[str, list[dict[str, Cell | float | str | None]]] = {}
    entries = []
    seen: dict[str, int] = {}
    for run in runs:
        for e in run.summary.get("results") or []:
            model = str(e.get("model"))
            seen[model] = seen.get(model, 0) + 1
            name = model if seen[model] == 1 else f"{model} ({run.path.name})"
            recs = [r for r in run.records if r.model == model]
            rows.setdefault(groups.get(model, "Models"), []).append(disc_row(name, e, recs))
            entries.append(e)
    if not entries:
        raise PaperInputError("the runs' summary.json have no 'results' entry: "
                              + ", ".join(str(r.path) for r in runs))
    check_models("--group", groups, list(dict.fromkeys(str(e.get("model")) for e in entries)))
    order = list(dict.fromkeys([*groups.values(), "Models"]))
    flat = [r for g in order for r in rows.get(g, [])]
    blocks = [(g, len(rows[g])) for g in order if g in rows] if groups else None
    return Table(disc_columns("Model"), flat, title="HCSU Table 2: style discrimination",
                 footnotes=[AVG_NOTE, CLS_NOTE, _settings(entries),
                            "Best bold, second underlined" + (" within each block."
                                                              if groups else ".")],
                 row_groups=blocks, rank_within_groups=True,
                 intervals=intervals)  # type: ignore[arg-type]


def table5(runs: Sequence[RunData], intervals: str) -> Table:
    """Table 5 of ``hcsu ablation`` runs: one row per (run, description mode)."""
    rows = []
    entries = []
    for run in runs:
        for e in run.summary.get("results") or []:
            mode = str(e.get("descriptions"))
            label = mode if len(runs) == 1 else f"{mode} ({e.get('model')})"
            rows.append(disc_row(label, e, run.records, descriptions=mode))
            entries.append(e)
    return Table(disc_columns("Descriptions"), rows,
                 title="HCSU Table 5: description ablation (discrimination)",
                 footnotes=["Candidate descriptions: random = another class's expert "
                            "text, generated = model-written, expert = the class's own.",
                            AVG_NOTE, CLS_NOTE, _settings(entries),
                            "Best bold, second underlined."],
                 intervals=intervals)  # type: ignore[arg-type]


def table4(run: RunData, intervals: str) -> Table:
    """Table 4 of one ``hcsu robustness`` run (module docstring)."""
    from heritage_eval.benchmarks.hcsu.tables import pooled

    cols = [Column("cond", "Condition", kind="text")]
    cols += [Column(k, n, scale=100.0, rank="higher", group="Discrimination") for k, n in CLS]
    cols += [Column(k, n, rank="higher", group="Description")
             for k, n in (("bertscore_x10", "BERTScore"), ("terminology", "Term."),
                          ("richness", "Rich."))]
    rows: list[dict[str, Cell | float | str | None]] = []
    for e in run.summary.get("results") or []:
        disc, desc = e.get("discrimination") or {}, e.get("description") or {}
        row: dict[str, Cell | float | str | None] = {"cond": str(e.get("condition"))}
        for key, _ in CLS:
            row[key] = pooled(disc, key) if disc else None
        if row["accuracy"] is not None:
            ci = interval(run.records, False, condition=str(e["condition"]),
                          task="discrimination")
            row["accuracy"] = Cell(float(row["accuracy"]),  # type: ignore[arg-type]
                                   ci.ci_low if ci else None, ci.ci_high if ci else None)
        for key, weight in (("bertscore_x10", "n_bertscore"), ("terminology", "n_judged"),
                            ("richness", "n_judged")):
            row[key] = pooled(desc, key, weight) if desc else None
        rows.append(row)
    if not rows:
        raise PaperInputError(f"{run.path}/summary.json has no 'results' condition rows")
    return Table(cols, rows, title="HCSU Table 4: robustness (Wild vs canonical Origin)",
                 footnotes=[POOLED_NOTE, CLS_NOTE + " Acc interval: pooled over both "
                            "domains.", "Description: BERTScore x10 and judge scores "
                            "(0–10), means over the answers each metric scored.",
                            "Best bold, second underlined."],
                 intervals=intervals)  # type: ignore[arg-type]


def _intervals_arg(p: argparse.ArgumentParser) -> None:
    add_intervals_arg(p, "the accuracies")


def parse_groups(pairs: Sequence[str]) -> dict[str, str]:
    """``MODEL=LABEL`` pairs -> mapping; :class:`PaperInputError` for a malformed pair."""
    out = {}
    for pair in pairs:
        model, sep, label = pair.rpartition("=")
        if not sep or not model or not label:
            raise PaperInputError(f"--group {pair!r}: write MODEL=LABEL, e.g. "
                                  "--group gpt-4o=Proprietary")
        out[model] = label
    return out


def _table2_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "hcsu-discrimination run folders (one row per model)")
    p.add_argument("--group", action="append", default=[], metavar="MODEL=LABEL",
                   help="row block of a model, e.g. Proprietary or Open-weight (repeat per "
                        "model); best / second are marked within each block")
    _intervals_arg(p)


def _table2(args: argparse.Namespace) -> int:
    groups, fmts = parse_groups(args.group), formats_of(args)
    table = table2(read_runs(args.runs, ["hcsu-discrimination"]), groups, args.intervals)
    print_written(write_table(table, prepare_out(args.out) / "hcsu_table2", fmts))
    return 0


def _table4_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "an 'hcsu robustness' run folder", one=True)
    _intervals_arg(p)


def _table4(args: argparse.Namespace) -> int:
    fmts = formats_of(args)
    table = table4(read_runs(args.runs, ["hcsu-robustness"])[0], args.intervals)
    print_written(write_table(table, prepare_out(args.out) / "hcsu_table4", fmts))
    return 0


def _table5_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "'hcsu ablation' run folders")
    _intervals_arg(p)


def _table5(args: argparse.Namespace) -> int:
    fmts = formats_of(args)
    table = table5(read_runs(args.runs, ["hcsu-description-ablation"]), args.intervals)
    print_written(write_table(table, prepare_out(args.out) / "hcsu_table5", fmts))
    return 0


HCSU_TABLE2 = Command(
    name="hcsu-table2", help="HCSU Table 2: discrimination per domain and Avg. Acc",
    add_args=_table2_args, handler=guarded(_table2),
    description=("HCSU Table 2 from hcsu-discrimination runs: per domain Acc, F1, Recall,\n"
                 "Precision and Avg. Acc (mean of the domains), with intervals and\n"
                 "footnotes. Writes OUT/hcsu_table2.{md,csv,tex}.\n\nExample:\n"
                 "  heritage-eval paper hcsu-table2 runs/sim runs/random --group "
                 "baseline:random=Chance --out paper/"))
HCSU_TABLE4 = Command(
    name="hcsu-table4", help="HCSU Table 4: robustness, pooled over Bei and Tie",
    add_args=_table4_args, handler=guarded(_table4),
    description=("HCSU Table 4 from an 'hcsu robustness' run: per condition the\n"
                 "discrimination and description scores pooled over Bei and Tie (weighted\n"
                 "by n). Writes OUT/hcsu_table4.{md,csv,tex}.\n\nExample:\n"
                 "  heritage-eval paper hcsu-table4 runs/robustness --out paper/"))
HCSU_TABLE5 = Command(
    name="hcsu-table5", help="HCSU Table 5: description ablation",
    add_args=_table5_args, handler=guarded(_table5),
    description=("HCSU Table 5 from 'hcsu ablation' runs: Table 2's columns per\n"
                 "description mode. Writes OUT/hcsu_table5.{md,csv,tex}.\n\nExample:\n"
                 "  heritage-eval paper hcsu-table5 runs/ablation --out paper/"))
