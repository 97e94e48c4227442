"""Issue 22, "first contact": HCSU tables and study folders read right to a new user.

- Study folders (K sweep …): the headline is per condition, never one value pooled over
  conditions; ``compare`` accepts two sweeps of the same kind and groups by the condition.
- HCSU Markdown tables: numbers right-aligned, columns that say nothing left out and
  named, an uncomputed metric shows "–" never 0 (tables.py module docstring, rule).
- Ties in a ranked table are said in a footnote (report/tables.py module docstring).
- ``summary.md`` ends with the provenance.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.hcsu.tables import DASH, description_table, layout
from heritage_eval.cli.main import main
from heritage_eval.core.tables import TIE_NOTE, Column, Table, to_latex, to_markdown
from heritage_eval.report.compare import compare_runs
from heritage_eval.viewer.header import run_header
from heritage_eval.viewer.runs import read_run

#: the bundled demo set (5 classes per domain, so K <= 5)
REAL = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"

# --- the layout rule on generated tables ------------------------------------------------

CELLS = [DASH, "0", "0.00", "12.50", "4.00 (+1.25)", "BERTScore 0 / judge –",
         "BERTScore 2 / judge 0", "domain"]
NAMES = ["Model", "K", "Bei Acc", "Bei Err.", "Bei Invalid", "Tie Unscored", "Pool"]


def _is_number(cell: str) -> bool:
    """Independent of the module's regex: a float, optionally followed by "(±float)"."""
    head, _, tail = cell.partition(" (")
    try:
        float(head)
        if tail:
            float(tail.rstrip(")"))
    except ValueError:
        return False
    return not tail or tail.endswith(")")


def _zero(cell: str) -> bool:
    words = cell.replace("/", " ").split()
    return all(float(w) == 0 for w in words if w.replace(".", "", 1).isdigit())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(CELLS), min_size=len(NAMES), max_size=len(NAMES)),
                min_size=1, max_size=4))
def test_layout_keeps_aligns_and_drops_by_the_rule(grid: list[list[str]]) -> None:
    rows = [dict(zip(NAMES, r, strict=True)) for r in grid]
    kept, align, empty, zero = layout(rows)
    for j, name in enumerate(NAMES):
        cells = [r[j] for r in grid]
        if j > 0 and all(c == DASH for c in cells):
            assert name in empty
        elif name.endswith(("Err.", "Invalid", "Unscored")) and all(map(_zero, cells)):
            assert name in zero
        else:
            want = "right" if all(c == DASH or _is_number(c) for c in cells) else "left"
            assert align[kept.index(name)] == want
    assert sorted(kept + empty + zero) == sorted(NAMES)  # every column placed once


def test_description_table_right_aligns_and_names_what_it_leaves_out() -> None:
    # a run with BERTScore off (recorded reason) and a judge that failed twice on Tie:
    # the unscored cell says "–" for BERTScore (not computed), 2 for the judge
    entry = {"model": "m", "shots": 2, "judge": "openai:j",
             "bertscore_unavailable": "BERTScore disabled (--no-bertscore)",
             "per_domain": {"Tie": {"n": 3, "n_error": 0, "invalid_rate": 0.0,
                                    "bertscore_x10": None, "terminology": 4.0,
                                    "richness": 5.0, "n_bertscore_unscored": 0,
                                    "n_judge_unscored": 2}}}
    md = description_table([entry])
    head, rule = md.splitlines()[:2]
    row = next(line for line in md.splitlines() if line.startswith("| m "))  # not the expert
    cells = dict(zip([c.strip() for c in head.strip("|").split("|")],
                     [c.strip() for c in row.strip("|").split("|")], strict=True))
    assert cells["Tie Unscored"] == "BERTScore – / judge 2"  # not "BERTScore 0"
    assert "Tie BERTScore" not in cells and "Tie Err." not in cells
    aligns = dict(zip(cells, [c.strip() for c in rule.strip("|").split("|")], strict=True))
    assert aligns["Shots"].endswith(":") and aligns["Tie n"].endswith(":")  # right
    assert aligns["Model"].startswith(":") and not aligns["Model"].endswith(":")
    # BERTScore: "–" in both rows (off); Invalid / Err.: 0 for m, "–" for the expert row
    assert "Not shown: Tie BERTScore (– in every row); Tie Invalid, " \
           "Tie Err. (0 in every row)." in md


# --- ties ----------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.5, 0.504, 0.4, 0.3, None]), min_size=1, max_size=6),
       st.sampled_from(["higher", "lower"]))
def test_a_tie_for_best_or_second_is_footnoted(values: list[float | None],
                                               rank: Literal["higher", "lower"]) -> None:
    t = Table([Column("m", "Model", kind="text"), Column("a", "A", decimals=2, rank=rank)],
              [{"m": f"m{i}", "a": v} for i, v in enumerate(values)])
    # oracle: the printed values (2 decimals, Decimal-quantised), best two distinct
    printed = Counter(Decimal(f"{v:.2f}") for v in values if v is not None)
    top = sorted(printed, reverse=rank == "higher")[:2]
    tie = any(printed[v] > 1 for v in top)
    note = TIE_NOTE.format("A")
    assert (note in to_markdown(t)) == tie
    assert (f"% {note}" in to_latex(t)) == tie


# --- study folders -----------------------------------------------------------------------

def _sweep(out: Path, model: str) -> dict[str, Any]:
    assert main(["hcsu", "k-sweep", "--data", str(REAL), "--model", model, "--ks", "2,3",
                 "--per-class", "2", "--out", str(out)]) == 0
    data: dict[str, Any] = json.loads((out / "summary.json").read_text("utf-8"))
    return data


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sweeps")
    _sweep(root / "sim", "baseline:image-similarity")
    _sweep(root / "rnd", "baseline:random")
    return root / "sim", root / "rnd"


def test_sweep_headline_is_per_k_with_no_pooled_row(sweeps: tuple[Path, Path]) -> None:
    sim, _ = sweeps
    summary = json.loads((sim / "summary.json").read_text("utf-8"))
    assert summary["condition_keys"] == ["k"] and "not meaningful" in summary["headline_note"]
    md = (sim / "summary.md").read_text("utf-8")
    section = md.split("## Per K: value [95 % interval]")[1].split("## Provenance")[0]
    rows = [r for r in section.splitlines() if r.startswith("| ")][2:]  # header, rule
    assert [r.split("|")[1].strip() for r in rows] == ["2", "3"]  # no "Overall" row
    by_k = summary["models"]["baseline:image-similarity"]["groups"]["k"]
    # the K = 2 row shows that group's value, x100 with two decimals
    assert f"{100 * by_k['2']['accuracy']['value']:.2f}" in rows[0]
    # the viewer header: the per-K table first, the pooled value folded and labelled
    html = run_header(read_run(sim), 0, [], [])
    assert html.index("per k") < html.index("(not meaningful)")
    pooled = summary["models"]["baseline:image-similarity"]["metrics"]["accuracy"]
    assert html.index(f"{100 * pooled['value']:.2f}") > html.index("(not meaningful)")


def test_study_summary_md_ends_with_provenance(sweeps: tuple[Path, Path]) -> None:
    sim, _ = sweeps
    md = (sim / "summary.md").read_text("utf-8")
    run_json = json.loads((sim / "run.json").read_text("utf-8"))
    prov = md.split("## Provenance")[1]
    assert f"config hash: `{run_json['config_hash']}`" in prov  # as run.json records it
    assert "model: `baseline:image-similarity`" in prov and "git commit:" in prov
    assert re.search(r"package: heritage-eval `\d", prov)


def test_two_k_sweeps_compare_grouped_by_k(sweeps: tuple[Path, Path]) -> None:
    comp = compare_runs(list(sweeps))
    assert comp.benchmark == "hcsu-k-sweep"
    assert "k" in comp.group_keys
    assert [m.name for m in comp.models] == ["baseline:image-similarity", "baseline:random"]


def test_single_run_summary_md_has_provenance(tmp_path: Path) -> None:
    out = tmp_path / "disc"
    assert main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
                 "baseline:random", "--k", "3", "--per-class", "2", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    md = (out / "summary.md").read_text("utf-8")
    assert f"config hash: `{summary['provenance']['config_hash']}`" in md
    assert f"data: `{summary['provenance']['data']['root']}`" in md
