"""The files of a run comparison (``heritage-eval compare … --out DIR``): ``compare.md``
with every table, ``models.*`` / ``groups_<key>.*`` in each table format, ``paired.csv``,
``disagreements.jsonl`` and the ``compare.json`` manifest (:func:`write_comparison`)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.core.store import atomic_write_text
from heritage_eval.core.tables import to_markdown, write_table
from heritage_eval.report.compare_out import (
    MANIFEST,
    earlier_files,
    manifest_text,
    remove_stale,
)
from heritage_eval.report.compare_tables import (
    MD_DISAGREEMENTS,
    disagreements_table,
    group_table,
    models_table,
    paired_table,
)
from heritage_eval.report.sample_sets import SampleSet

if TYPE_CHECKING:
    from heritage_eval.report.compare import Comparison

__all__ = ["write_comparison"]


def _samples_line(ss: SampleSet) -> str:
    if ss.same:
        return f"every model counts the same {ss.n_common} sample(s)."
    if ss.rule == "all":
        return ("**NOT COMPARABLE** — each model is scored on its own samples (`--samples "
                f"all`); {ss.n_common} sample(s) are common to all.")
    dropped = "; ".join(f"{m}: {d['n']}" for m, d in ss.dropped.items())
    return (f"every model is scored on the {ss.n_common} sample(s) all models counted "
            f"(`--samples common`); records dropped: {dropped}. Reasons in the warnings.")


def conditions_line(comp: Comparison) -> str:
    """The sentence of ``compare.md`` on a study comparison's conditions (empty for plain
    runs)."""
    if comp.condition_key is None:
        return ""
    return (f"Conditions: these are study folders over `{comp.condition_key}` "
            f"({', '.join(comp.conditions)}). Each condition is tabulated, ranked and "
            "paired on its own records; no value is pooled over conditions (a pooled value "
            "measures no setting).")


def _paired_csv(comp: Comparison) -> str:
    from heritage_eval.report.compare import PairedRow

    buf = io.StringIO()
    w = csv.DictWriter(buf, [f.name for f in fields(PairedRow)], lineterminator="\n")
    w.writeheader()
    w.writerows(p.csv_row() for p in comp.paired)
    return buf.getvalue()


def _file_key(key: str) -> str:
    return re.sub(r"[^\w.-]+", "_", key, flags=re.ASCII).strip("_") or "group"


def write_comparison(comp: Comparison, out_dir: str | Path,
                     formats: Sequence[str] = ("md", "csv", "tex")) -> list[Path]:
    """Write the comparison into ``out_dir`` (created) and return the paths written:
    ``compare.md`` (every table, the paired differences and the first 50 disagreements
    with their count), ``models.<fmt>`` and ``groups_<key>.<fmt>`` for each of
    ``formats``, ``paired.csv`` (score units, full precision) and
    ``disagreements.jsonl`` (all of them). A study comparison's tables have a block per
    condition, and its condition tag gets no ``groups_<key>`` table (the models table is
    that table). Every file is replaced atomically; ``compare.json`` (written last)
    lists them with their SHA-256, which marks the folder as a comparison that a later
    ``compare --out`` may replace (:mod:`heritage_eval.report.compare_out`), and the
    files of an earlier comparison there that this one does not write again are
    removed. Whether ``out_dir`` may be written is the caller's check
    (:func:`~heritage_eval.report.compare_out.check_out`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    earlier = earlier_files(out)
    paths = write_table(models_table(comp), out / "models", formats)
    md = [f"# Comparison: {comp.benchmark}", ""]
    md += [f"- `{r}`: " + ", ".join(m.name for m in comp.models if m.run_dir == r)
           + (" (**PARTIAL**)" if r in comp.partial_runs else "") for r in comp.runs]
    md += ["", f"Reference model: **{comp.reference}**.", ""]
    if comp.condition_key is not None:
        md += [conditions_line(comp), ""]
    if comp.sample_set is not None:
        md += [f"Samples: {_samples_line(comp.sample_set)}", ""]
    md += [f"> warning: {w}" for w in comp.warnings] + ([""] if comp.warnings else [])
    md += ["## Models", "", to_markdown(models_table(comp))]
    for key in comp.group_keys:
        if key == comp.condition_key:
            continue
        table = group_table(comp, key)
        if len(table.columns) > 1 + len(comp.metrics):
            paths += write_table(table, out / f"groups_{_file_key(key)}", formats)
            md += [f"## Per {key}", "", to_markdown(table)]
    md += [f"## Paired differences against {comp.reference}", ""]
    md += [to_markdown(paired_table(comp)) if comp.paired else "Only one model: nothing "
           "to pair.\n"]
    n = len(comp.disagreements)
    md += [f"## Disagreements with {comp.reference}", "",
           f"{n} record(s) where a model differs from the reference (0/1 metrics: any "
           f"difference; others: |difference| >= {comp.threshold:g} in score units)"
           + (f"; the first {MD_DISAGREEMENTS} by size of difference:" if n > MD_DISAGREEMENTS
              else "."), ""]
    if n:
        md.append(to_markdown(disagreements_table(comp)))
    md.append("All of them: `disagreements.jsonl`; paired differences: `paired.csv`.")
    atomic_write_text(out / "compare.md", "\n".join(md) + "\n")
    atomic_write_text(out / "paired.csv", _paired_csv(comp))
    atomic_write_text(out / "disagreements.jsonl", "".join(
        json.dumps(d.to_dict(), ensure_ascii=False) + "\n" for d in comp.disagreements))
    written = [out / "compare.md", *paths, out / "paired.csv", out / "disagreements.jsonl"]
    remove_stale(out, earlier, written)
    atomic_write_text(out / MANIFEST, manifest_text(out, written))
    return written
