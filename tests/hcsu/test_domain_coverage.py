"""An HCSU average over fewer domains than the paper's two (Bei, Tie) is marked in the
table, footnoted, and said at the console's end (``benchmarks/hcsu/coverage.py``).

The user's case: one domain's annotation file is unreadable (truncated), so the run
loads Tie only and ``Avg. Acc`` is Tie's accuracy, with nothing saying so."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.hcsu.coverage import MARK, coverage_sentence, covered_domains
from heritage_eval.benchmarks.hcsu.tables import (
    discrimination_table,
    k_sweep_table,
    robustness_table,
    shot_sweep_table,
)
from heritage_eval.cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"
NOTE = "covers 1 of the paper's 2 domains (Tie; no answered sample of Bei); NOT comparable"


def _half_bei(tmp_path: Path) -> Path:
    """The demo set with bei_annotations.json cut to half its bytes (the user's recipe)."""
    data = tmp_path / "h1"
    shutil.copytree(DEMO, data)
    ann = data / "bei_annotations.json"
    raw = ann.read_bytes()
    ann.write_bytes(raw[: len(raw) // 2])
    return data


@pytest.mark.parametrize("broken", [True, False])
@pytest.mark.parametrize("task", ["hcsu-discrimination", "hcsu-description"])
def test_a_missing_domain_is_said_in_the_table_and_at_the_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], task: str, broken: bool) -> None:
    # guards against: Avg. over Tie alone shown as the paper's Avg. with no word about it
    data = _half_bei(tmp_path) if broken else DEMO
    extra = ["--k", "3"] if task == "hcsu-discrimination" else ["--no-bertscore"]
    model = ("baseline:image-similarity" if task == "hcsu-discrimination"
             else "baseline:nearest-description")
    out = tmp_path / "run"
    assert main(["run", task, "--data", str(data), "--model", model, "--per-class", "3",
                 "--out", str(out), *extra]) == 0
    cap = capsys.readouterr()
    md = (out / "summary.md").read_text("utf-8")
    what = "Avg. Acc" if task == "hcsu-discrimination" else "Overall"
    # the sentence the coverage rule gives for a run with Tie only (written out by hand)
    sentence = f"{what} {NOTE} with the paper's {what}, over Bei and Tie."
    err_lines = [ln for ln in cap.err.splitlines() if ln.startswith("note:")]
    if broken:
        assert sentence in md and sentence in cap.out
        assert err_lines == [f"note: {sentence}"]
        if task == "hcsu-discrimination":
            assert f"‡ {sentence}" in md
            row = next(ln for ln in md.splitlines() if ln.startswith("| baseline"))
            assert row.rstrip(" |").endswith(MARK)  # the Avg. Acc cell carries the mark
    else:
        assert "NOT comparable" not in md and "NOT comparable" not in cap.out
        assert MARK not in md and err_lines == []


def _entry(counts: dict[str, int]) -> dict[str, Any]:
    """A results entry whose per-domain answered counts are ``counts`` (accuracy 0.5,
    or None with no answered sample, as the scoring gives)."""
    per = {d: {"n": n, "accuracy": 0.5 if n else None, "macro_f1": 0.5,
               "bertscore_x10": 5.0 if n else None, "n_bertscore": n,
               "terminology": None, "richness": None}
           for d, n in counts.items()}
    accs = [v["accuracy"] for v in per.values()]
    avg = None if not accs or None in accs else 0.5
    return {"model": "m", "k": 4, "shots": 2, "per_domain": per, "avg_accuracy": avg}


domain_counts = st.dictionaries(st.sampled_from(["Bei", "Tie"]), st.integers(0, 3))


@settings(max_examples=80, deadline=None)
@given(domain_counts)
def test_every_average_table_marks_exactly_the_partial_rows(counts: dict[str, int]) -> None:
    # guards against: a table averaging one domain without mark / footnote, or a mark on
    # a run covering both. Rule (by hand): partial <=> 0 < #domains with n > 0 < 2.
    entry = _entry(counts)
    covered = [d for d in ("Bei", "Tie") if counts.get(d, 0) > 0]
    partial = 0 < len(covered) < 2
    assert covered_domains(entry["per_domain"]) == covered
    assert (coverage_sentence(entry["per_domain"]) is not None) == partial
    averaged = [discrimination_table([entry]), k_sweep_table([entry])]  # Avg. Acc
    pooled = [shot_sweep_table([entry]),
              robustness_table([{"condition": "c", "discrimination": entry["per_domain"],
                                 "description": entry["per_domain"]}])]
    # Avg. Acc has a value only when every present domain was answered (else – with its
    # note); a pooled value whenever some domain was answered. A – is never marked.
    avg_shown = bool(counts) and all(n > 0 for n in counts.values())
    for table in averaged:
        assert (MARK in table) == ("NOT comparable" in table) == (partial and avg_shown)
    for table in pooled:
        assert (MARK in table) == ("NOT comparable" in table) == partial
