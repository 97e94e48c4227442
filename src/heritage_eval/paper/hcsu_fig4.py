"""``heritage-eval paper hcsu-fig4a | hcsu-fig4b | hcsu-fig4c``: the HCSU paper's
calibration figure (Fig. 4) from run folders, each with the table of its points.

- **Fig. 4a** (accuracy vs images per class, one line per model — the paper's three
  backbones): ``hcsu-discrimination`` runs made with different ``--per-class N``
  (there is no sweep command: run once per N and model). x = images per class used
  (the run's ``--per-class``, or fewer when the largest class has fewer); y = Avg. Acc
  (mean of the Bei and Tie accuracies, percent) with its 95 % interval from the run's
  summary (Welch–Satterthwaite over domains, classes as clusters); the table also
  gives the images per class actually used (a class with fewer images gives all it has).
- **Fig. 4b** (accuracy per K against chance 1/K): an ``hcsu k-sweep`` run, drawn by
  :func:`heritage_eval.benchmarks.hcsu.figures.k_sweep_figure` (per domain and Avg.
  Acc, 95 % error bars).
- **Fig. 4c** (description scores per shot count): an ``hcsu shot-sweep`` run, drawn by
  :func:`heritage_eval.benchmarks.hcsu.figures.shot_sweep_figure`.

Several runs for 4b / 4c give one figure each (``hcsu_fig4b_<model>.png``).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.tables import Cell, Column, Table, write_table
from heritage_eval.report.paper_io import (
    PaperInputError,
    add_common_args,
    estimate_cell,
    formats_of,
    guarded,
    prepare_out,
    print_written,
    read_runs,
    save_png,
)
from heritage_eval.report.runs import RunData

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CAPTION_4A = ("Avg. Acc = mean of the Bei and Tie accuracies; error bars: 95 % interval "
              "(Welch-Satterthwaite over the domains, classes as clusters).")


def per_class_points(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """One point per (run, model): ``model``, ``per_class`` (the run's setting), ``used``
    (min and max images per class actually used), ``k``, ``avg`` / ``ci_low`` /
    ``ci_high`` (fractions). Raises :class:`PaperInputError` for a run without the
    ``per_class`` setting. Sorted by model, then ``per_class``."""
    points = []
    for run in runs:
        for e in run.summary.get("results") or []:
            model = str(e.get("model"))
            if e.get("per_class") is None:
                raise PaperInputError(f"{run.path}/summary.json: result of {model} has no "
                                      "per_class setting")
            block = (run.summary.get("models") or {}).get(model) or {}
            avg, lo, hi = estimate_cell((block.get("metrics") or {}).get("accuracy"))
            sizes = Counter(str(r.groups.get("class")) for r in run.records if r.model == model)
            points.append({"model": model, "per_class": int(e["per_class"]),
                           "used": (min(sizes.values()), max(sizes.values())),
                           "k": e.get("k"), "avg": avg, "ci_low": lo, "ci_high": hi,
                           "run": str(run.path)})
    return sorted(points, key=lambda p: (p["model"], p["per_class"]))


def fig4a_table(points: Sequence[dict[str, Any]]) -> Table:
    """The points of Fig. 4a as a table (Avg. Acc with brackets)."""
    cols = [Column("model", "Model", kind="text"), Column("pc", "--per-class", decimals=0),
            Column("used", "Images per class used", kind="text"), Column("k", "K", decimals=0),
            Column("avg", "Avg. Acc", scale=100.0)]
    rows: list[dict[str, Cell | float | str | None]] = [
        {"model": p["model"], "pc": p["per_class"], "used": "{}–{}".format(*p["used"]),
         "k": p["k"], "avg": None if p["avg"] is None else Cell(p["avg"], p["ci_low"],
                                                                 p["ci_high"])}
        for p in points]
    notes = [CAPTION_4A]
    if len({p["k"] for p in points}) > 1:
        notes.append("The runs use different K: their accuracies are not comparable.")
    return Table(cols, rows, title="HCSU Fig. 4a: accuracy vs images per class",
                 footnotes=notes, intervals="brackets")


def fig4a_figure(points: Sequence[dict[str, Any]]) -> Figure:
    """Avg. Acc (percent) vs ``--per-class``, one line per model, 95 % error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from heritage_eval.benchmarks.hcsu.figures import errorbar_line

    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    for i, model in enumerate(dict.fromkeys(p["model"] for p in points)):
        mine = [p for p in points if p["model"] == model]
        errorbar_line(ax, [p["used"][1] for p in mine], [p["avg"] for p in mine],
              [(p["ci_low"], p["ci_high"]) for p in mine], 100.0, label=model,
              color=f"C{i}", linewidth=1.5)
    ks = sorted({int(p["k"]) for p in points if p.get("k")})
    for k in ks:
        ax.axhline(100 / k, ls="--", color="gray", lw=1, label=f"chance (1/{k})")
    ax.set_xticks(sorted({p["used"][1] for p in points}))
    ax.set_xlabel("images per class (--per-class; fewer when a class has fewer)")
    ax.set_ylabel("Avg. Acc (%) — error bars: 95 % interval", fontsize=8)
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.set_title(f"HCSU accuracy vs images per class (K = {', '.join(map(str, ks))})",
                 fontsize=9)
    ax.legend(fontsize=8)
    return fig


def _sweep(runs: Sequence[RunData], tag: str) -> list[tuple[RunData, list[dict[str, Any]]]]:
    out = []
    for run in runs:
        results = [e for e in run.summary.get("results") or [] if e.get(tag) is not None]
        if not results:
            raise PaperInputError(f"{run.path}/summary.json has no {tag!r} result")
        out.append((run, results))
    return out


def _sweep_table(results: Sequence[dict[str, Any]], records: Any, tag: str) -> Table:
    """The points of Fig. 4b (``tag="k"``) or 4c (``tag="shots"``) with intervals."""
    from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
    from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
    from heritage_eval.core.summary import estimate

    specs = [ACCURACY] if tag == "k" else list(DESCRIPTION_METRICS)
    cols = [Column("x", "K" if tag == "k" else "Shots", decimals=0)]
    if tag == "k":
        cols.append(Column("chance", "Chance (1/K)", scale=100.0))
    cols += [Column(f"{d}:{s.name}", s.label, scale=s.scale, group=d)
             for d in ("Bei", "Tie", "All") for s in specs]
    rows: list[dict[str, Cell | float | str | None]] = []
    for e in results:
        row: dict[str, Cell | float | str | None] = {"x": float(e[tag])}
        if tag == "k":
            row["chance"] = 1 / int(e["k"])
        for d in ("Bei", "Tie", "All"):
            sub = [r for r in records if r.groups.get(tag) == str(e[tag])
                   and (d == "All" or r.groups.get("domain") == d)]
            for s in specs:
                est = estimate(sub, s, macro=d == "All")
                row[f"{d}:{s.name}"] = None if est.get("value") is None else Cell(
                    float(est["value"]), est.get("ci_low"), est.get("ci_high"))
        rows.append(row)
    what = "Avg. Acc (mean of domains)" if tag == "k" else "pooled over all samples"
    return Table(cols, rows, intervals="brackets",
                 title=f"HCSU Fig. 4{'b' if tag == 'k' else 'c'} points",
                 footnotes=[f"All = {what}; 95 % intervals in brackets, classes "
                            "as clusters."])


def _sweep_handler(args: argparse.Namespace, tag: str, bench: str, name: str) -> int:
    from heritage_eval.benchmarks.hcsu import figures
    from heritage_eval.paper.hcsu_confusion import slug

    fmts = formats_of(args)
    runs = _sweep(read_runs(args.runs, [bench]), tag)
    out = prepare_out(args.out)
    paths: list[Path] = []
    draw = figures.k_sweep_figure if tag == "k" else figures.shot_sweep_figure
    for run, results in runs:
        stem = name if len(runs) == 1 else f"{name}_{slug(str(results[0].get('model')))}"
        paths += write_table(_sweep_table(results, run.records, tag), out / stem, fmts)
        paths.append(save_png(draw(results, run.records), out / f"{stem}.png"))
    print_written(paths)
    return 0


def _fig4a(args: argparse.Namespace) -> int:
    fmts = formats_of(args)
    points = per_class_points(read_runs(args.runs, ["hcsu-discrimination"]))
    out = prepare_out(args.out)
    paths = write_table(fig4a_table(points), out / "hcsu_fig4a", fmts)
    paths.append(save_png(fig4a_figure(points), out / "hcsu_fig4a.png"))
    print_written(paths)
    return 0


def _args_4a(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "hcsu-discrimination run folders, one per (model, --per-class N)")


def _args_4b(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "'hcsu k-sweep' run folders (one figure each)")


def _args_4c(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "'hcsu shot-sweep' run folders (one figure each)")


HCSU_FIG4A = Command(
    name="hcsu-fig4a", help="HCSU Fig. 4a: accuracy vs images per class",
    add_args=_args_4a, handler=guarded(_fig4a),
    description=("HCSU Fig. 4a from hcsu-discrimination runs made with different\n"
                 "--per-class N: Avg. Acc vs N, one line per model, 95 % error bars.\n"
                 "Writes OUT/hcsu_fig4a.{md,csv,tex,png}.\n\nExample:\n"
                 "  heritage-eval paper hcsu-fig4a runs/pc10 runs/pc20 --out paper/"))
HCSU_FIG4B = Command(
    name="hcsu-fig4b", help="HCSU Fig. 4b: accuracy per K against chance",
    add_args=_args_4b,
    handler=guarded(lambda a: _sweep_handler(a, "k", "hcsu-k-sweep", "hcsu_fig4b")),
    description=("HCSU Fig. 4b from an 'hcsu k-sweep' run: accuracy per K (per domain and\n"
                 "Avg. Acc, 95 % error bars) and chance 1/K. Writes\n"
                 "OUT/hcsu_fig4b.{md,csv,tex,png}.\n\nExample:\n"
                 "  heritage-eval paper hcsu-fig4b runs/k-sweep --out paper/"))
HCSU_FIG4C = Command(
    name="hcsu-fig4c", help="HCSU Fig. 4c: description scores per shot count",
    add_args=_args_4c,
    handler=guarded(lambda a: _sweep_handler(a, "shots", "hcsu-shot-sweep", "hcsu_fig4c")),
    description=("HCSU Fig. 4c from an 'hcsu shot-sweep' run: BERTScore (and judge scores)\n"
                 "per shot count, per domain and pooled, 95 % error bars. Writes\n"
                 "OUT/hcsu_fig4c.{md,csv,tex,png}.\n\nExample:\n"
                 "  heritage-eval paper hcsu-fig4c runs/shot-sweep --out paper/"))
