"""Issue 22, "a run folder never shrinks silently", for the HCSU studies: a re-run that
would write fewer rows than the folder holds — fewer ``--ks`` or shot counts, a smaller
``--limit`` — is refused under ``--resume`` too, naming the rows, and leaves the folder
as it was; a re-run that covers every row resumes; ``--overwrite`` replaces the rows.
Rule: :func:`heritage_eval.core.rundir.rows_lost`; the studies pass the ids they will
write (:func:`heritage_eval.benchmarks.hcsu.cli_studies.planned_ids`), robustness checks
the ids it plans once its condition folders are made, before sending anything. Real runs
on the demo data with offline baselines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core.rundir import rows_lost

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo" / "hcsu"
#: the demo's classes: one folder per class under each domain (bei, tie)
N_CLASSES = sum(1 for d in ("bei", "tie") for c in (DEMO / d).iterdir() if c.is_dir())


def _rows(out: Path) -> list[str]:
    return [json.loads(line)["id"] for line in
            (out / "samples.jsonl").read_text("utf-8").splitlines()]


def _files(out: Path) -> dict[str, bytes]:
    return {n: (out / n).read_bytes() for n in ("samples.jsonl", "summary.json",
                                                 "run.json")}


def _refused(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str],
             rows: int, lost: int) -> None:
    """``argv`` exits 2 naming ``rows`` held and ``lost`` rows, and changes nothing."""
    before = _files(out)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"it holds {rows} row(s) with an answer in samples.jsonl" in err, err
    assert f"{lost} row(s) would be lost" in err and "--overwrite" in err, err
    assert _files(out) == before


def _sweep(out: Path, *extra: str) -> list[str]:
    return ["hcsu", "k-sweep", "--data", str(DEMO), "--model", "baseline:random",
            "--per-class", "2", "--out", str(out), *extra]


def test_k_sweep_refuses_fewer_ks_and_a_smaller_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ks"
    assert N_CLASSES == 10
    assert main(_sweep(out, "--ks", "2,3")) == 0
    ids = _rows(out)
    # 2 targets per class (--per-class 2) x 10 classes x 2 K values, each tagged #k=K
    assert len(ids) == 2 * N_CLASSES * 2 and len(set(ids)) == len(ids)
    assert {i.rsplit("#", 1)[1] for i in ids} == {"k=2", "k=3"}
    # run.json counts the ids the study planned: exactly the rows it wrote
    assert json.loads((out / "run.json").read_text("utf-8"))["n_samples"] == len(ids)
    assert rows_lost(out, set(ids)) == (0, len(ids))
    _refused(_sweep(out, "--ks", "2", "--resume"), out, capsys, 40, 20)
    # --limit 1 keeps one target per domain: 2 domains x 2 K = 4 of the 40 rows
    _refused(_sweep(out, "--ks", "2,3", "--limit", "1", "--resume"), out, capsys, 40, 36)
    assert main(_sweep(out, "--ks", "2,3,4", "--resume")) == 0  # grows: every row kept
    grown = _rows(out)
    assert set(ids) < set(grown) and len(grown) == 60
    assert main(_sweep(out, "--ks", "2", "--overwrite")) == 0
    assert sorted(_rows(out)) == sorted(i for i in ids if i.endswith("#k=2"))


def test_shot_sweep_refuses_fewer_shot_counts(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "shots"

    def argv(*extra: str) -> list[str]:
        return ["hcsu", "shot-sweep", "--data", str(DEMO), "--model",
                "baseline:nearest-description", "--no-bertscore", "--limit", "2",
                "--out", str(out), *extra]

    assert main(argv("--shot-list", "1,2")) == 0
    ids = _rows(out)
    # --limit 2: 2 targets per domain x 2 domains, for each of 2 shot counts
    assert len(ids) == 8 and {i.rsplit("#", 1)[1] for i in ids} == {"shots=1", "shots=2"}
    _refused(argv("--shot-list", "1", "--resume"), out, capsys, 8, 4)
    assert main(argv("--shot-list", "2", "--overwrite")) == 0
    assert sorted(_rows(out)) == sorted(i for i in ids if i.endswith("#shots=2"))


def test_ablation_refuses_a_smaller_limit(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "abl"

    def argv(*extra: str) -> list[str]:
        return ["hcsu", "ablation", "--data", str(DEMO), "--model", "baseline:random",
                "--k", "3", "--out", str(out), *extra]

    assert main(argv("--limit", "2")) == 0
    ids = _rows(out)
    modes = {i.rsplit("#", 1)[1] for i in ids}
    # 2 targets per domain x 2 domains per description mode
    assert len(ids) == 4 * len(modes) and {"descriptions=random",
                                           "descriptions=expert"} <= modes
    _refused(argv("--limit", "1", "--resume"), out, capsys, len(ids), 2 * len(modes))
    assert main(argv("--limit", "2", "--resume")) == 0  # the same run resumes
    assert sorted(_rows(out)) == sorted(ids)


def test_robustness_refuses_a_smaller_limit_before_writing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rob"

    def argv(*extra: str) -> list[str]:
        return ["hcsu", "robustness", "--data", str(DEMO), "--model",
                "baseline:image-similarity", "--tasks", "discrimination", "--k", "3",
                "--out", str(out), *extra]

    assert main(argv("--limit", "3")) == 0
    ids = _rows(out)
    # 3 targets per domain x 2 domains x 3 conditions (Wild, Wild-Resize, Origin)
    assert len(ids) == 18
    # its samples are known only once its conditions are prepared in the folder: refused
    # before anything is sent, and run.json is put back (it still describes the rows kept)
    _refused(argv("--limit", "2", "--resume"), out, capsys, 18, 6)
    assert main(argv("--limit", "2", "--overwrite")) == 0
    assert len(_rows(out)) == 12 and set(_rows(out)) < set(ids)
