"""The viewer's run header shows one line, not a table of "—" with n 0, for a model with
no estimate (``viewer/header.py``: ``has_estimate``; the line is the console's and
``summary.md``'s :data:`~heritage_eval.core.run_tables.NOTHING_SCORED`). Generated
summary blocks for the rule; one real `run hcsu-description --no-bertscore` and one
`hcsu robustness` study folder on the bundled demo data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.cli.main import main
from heritage_eval.core.run_tables import NOTHING_SCORED, nothing_scored
from heritage_eval.viewer.header import has_estimate, run_header
from heritage_eval.viewer.html import esc
from heritage_eval.viewer.runs import RunData, read_run

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo" / "hcsu"
NEAREST = "baseline:nearest-description"
SPECS = [{"name": "acc", "label": "Acc", "scale": 100.0, "decimals": 1},
         {"name": "f1", "label": "F1", "scale": 100.0, "decimals": 1}]
RATE = {"value": 0.25, "ci_low": 0.1, "ci_high": 0.5, "n": 4, "stderr": 0.1, "flags": []}

estimate = st.one_of(st.none(), st.builds(
    lambda v, n: {"value": v, "ci_low": v, "ci_high": v, "n": n, "stderr": None,
                  "flags": ["n_0"] if v is None else []},
    st.one_of(st.none(), st.floats(0, 1)), st.integers(0, 9)))
ests = st.dictionaries(st.sampled_from(["acc", "f1"]), estimate)
blocks = st.fixed_dictionaries({
    "metrics": ests,
    "groups": st.dictionaries(st.sampled_from(["domain", "condition"]),
                              st.dictionaries(st.sampled_from(["a", "b"]), ests)),
    "states": st.just({"scored": 4}), "invalid_rate": st.just(RATE)})


def _values(block: dict[str, Any]) -> list[float]:
    """Every metric value of a block, read independently of the code under test."""
    found = [e["value"] for e in block["metrics"].values() if e]
    found += [e["value"] for vals in block["groups"].values() for g in vals.values()
              for e in g.values() if e]
    return [v for v in found if v is not None]


def _run(summary: dict[str, Any]) -> RunData:
    return RunData(path=Path("r"), name="r", benchmark="b", summary=summary)


@settings(max_examples=200, deadline=None)
@given(blocks, st.booleans())
def test_one_line_exactly_when_no_estimate_has_a_value(block: dict[str, Any],
                                                       study: bool) -> None:
    summary = {"benchmark": "b", "statistics": {"metric_specs": SPECS},
               "models": {"m": block}, **({"condition_keys": ["condition"]} if study else {})}
    html = run_header(_run(summary), 0, [], [])
    scored = bool(_values(block))
    assert has_estimate(block) == scored
    assert (esc(NOTHING_SCORED) in html) == (not scored)
    assert "invalid rate (%)" in html  # counts answers, not scores: always shown
    if not scored:  # no metric row, no per-group or per-condition table of dashes
        assert 'class="grid groups"' not in html and "<td>Acc</td>" not in html
        assert "n=0" not in html and "condition-headline" not in html


@pytest.mark.parametrize("study", [False, True], ids=["run", "robustness"])
def test_a_real_run_that_scored_nothing(study: bool, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = (["hcsu", "robustness", "--tasks", "description", "--limit", "2"] if study
            else ["run", "hcsu-description"])
    assert main([*args, "--data", str(DEMO), "--model", NEAREST, "--no-bertscore",
                 "--out", str(out)]) == 0
    run = read_run(out)
    html = run_header(run, 0, [], [])
    # the line names this run's own causes: the metrics --no-bertscore and no --judge
    # turned off (core/run_tables.nothing_scored)
    assert esc(nothing_scored(run.summary)) in html and "--no-bertscore" in html
    assert "n=0" not in html and 'class="grid groups"' not in html
    assert "<td>BERTScore</td>" not in html and "invalid rate (%)" in html
