"""The line shown when no metric scored any sample names only causes the run had
(``core/run_tables.nothing_scored``, fed by the body's ``metrics_off``:
``benchmarks/hcsu/metrics_off.py``).

The user's case: an Ancient-Bench run in which nothing was answered printed "(a metric
turned off, such as --no-bertscore …)"; ancient-bench has no such option."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.hcsu.metrics_off import metrics_off
from heritage_eval.cli.main import main
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.engine import headline_lines, intervals_markdown
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.run_tables import nothing_scored
from heritage_eval.core.summary import envelope
from heritage_eval.core.types import Outcome

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"
OPTION = re.compile(r"--[a-z][a-z-]+")


def _all_errors(benchmark: str) -> dict[str, object]:
    """An envelope in which every sample ended as error (nothing answered)."""
    recs = [SampleRecord(schema="heritage-eval/sample/1", benchmark=benchmark, model="m",
                         id=f"s{i}", state=Outcome.ERROR, scores={}, error="HTTP 500",
                         groups={"category": "c"}) for i in range(3)]
    return envelope(benchmark, recs, [MetricSpec("ned_score", "NED", macro_over="category")],
                    ["category"])


def test_an_ancient_bench_run_with_nothing_answered_names_no_foreign_option() -> None:
    # guards against: "--no-bertscore" suggested for a benchmark that has no such option
    summary = _all_errors("ancient-bench")
    said = ("no metric scored any sample (no answer was scored: every sample ended as "
            "error or unscored): no interval to show.")  # written out by hand
    assert headline_lines(summary)[-1] == said
    assert f"**m**: {said}" in intervals_markdown(summary)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["BERTScore disabled (--no-bertscore)",
                                 "Term. / Rich. (no --judge)",
                                 "BERTScore unavailable: no module named torch"]),
                unique=True, max_size=3))
def test_the_hint_names_exactly_the_recorded_causes(off: list[str]) -> None:
    # guards against: an option named that the run did not use, or a recorded one left out
    summary = {**_all_errors("b"), **({"metrics_off": off} if off else {})}
    line = nothing_scored(summary)
    assert set(OPTION.findall(line)) == {o for m in off for o in OPTION.findall(m)}
    assert all(m in line for m in off) and "no answer was scored" in line


def test_metrics_off_of_hcsu_entries() -> None:
    # guards against: a discrimination entry (no judge, no BERTScore keys) said to have
    # turned a metric off; by hand from the entries' keys
    assert metrics_off([{"model": "m", "per_domain": {}}]) == []
    assert metrics_off([{"judge": "openai:j", "bertscore_unavailable": None}]) == []
    assert metrics_off([{"judge": None, "bertscore_unavailable": "BERTScore disabled "
                         "(--no-bertscore)"}] * 2) == [
        "BERTScore disabled (--no-bertscore)", "Term. / Rich. (no --judge)"]


@pytest.mark.parametrize("task", ["hcsu-discrimination", "hcsu-description"])
def test_real_runs_record_what_they_turned_off(tmp_path: Path, task: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: the body losing metrics_off on the streamed path (the CLI's)
    import json

    extra = ["--k", "3"] if task == "hcsu-discrimination" else ["--no-bertscore"]
    model = ("baseline:random" if task == "hcsu-discrimination"
             else "baseline:nearest-description")
    out = tmp_path / "run"
    assert main(["run", task, "--data", str(DEMO), "--model", model, "--per-class", "2",
                 "--out", str(out), *extra]) == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    console = capsys.readouterr().out
    if task == "hcsu-discrimination":
        assert "metrics_off" not in summary and "no metric scored" not in console
    else:
        assert summary["metrics_off"] == ["BERTScore disabled (--no-bertscore)",
                                          "Term. / Rich. (no --judge)"]
        assert nothing_scored(summary) in console
