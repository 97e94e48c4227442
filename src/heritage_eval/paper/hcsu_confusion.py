"""``heritage-eval paper hcsu-confusion RUN... --out DIR``: HCSU per-class accuracy and
the confusion matrix of the style-discrimination task, as tables and a heatmap.

Read from the records of ``hcsu-discrimination`` runs (``details.correct_class`` and
``details.predicted_class``, class keys such as ``"Tie/王羲之-行书"``), per model:

- **confusion matrix**: rows the true style (class), columns the predicted style, plus an
  ``Invalid`` column for answers naming no candidate (state ``unparsed``); each cell a
  count of answered samples (scored + unparsed). Error records (no answer) are in no
  cell; their count is a footnote. With ``--distractor-pool all`` a column may be a
  class of the other domain.
- **per-class accuracy**: n answered, correct, accuracy (correct / answered, percent)
  with a 95 % Wilson interval over the class's samples
  (:func:`heritage_eval.core.summary.estimate`, no clustering), invalid share.

Files per model (``<slug>``: the model name with ``/:`` and other non-word characters
turned into ``_``): ``hcsu_confusion_<slug>.{md,csv,tex}``,
``hcsu_per_class_<slug>.{md,csv,tex}`` and ``hcsu_confusion_<slug>.png`` (row-normalised
colours, counts written in the cells; class names need a CJK font, see
:func:`heritage_eval.report.paper_io.cjk_font`; without one the axes show ``C1 …`` and
the table gives the names).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.tables import Cell, Column, Table, write_table
from heritage_eval.report.paper_io import (
    add_common_args,
    cjk_font,
    formats_of,
    guarded,
    prepare_out,
    print_written,
    read_runs,
    save_png,
)
from heritage_eval.report.runs import ModelRun, RunData, metric_specs, model_runs

if TYPE_CHECKING:
    from matplotlib.figure import Figure

INVALID = "Invalid"


@dataclass(frozen=True)
class Confusion:
    """Counts of one model: ``matrix[(true, predicted)]`` (predicted ``None`` = invalid),
    ``classes`` (rows, sorted), ``predicted`` (columns: classes then any predicted class
    that is no row), ``n_error`` records left out."""

    model: str
    classes: list[str]
    predicted: list[str]
    matrix: dict[tuple[str, str | None], int]
    n_error: int

    def row_total(self, cls: str) -> int:
        """Answered samples of true class ``cls``."""
        return sum(v for (t, _), v in self.matrix.items() if t == cls)


def slug(name: str) -> str:
    """File-name form of a model name (``"baseline:random"`` -> ``"baseline_random"``)."""
    return re.sub(r"[^\w.-]+", "_", name, flags=re.ASCII).strip("_") or "model"


def models_of(runs: list[RunData]) -> list[ModelRun]:
    """Every (run, model) of the runs, named as :func:`report.runs.model_runs` names them."""
    notes: list[str] = []
    models = model_runs(runs, metric_specs(runs[0].summary), ["domain"], notes)
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    return models


def confusion(model: str, records: list[SampleRecord]) -> Confusion:
    """The confusion counts of one model's records (see the module docstring)."""
    matrix: Counter[tuple[str, str | None]] = Counter()
    n_error = 0
    for r in records:
        true = r.details.get("correct_class") or r.groups.get("class")
        if r.state.value not in ("scored", "unparsed") or not true:
            n_error += 1
            continue
        pred = r.details.get("predicted_class") if r.state.value == "scored" else None
        matrix[(str(true), str(pred) if pred else None)] += 1
    classes = sorted({t for t, _ in matrix})
    extra = sorted({p for _, p in matrix if p is not None and p not in classes})
    return Confusion(model, classes, classes + extra, dict(matrix), n_error)


def confusion_table(c: Confusion) -> Table:
    """Rows true class, columns predicted class and Invalid, then the row total."""
    cols = [Column("key", "Key", kind="text"), Column("true", "True style", kind="text")]
    cols += [Column(f"p{j}", p, decimals=0) for j, p in enumerate(c.predicted)]
    cols += [Column("invalid", INVALID, decimals=0), Column("n", "n", decimals=0)]
    rows: list[dict[str, Cell | float | str | None]] = []
    for i, t in enumerate(c.classes):
        row: dict[str, Cell | float | str | None] = {"key": f"C{i + 1}", "true": t}
        row |= {f"p{j}": float(c.matrix.get((t, p), 0)) for j, p in enumerate(c.predicted)}
        row["invalid"] = float(c.matrix.get((t, None), 0))
        row["n"] = float(c.row_total(t))
        rows.append(row)
    extra = c.predicted[len(c.classes):]
    order = "in row order" + (", then " + ", ".join(extra) if extra else "")
    notes = ["Rows: true style (domain/calligrapher-script); columns: the style answered "
             f"({order}); "
             "Invalid: an answer naming no candidate (unparsed). Counts of answered "
             "samples."]
    if c.n_error:
        notes.append(f"{c.n_error} error record(s) (no answer) are in no cell.")
    return Table(cols, rows, title=f"HCSU confusion matrix — {c.model}", footnotes=notes)


def per_class_table(c: Confusion, records: list[SampleRecord]) -> Table:
    """Per true class: n answered, correct, accuracy (percent, 95 % interval), invalid
    share (percent)."""
    from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
    from heritage_eval.core.summary import estimate

    spec = dataclasses.replace(ACCURACY, cluster=None, macro_over=None)
    cols = [Column("cls", "Class", kind="text"), Column("n", "n", decimals=0),
            Column("correct", "Correct", decimals=0),
            Column("acc", "Acc", scale=100.0, rank="higher"),
            Column("invalid", "Invalid %", scale=100.0)]
    rows: list[dict[str, Cell | float | str | None]] = []
    for t in c.classes:
        n = c.row_total(t)
        mine = [r for r in records if (r.details.get("correct_class") or r.groups.get("class"))
                == t]
        est = estimate(mine, spec, macro=False)
        lo, hi = est.get("ci_low"), est.get("ci_high")
        rows.append({"cls": t, "n": float(n), "correct": float(c.matrix.get((t, t), 0)),
                     "acc": Cell(c.matrix.get((t, t), 0) / n if n else None,
                                 lo if hi is not None else None, hi if lo is not None else None),
                     "invalid": c.matrix.get((t, None), 0) / n if n else None})
    return Table(cols, rows, title=f"HCSU per-class accuracy — {c.model}", intervals="brackets",
                 footnotes=["Acc = correct ÷ answered (scored + unparsed) samples of the "
                            "class; 95 % Wilson interval over its samples. "
                            "Best bold, second underlined."])


def confusion_figure(c: Confusion) -> Figure:
    """Heatmap: rows true class, columns predicted classes and Invalid; colour = share of
    the row (0–1), text = count. Raises ``ValueError`` for a model with no answered
    sample (no row: the command skips such a model)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    if not c.classes:
        raise ValueError(f"{c.model}: no answered sample, no confusion matrix to draw")
    font = cjk_font()
    cols: list[str | None] = [*c.predicted, None]
    counts = np.array([[c.matrix.get((t, p), 0) for p in cols] for t in c.classes], float)
    share = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    if font:
        plt.rcParams["font.sans-serif"] = [font, "DejaVu Sans"]
        names = list(c.predicted)
    else:
        print("warning: no CJK font found (install fonts-noto-cjk or set "
              "HERITAGE_EVAL_CJK_FONT to a .ttf/.otf file); the heatmap labels classes "
              "C1, C2, … (names in the table)", file=sys.stderr)
        names = [f"C{j + 1}" for j in range(len(c.predicted))]
    size = 0.7 * len(cols) + 3
    fig, ax = plt.subplots(figsize=(size + 1.5, 0.6 * len(c.classes) + 2.5),
                           layout="constrained")
    im = ax.imshow(share, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for i in range(len(c.classes)):
        for j in range(len(cols)):
            ax.text(j, i, str(int(counts[i, j])), ha="center", va="center", fontsize=8,
                    color="white" if share[i, j] > 0.6 else "black")
    ax.set_xticks(range(len(cols)), [*names, INVALID], rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(c.classes)), names[: len(c.classes)], fontsize=8)
    ax.set_xlabel("predicted style")
    ax.set_ylabel("true style")
    ax.set_title(f"HCSU confusion matrix — {c.model}", fontsize=10)
    fig.colorbar(im, ax=ax, label="share of the true class's answers")
    if not font:
        fig.text(0.0, -0.02, f"C1 … C{len(names)}: the Key column of "
                 f"hcsu_confusion_{slug(c.model)}.md (no CJK font installed)", fontsize=7,
                 va="top")
    return fig


def _add_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "hcsu-discrimination run folders (one matrix per model)")


def _handler(args: argparse.Namespace) -> int:
    """Exit 0 written; 1 when no model has an answered sample (every record an error:
    nothing is written, a model without one is skipped with a warning); 2 bad input."""
    fmts = formats_of(args)
    runs = read_runs(args.runs, ["hcsu-discrimination"])
    out = prepare_out(args.out)
    paths: list[Path] = []
    empty: list[str] = []
    for m in models_of(runs):
        c = confusion(m.name, m.records)
        if not c.classes:
            print(f"warning: {m.name} ({m.run_dir}): none of its {c.n_error} record(s) was "
                  "answered (every one ended as error); no confusion matrix for it",
                  file=sys.stderr)
            empty.append(m.name)
            continue
        s = slug(m.name)
        paths += write_table(confusion_table(c), out / f"hcsu_confusion_{s}", fmts)
        paths += write_table(per_class_table(c, m.records), out / f"hcsu_per_class_{s}", fmts)
        paths.append(save_png(confusion_figure(c), out / f"hcsu_confusion_{s}.png"))
    print_written(paths)
    if not paths:
        print(f"error: no model has an answered sample ({', '.join(empty)}): nothing "
              "written", file=sys.stderr)
        return 1
    return 0


HCSU_CONFUSION = Command(
    name="hcsu-confusion", help="HCSU per-class accuracy and confusion matrix",
    add_args=_add_args, handler=guarded(_handler),
    description=(
        "Per model of hcsu-discrimination runs: the confusion matrix (rows true style,\n"
        "columns predicted style, invalid answers in their own column) as a table and a\n"
        "heatmap, and per-class accuracy with 95 % intervals. Writes\n"
        "OUT/hcsu_confusion_<model>.{md,csv,tex,png} and OUT/hcsu_per_class_<model>.*.\n"
        "A model with no answered sample (all errors) is skipped with a warning; exit\n"
        "status 1 when no model has one (nothing written), 2 for unusable input.\n\n"
        "Example:\n  heritage-eval paper hcsu-confusion runs/hcsu-sim --out paper/"))
