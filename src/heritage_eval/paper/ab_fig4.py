"""``heritage-eval paper ab-fig4 RUN... --medium M --out DIR``: Fig. 4-style error
breakdown of Ancient-Bench models on one medium.

The paper's Fig. 4 (§5.1.2, "Qualitative Analysis of Hallucination Errors") shows, on a
calligraphy subset, outputs of general VLMs that are fluent but not grounded in the
image: substituted, inserted and deleted characters, and spurious extra characters from
over-recognition. It gives examples, no counts; this command counts them.

Per model, over the records of the medium that have both normalised texts
(``details.normalized_ground_truth`` / ``details.normalized_prediction``, i.e. scored or
unparsed records; errors are left out and counted), the texts are split into tokens
(:func:`heritage_eval.benchmarks.ancient_bench.normalize.tokenize`: a placeholder such
as ``<unrecognizable>`` is one token, otherwise one per character) and aligned by a
minimal edit script (:func:`heritage_eval.metrics.text.align`, ``Levenshtein.editops``),
the alignment the scorer stores. Summed over samples:

- insertions: predicted tokens with no ground-truth counterpart (extra output);
- deletions: ground-truth tokens missing from the prediction;
- substitutions: aligned pairs that differ.

**Hallucination rate (our definition)** = inserted tokens / predicted tokens, pooled
over the samples (sum over sum), in percent: the share of the output with no
counterpart in the ground truth, i.e. the paper's "spurious extra characters"; ``None``
when nothing was predicted. Substitutions (the paper's other, "semantic completion"
pattern) are shown beside it but are not counted in the rate, since the alignment cannot
tell a hallucinated character from a misread one. The same definition as
:mod:`heritage_eval.benchmarks.ancient_bench.analysis`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.tables import Column, Table, write_table
from heritage_eval.report.paper_io import (
    PaperInputError,
    add_common_args,
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

DEFAULT_MEDIUM = "Calligraphy"
CAPTION = ("Hallucination rate (our definition) = inserted tokens ÷ predicted tokens, "
           "pooled over the medium's samples: the share of the output with no counterpart "
           "in the ground truth (the paper's spurious extra characters, Fig. 4). "
           "Insertions / deletions / substitutions: a minimal alignment "
           "(Levenshtein editops) of the normalised ground truth to the normalised "
           "prediction, summed over samples.")


@dataclass(frozen=True)
class ErrorCounts:
    """Pooled edit operations of one model on one medium (counts of tokens)."""

    model: str
    n: int
    n_left_out: int
    gt_tokens: int
    pred_tokens: int
    insertions: int
    deletions: int
    substitutions: int

    @property
    def hallucination_rate(self) -> float | None:
        """Insertions / predicted tokens (fraction in [0, 1]); ``None`` with no output."""
        return self.insertions / self.pred_tokens if self.pred_tokens else None


def _medium_of(name: str) -> str:
    from heritage_eval.benchmarks.ancient_bench.categories import medium_name, resolve_category

    return medium_name(resolve_category(name))


def error_counts(runs: list[RunData], medium: str) -> list[ErrorCounts]:
    """Per model of the runs (record ``model``, first-run order), the pooled counts on
    ``medium`` (a paper name such as ``"Calligraphy"`` or a release folder name such as
    ``"calligraphys"``). Raises :class:`PaperInputError` when no record of the runs is
    of that medium (listing the media present)."""
    from heritage_eval.benchmarks.ancient_bench.normalize import tokenize
    from heritage_eval.metrics.text import align

    wanted = _medium_of(medium)
    present = {str(r.groups.get("medium")) for run in runs for r in run.records}
    if wanted not in present:
        raise PaperInputError(f"no record of medium {medium!r} in "
                              f"{', '.join(str(r.path) for r in runs)}; media present: "
                              f"{', '.join(sorted(present))}")
    totals: dict[str, list[int]] = {}
    for run in runs:
        for r in run.records:
            if r.groups.get("medium") != wanted:
                continue
            t = totals.setdefault(r.model, [0] * 7)
            gt = r.details.get("normalized_ground_truth")
            pred = r.details.get("normalized_prediction")
            if not isinstance(gt, str) or not isinstance(pred, str):
                t[1] += 1
                continue
            g, p = tokenize(gt), tokenize(pred)
            a = align(g, p)
            for i, v in enumerate((1, 0, len(g), len(p), a.insertions, a.deletions,
                                   a.substitutions)):
                t[i] += v
    return [ErrorCounts(m, *t) for m, t in totals.items()]


def errors_table(counts: list[ErrorCounts], medium: str) -> Table:
    """Models (rows) × samples, tokens, insertions, deletions, substitutions and the
    hallucination rate (percent; lowest bold)."""
    cols = [Column("model", "Model", kind="text"), Column("n", "Samples", decimals=0),
            Column("gt", "GT tokens", decimals=0), Column("pred", "Predicted tokens",
                                                          decimals=0),
            Column("ins", "Insertions", decimals=0), Column("del", "Deletions", decimals=0),
            Column("sub", "Substitutions", decimals=0),
            Column("hall", "Hallucination rate (%)", scale=100.0, rank="lower")]
    rows: list[dict[str, object]] = [
        {"model": c.model, "n": c.n, "gt": c.gt_tokens, "pred": c.pred_tokens,
         "ins": c.insertions, "del": c.deletions, "sub": c.substitutions,
         "hall": c.hallucination_rate} for c in counts]
    notes = [CAPTION]
    left = [f"{c.model}: {c.n_left_out}" for c in counts if c.n_left_out]
    if left:
        notes.append("Records without normalised texts (errors) left out: " + ", ".join(left))
    return Table(cols, rows, title=f"Ancient-Bench errors on {_medium_of(medium)}",  # type: ignore[arg-type]
                 footnotes=notes)


def samples_note(counts: list[ErrorCounts]) -> str:
    """The figure title's sample count, per model (every model scores the medium's
    samples separately): ``"12 samples per model"``, or ``"samples per model: a 12,
    b 10"`` when the models differ."""
    ns = {c.n for c in counts}
    if len(ns) == 1:
        n = ns.pop()
        return f"{n} sample{'s' if n != 1 else ''} per model"
    return "samples per model: " + ", ".join(f"{c.model} {c.n}" for c in counts)


def errors_figure(counts: list[ErrorCounts], medium: str) -> Figure:
    """Left: insertions / deletions / substitutions per model (grouped bars, token
    counts); right: hallucination rate per model (percent). Caption under the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = [c.model for c in counts]
    x = np.arange(len(counts))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(max(7.5, 1.6 * len(counts) + 5), 4.2),
                                 gridspec_kw={"width_ratios": [2, 1]}, layout="constrained")
    width = 0.26
    for i, (label, key) in enumerate((("insertions", "insertions"), ("deletions", "deletions"),
                                      ("substitutions", "substitutions"))):
        vals = [getattr(c, key) for c in counts]
        bars = ax.bar(x + (i - 1) * width, vals, width, label=label, color=f"C{i}")
        ax.bar_label(bars, fontsize=7)
    ax.set_xticks(x, names, rotation=20 if len(counts) > 3 else 0, ha="right"
                  if len(counts) > 3 else "center", fontsize=8)
    ax.set_ylabel("tokens (summed over samples)")
    ax.set_ylim(bottom=0)
    if not any(c.n for c in counts):
        ax.set_ylim(0, 1)
        ax.text(0.5, 0.5, "no scored sample on this medium\n(every record an error?)",
                transform=ax.transAxes, ha="center", va="center", fontsize=9)
    ax.set_title(f"edit operations on {_medium_of(medium)}", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    rates = [100 * (c.hallucination_rate or 0.0) for c in counts]
    bars = bx.bar(x, rates, 0.5, color="C3")
    bx.bar_label(bars, labels=[f"{r:.1f}" if c.hallucination_rate is not None else "n/a"
                               for r, c in zip(rates, counts, strict=True)], fontsize=7)
    bx.set_xticks(x, names, rotation=20 if len(counts) > 3 else 0, fontsize=8)
    bx.set_ylabel("hallucination rate (%)")
    bx.set_ylim(0, max([10.0, *rates]) * 1.15)
    bx.set_title("inserted ÷ predicted tokens", fontsize=9)
    bx.grid(axis="y", alpha=0.3)
    fig.suptitle(f"Ancient-Bench error breakdown — {_medium_of(medium)} "
                 f"({samples_note(counts)})", fontsize=10)
    import textwrap

    fig.text(0.0, -0.02, "\n".join(textwrap.wrap(CAPTION, 130)), fontsize=7, va="top")
    return fig


def _add_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "Ancient-Bench run folders (records keep the normalised texts)")
    p.add_argument("--medium", default=DEFAULT_MEDIUM, metavar="MEDIUM",
                   help="medium: paper name (Oracle, Bronze, Slip, Silk, Seal, Stele, Cliff, "
                        "Edition, Calligraphy) or release folder name (default: "
                        "Calligraphy, the paper's Fig. 4 subset)")


def _handler(args: argparse.Namespace) -> int:
    fmts = formats_of(args)
    runs = read_runs(args.runs, ["ancient-bench"])
    counts = error_counts(runs, args.medium)
    out = prepare_out(args.out)
    paths = write_table(errors_table(counts, args.medium), out / "ab_fig4", fmts)
    paths.append(save_png(errors_figure(counts, args.medium), out / "ab_fig4.png"))
    print_written(paths)
    return 0


AB_FIG4 = Command(
    name="ab-fig4", help="Ancient-Bench Fig. 4-style error breakdown on one medium",
    add_args=_add_args, handler=guarded(_handler),
    description=(
        "Insertions, deletions and substitutions per model on one medium (the minimal\n"
        "alignment of normalised ground truth and prediction), and a hallucination rate:\n"
        "inserted tokens / predicted tokens (our definition of the paper's spurious extra\n"
        "characters, Fig. 4). Writes OUT/ab_fig4.{md,csv,tex} and OUT/ab_fig4.png.\n\n"
        "Example:\n  heritage-eval paper ab-fig4 runs/ab --medium Calligraphy --out paper/"))
