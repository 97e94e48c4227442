"""The example plug-in through every command-line surface, installed with pip.

Expected values are counted by hand from ``ANSWERS`` (conftest) against the bundled
references; intervals come from SciPy's Wilson score interval
(``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``), an implementation
independent of heritage-eval's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from tests.plugins.conftest import (
    heritage_eval,
    read_records,
    read_summary,
    replay_args,
)


def wilson(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def check(block: dict[str, Any], k: int, n: int) -> None:
    """An envelope estimate equals k of n with SciPy's Wilson interval."""
    low, high = wilson(k, n)
    assert block["n"] == n
    assert block["value"] == pytest.approx(k / n, abs=1e-12)
    assert (block["ci_low"], block["ci_high"]) == (pytest.approx(low, abs=1e-9),
                                                   pytest.approx(high, abs=1e-9))


def metrics(summary: dict[str, Any], model: str = "oracle-replay:demo") -> dict[str, Any]:
    block = summary["models"][model]
    return {"overall": block["metrics"]["accuracy"],
            **{p: g["accuracy"] for p, g in block["groups"]["period"].items()}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("oracle_runs")


@pytest.fixture(scope="module")
def replay_run(plugin_site: Path, demo_data: Path, answers_file: Path, runs: Path) -> Path:
    """The replayed answers at the defaults (k = 1, model failures scored as wrong)."""
    proc = heritage_eval(replay_args(demo_data, answers_file, runs / "replay"), [plugin_site])
    assert proc.returncode == 0, proc.stderr
    return runs / "replay"


@pytest.fixture(scope="module")
def random_run(plugin_site: Path, demo_data: Path, runs: Path) -> Path:
    """The platform's chance baseline, which picks among the labels the plan offers."""
    proc = heritage_eval(["run", "oracle-recognition", "--data", str(demo_data), "--model",
                          "baseline:random", "--out", str(runs / "random")], [plugin_site])
    assert proc.returncode == 0, proc.stderr
    return runs / "random"


def test_list_shows_the_benchmark_and_its_backend(plugin_site: Path) -> None:
    proc = heritage_eval(["list"], [plugin_site])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.split()[:1] == ["oracle-recognition"] and "Acc@k per period" in line
               for line in lines)
    assert any(line.split()[:1] == ["oracle-replay"] for line in lines)
    assert any(line.split()[:1] == ["ancient-bench"] for line in lines)  # built-ins stay


def test_run_help_lists_the_typed_options(plugin_site: Path) -> None:
    proc = heritage_eval(["run", "oracle-recognition", "--help"], [plugin_site])
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())  # argparse wraps lines
    assert "--data DIR" in text and "--k K" in text
    assert "(the metric is Acc@K) (default: 1)" in text
    assert "the first N glyphs of each period" in text  # the benchmark's --limit help
    assert "--model-failures {wrong,exclude}" in text  # platform options come along


def test_run_scores_per_period_with_wilson_intervals(replay_run: Path) -> None:
    summary = read_summary(replay_run)
    got = metrics(summary)
    # by hand: I = 人 ✓, 日 ✓ (after "Answer:"), 目 ✗, 山 ✓ -> 3/4;
    # V = 水 ✓, "" ✗ (model failure, wrong), 林 ✗ (k = 1), no character ✗ -> 1/4
    check(got["I"], 3, 4)
    check(got["V"], 1, 4)
    check(got["overall"], 4, 8)
    assert got["overall"]["label"] == "Acc@1"
    records = read_records(replay_run)
    assert records["ob-002"]["answer"] == "日" and records["ob-002"]["state"] == "scored"
    assert records["ob-008"]["state"] == "unparsed"
    assert records["ob-003"]["turns"][0]["images"][0]["path"] == "images/ob-003.png"
    assert summary["results"][0]["per_period"]["V"] == {
        "glyphs": 4, "answered": 4, "recognised": 1, "unparsed": 2, "errors": 0}
    md = (replay_run / "summary.md").read_text(encoding="utf-8")
    assert "| I | 4 | 4 | 3 | 75.0 |" in md and "| Overall | 8 | 8 | 4 | 50.0 |" in md
    assert "## 95 % confidence intervals" in md  # appended by the engine


def test_model_failure_counts_as_wrong_by_default(replay_run: Path) -> None:
    rec = read_records(replay_run)["ob-006"]
    assert rec["state"] == "unparsed" and rec["scores"] == {"accuracy": 0.0}
    assert rec["details"]["model_failure"] == "empty_answer"
    assert rec["details"]["failure_policy"] == "wrong"
    failures = read_summary(replay_run)["model_failures"]["oracle-replay:demo"]
    assert failures["policy"] == "wrong"
    assert failures["overall"] == {"n_records": 8, "n_failed": 1, "rate": 0.125}


def test_model_failures_exclude_is_applied_by_the_engine(
        plugin_site: Path, demo_data: Path, answers_file: Path, runs: Path) -> None:
    out = runs / "exclude"
    proc = heritage_eval(replay_args(demo_data, answers_file, out, "--model-failures",
                                     "exclude"), [plugin_site])
    assert proc.returncode == 0, proc.stderr
    rec = read_records(out)["ob-006"]
    assert rec["state"] == "error" and rec["error"] == "empty answer"
    assert rec["scores"] == {"accuracy": None}
    assert rec["details"]["error_kind"] == "model"
    got = metrics(read_summary(out))
    check(got["I"], 3, 4)
    check(got["V"], 1, 3)  # the empty answer left out of the denominator
    check(got["overall"], 4, 7)


def test_limit_is_applied_by_the_engine_and_marks_partial(
        plugin_site: Path, demo_data: Path, answers_file: Path, runs: Path) -> None:
    out = runs / "limit"
    proc = heritage_eval(replay_args(demo_data, answers_file, out, "--limit", "1"),
                         [plugin_site])
    assert proc.returncode == 0, proc.stderr
    assert "PARTIAL" in proc.stderr
    summary = read_summary(out)
    assert summary["partial"] is True
    # limit_key = period: the first glyph of each period, both answered right
    assert sorted(read_records(out)) == ["ob-001", "ob-005"]
    check(metrics(summary)["overall"], 2, 2)
    assert json.loads((out / "run.json").read_text())["status"] == "partial"


def test_random_baseline_answers_from_the_offered_labels(random_run: Path) -> None:
    records = read_records(random_run)
    labels = {"人", "日", "月", "山", "水", "火", "木", "羊"}
    assert len(records) == 8
    assert all(r["state"] == "scored" and r["answer"] in labels for r in records.values())


def test_view_uses_the_plugin_renderer(plugin_site: Path, replay_run: Path,
                                       random_run: Path, runs: Path) -> None:
    site = runs / "site"
    proc = heritage_eval(["view", str(replay_run), str(random_run), "--out", str(site)],
                         [plugin_site])
    assert proc.returncode == 0, proc.stderr
    pages = "".join(p.read_text(encoding="utf-8") for p in (site / "data").glob("r*-p*.js"))
    # the plug-in's part (oracle_demo/viewer.py): ranked candidate chips, reference marked
    assert 'title=\\"candidate 1\\">1. 日' in pages
    assert "renderer failed" not in pages and "cannot be imported" not in proc.stderr
    assert pages.count('<figure class=\\"img \\">') == 16  # the part's glyph, per record
    assert len(list((site / "thumbs").rglob("*.*"))) == 8


def test_compare_two_runs(plugin_site: Path, replay_run: Path, random_run: Path,
                          runs: Path) -> None:
    out = runs / "compare"
    proc = heritage_eval(["compare", str(replay_run), str(random_run), "--out", str(out)],
                         [plugin_site])
    assert proc.returncode == 0, proc.stderr
    assert "oracle-recognition: 2 model(s)" in proc.stdout
    models = (out / "models.md").read_text(encoding="utf-8")
    assert "Acc@1" in models and "baseline:random" in models
    assert "50.00" in models  # the replayed answers: 4 of 8


def test_suite_file_runs_the_plugin(plugin_site: Path, demo_data: Path, answers_file: Path,
                                    runs: Path) -> None:
    suite = runs / "suite.yaml"
    suite.write_text(
        "out: suite-out\noptions: {limit: 1}\n"
        "models:\n  - baseline:random\n"
        f"  - {{model: 'oracle-replay:demo', model_option: ['answers={answers_file}']}}\n"
        f"benchmarks:\n  - oracle-recognition: {{data: '{demo_data}', k: 2}}\n",
        encoding="utf-8")
    proc = heritage_eval(["run", "--config", str(suite)], [plugin_site])
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert ["partial", "oracle-recognition", "oracle-replay:demo"] in rows
    assert ["partial", "oracle-recognition", "baseline:random"] in rows
    replay = read_summary(runs / "suite-out" / "oracle-recognition" / "oracle-replay_demo")
    got = metrics(replay)
    assert got["overall"]["label"] == "Acc@2"  # the label follows k
    check(got["overall"], 2, 2)  # ob-001 人, ob-005 水


def test_exports_that_only_know_built_ins_refuse_cleanly(plugin_site: Path, replay_run: Path,
                                                         runs: Path) -> None:
    # export predictions writes Ancient-Bench's official layout only; export hf knows
    # the three built-in benchmarks' release layouts only (no plug-in hook yet)
    proc = heritage_eval(["export", "predictions", str(replay_run), "--out",
                          str(runs / "pred")], [plugin_site])
    assert proc.returncode == 2
    assert "only Ancient-Bench runs" in proc.stderr
    proc = heritage_eval(["export", "hf", "oracle-recognition", str(replay_run), "--out",
                          str(runs / "hf")], [plugin_site])
    assert proc.returncode == 2 and "invalid choice: 'oracle-recognition'" in proc.stderr


def test_a_missing_image_spoils_only_its_glyph(plugin_site: Path, demo_data: Path,
                                               answers_file: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(demo_data, data)
    (data / "images" / "ob-003.png").unlink()
    out = tmp_path / "run"
    proc = heritage_eval(replay_args(data, answers_file, out), [plugin_site])
    assert proc.returncode == 0, proc.stderr
    rec = read_records(out)["ob-003"]
    assert rec["state"] == "error" and rec["details"]["error_kind"] == "data"
    assert rec["error"].startswith("glyphs.jsonl:3: image 'images/ob-003.png'")
    assert rec["turns"][0]["response"] is None  # never sent
    check(metrics(read_summary(out))["I"], 3, 3)  # 人 日 山, the missing one left out


def test_a_bad_line_stops_before_anything_is_written(plugin_site: Path, demo_data: Path,
                                                     answers_file: Path,
                                                     tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(demo_data, data)
    with (data / "glyphs.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"id": "ob-009", "image": "images/ob-001.png", "answer": "人人", '
                 '"period": "I"}\n')
    out = tmp_path / "run"
    proc = heritage_eval(replay_args(data, answers_file, out), [plugin_site])
    assert proc.returncode == 2
    assert "error: glyphs.jsonl:9: answer '人人' is not one character" in proc.stderr
    assert not out.exists()
