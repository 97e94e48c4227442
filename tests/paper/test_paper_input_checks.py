"""``paper`` commands on awkward input, all on the bundled demo data (``data/demo``): a run
whose every sample ended as error (the endpoint answered HTTP 400 to every request, a
real loopback server), model names in ``--type`` / ``--group`` that no run holds, the
same run folder given twice, the per-model sample count of ``ab-fig4``'s title, and the
one ``--intervals none|pm|brackets`` option (default ``pm``) of every table command.

Expected values are counted by hand from the commands' own arguments: ``--limit 2`` on
the two-domain demo gives 2 targets per domain, so 4 HCSU records.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Iterator
from pathlib import Path

import pytest

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cli.main import main
from heritage_eval.paper.ab_fig4 import ErrorCounts, errors_figure, samples_note
from heritage_eval.paper.ab_table3 import AB_TABLE3
from heritage_eval.paper.hcsu_table3 import HCSU_TABLE3
from heritage_eval.paper.hcsu_tables import HCSU_TABLE2, HCSU_TABLE4, HCSU_TABLE5
from heritage_eval.paper.muse_table2 import MUSE_TABLE2
from tests.fake_server import Scripted, chat_reply, fake_openai_server

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def hcsu_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("hcsu")
    base = ["run", "hcsu-discrimination", "--data", str(DEMO / "hcsu"), "--k", "2",
            "--limit", "2", "--no-cache"]
    with fake_openai_server() as srv:
        srv.responder = lambda body: Scripted(status=400, body={"error": {"message": "no"}})
        # every request refused: the run is written, every record is an error (exit 1)
        assert main([*base, "--model", "openai:broken", "--base-url", srv.base_url,
                     "--retries", "0", "--out", str(root / "err")]) == 1
    assert main([*base, "--model", "baseline:random", "--out", str(root / "ok")]) == 0
    yield {"err": root / "err", "ok": root / "ok"}


def test_confusion_of_an_all_error_run(hcsu_runs: dict[str, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    # before the fix: numpy AxisError (a 1-d empty matrix), traceback, exit 1
    out = tmp_path / "p"
    assert main(["paper", "hcsu-confusion", str(hcsu_runs["err"]), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "every one of its 4 sample(s) ended as error" in err
    assert "openai:broken" in err and "no model has an answered sample" in err
    assert list(out.iterdir()) == []  # nothing written
    # next to an answered run: the error-only model is skipped, the other one drawn
    assert main(["paper", "hcsu-confusion", str(hcsu_runs["err"]), str(hcsu_runs["ok"]),
                 "--out", str(out)]) == 0
    assert "openai:broken" in capsys.readouterr().err
    assert sorted(p.name for p in out.glob("*.png")) == ["hcsu_confusion_baseline_random.png"]
    rows = _csv(out / "hcsu_confusion_baseline_random.csv")
    assert sum(int(r["n"]) for r in rows) == 4  # 2 Bei + 2 Tie targets, all answered


def test_table2_of_an_all_error_run_warns(hcsu_runs: dict[str, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paper", "hcsu-table2", str(hcsu_runs["err"]), "--formats", "csv",
                 "--out", str(tmp_path)]) == 0
    assert "every one of its 4 sample(s) ended as error" in capsys.readouterr().err
    (row,) = _csv(tmp_path / "hcsu_table2.csv")
    assert row["Model"] == "openai:broken" and row["Avg. Acc"] == ""


def test_group_with_unknown_model_and_same_run_twice(hcsu_runs: dict[str, Path],
                                                     tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    ok = str(hcsu_runs["ok"])
    assert main(["paper", "hcsu-table2", ok, "--group", "nosuch=X", "--out",
                 str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "--group: unknown model(s) nosuch; the runs hold baseline:random" in err
    assert not (tmp_path / "x").exists()
    assert main(["paper", "hcsu-table2", ok, "--group", "baseline:random=Chance",
                 "--formats", "csv", "--out", str(tmp_path)]) == 0
    assert _csv(tmp_path / "hcsu_table2.csv")[0]["group"] == "Chance"
    assert main(["paper", "hcsu-table2", ok, ok, "--formats", "csv",
                 "--out", str(tmp_path)]) == 0
    assert f"{ok} is given twice" in capsys.readouterr().err
    assert len(_csv(tmp_path / "hcsu_table2.csv")) == 2  # still two rows, but warned


@pytest.fixture(scope="module")
def ab_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ab") / "run"
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("<res>之</res>")
        assert main(["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                     "--categories", "seals", "--limit", "1", "--model", "openai:vlm-a",
                     "--base-url", srv.base_url, "--retries", "0", "--out", str(out)]) == 0
    return out


def test_ab_table3_type_typo_and_run_twice(ab_run: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paper", "ab-table3", str(ab_run), "--type", "nosuch=vlm",
                 "--out", str(tmp_path / "x")]) == 2
    assert "--type: unknown model(s) nosuch; the runs hold openai:vlm-a" in \
        capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert main(["paper", "ab-table3", str(ab_run), str(ab_run), "--type",
                 "openai:vlm-a=vlm", "--formats", "csv", "--out", str(tmp_path)]) == 0
    assert f"{ab_run} is given twice" in capsys.readouterr().err
    rows = _csv(tmp_path / "ab_table3.csv")
    assert [r["Model"] for r in rows] == ["openai:vlm-a (run)", "openai:vlm-a (run 2)"]
    # --intervals defaults to pm, but the run has one image: n = 1 has no interval
    # (docs/intervals.md), so the CSV has no bound columns and the cell is marked.
    assert "Overall / NED ci_low" not in rows[0] and rows[0]["Overall / NED"]


def _counts(model: str, n: int) -> ErrorCounts:
    return ErrorCounts(model, n, 0, 10 * n, 10 * n, 1, 1, 1)


def test_fig4_title_counts_samples_per_model() -> None:
    # before the fix: "(24 samples)" for 12 samples of each of two models
    assert samples_note([_counts("a", 12), _counts("b", 12)]) == "12 samples per model"
    assert samples_note([_counts("a", 1)]) == "1 sample per model"
    assert samples_note([_counts("a", 12), _counts("b", 10)]) == \
        "samples per model: a 12, b 10"
    import matplotlib.pyplot as plt

    fig = errors_figure([_counts("a", 12), _counts("b", 12)], "Calligraphy")
    try:
        title = fig.get_suptitle()
    finally:
        plt.close(fig)
    assert title == "Ancient-Bench error breakdown — Calligraphy (12 samples per model)"


@pytest.mark.parametrize("cmd", [AB_TABLE3, HCSU_TABLE2, HCSU_TABLE3, HCSU_TABLE4,
                                 HCSU_TABLE5, MUSE_TABLE2], ids=lambda c: c.name)
def test_intervals_option_is_the_same_everywhere(cmd: Command) -> None:
    p = argparse.ArgumentParser(exit_on_error=False)
    cmd.add_args(p)
    base = ["run_dir", "--out", "o"]
    assert p.parse_args(base).intervals == "pm"
    assert p.parse_args([*base, "--intervals"]).intervals == "pm"  # the older flag form
    for choice in ("none", "pm", "brackets"):
        assert p.parse_args([*base, "--intervals", choice]).intervals == choice
    with pytest.raises((argparse.ArgumentError, SystemExit)):
        p.parse_args([*base, "--intervals", "wide"])


def test_a_damaged_run_folder_is_refused(hcsu_runs: dict[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: a table setting summary.json's numbers beside records of a
    # samples.jsonl cut short (the rule of compare, report/runs.py check_records)
    import shutil
    damaged = tmp_path / "damaged"
    shutil.copytree(hcsu_runs["ok"], damaged)
    samples = damaged / "samples.jsonl"
    lines = samples.read_bytes().splitlines(keepends=True)
    assert len(lines) == 4  # 2 Bei + 2 Tie targets (module docstring)
    samples.write_bytes(b"".join(lines[:3]))  # one whole record lost
    out = tmp_path / "p"
    assert main(["paper", "hcsu-table2", str(damaged), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(damaged) in err and "summary.json" in err
    assert not out.exists() or list(out.iterdir()) == []
