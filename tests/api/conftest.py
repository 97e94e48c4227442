"""Run folders of the bundled demo data, made once per test session with the command
line (the same code ``he.evaluate`` runs): Ancient-Bench with RapidOCR (all 27 demo
samples, and its answers scored again by ``score ancient-bench`` as two models), HCSU
discrimination and description with the offline baselines (description as a PARTIAL
``--limit`` run), a HCSU k-sweep study, MUSE with the random baseline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from heritage_eval.cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


def _run(argv: list[str], out: Path) -> Path:
    assert main([*argv, "--out", str(out)]) == 0, argv
    return out


@pytest.fixture(scope="session")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("demo_runs")


@pytest.fixture(scope="session")
def ab_run(demo_root: Path) -> Path:
    """Ancient-Bench demo (27 samples, 9 media) with RapidOCR."""
    return _run(["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"), "--model",
                 "rapidocr"], demo_root / "ab")


@pytest.fixture(scope="session")
def ab_score_run(ab_run: Path, demo_root: Path) -> Path:
    """The RapidOCR answers exported in the official layout, copied as a second model
    ``other``, and scored by ``score ancient-bench``: a run holding two models."""
    preds = demo_root / "preds"
    assert main(["export", "predictions", str(ab_run), "--out", str(preds)]) == 0
    shutil.copytree(preds / "rapidocr", preds / "other")
    return _run(["score", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                 "--predictions", str(preds)], demo_root / "ab_score")


@pytest.fixture(scope="session")
def hcsu_run(demo_root: Path) -> Path:
    """HCSU discrimination (K = 2) on the demo fonts with the image-similarity baseline."""
    return _run(["run", "hcsu-discrimination", "--data", str(DEMO / "hcsu"), "--model",
                 "baseline:image-similarity", "--k", "2"], demo_root / "hcsu")


@pytest.fixture(scope="session")
def hcsu_random_run(demo_root: Path) -> Path:
    """The same task and data with the seeded random baseline."""
    return _run(["run", "hcsu-discrimination", "--data", str(DEMO / "hcsu"), "--model",
                 "baseline:random", "--k", "2"], demo_root / "hcsu_random")


@pytest.fixture(scope="session")
def hcsu_partial_run(demo_root: Path) -> Path:
    """HCSU description with the nearest-description baseline, ``--limit 6``: PARTIAL."""
    return _run(["run", "hcsu-description", "--data", str(DEMO / "hcsu"), "--model",
                 "baseline:nearest-description", "--limit", "6"], demo_root / "hcsu_desc")


@pytest.fixture(scope="session")
def ksweep_run(demo_root: Path) -> Path:
    """A HCSU study (k-sweep, K = 2 and 3, ``--limit 10``): its own summary writer."""
    return _run(["hcsu", "k-sweep", "--data", str(DEMO / "hcsu"), "--model",
                 "baseline:image-similarity", "--ks", "2-3", "--limit", "10"],
                demo_root / "ksweep")


@pytest.fixture(scope="session")
def muse_run(demo_root: Path) -> Path:
    """MUSE demo questions (all 12 tasks) answered by the random baseline."""
    questions = demo_root / "muse_questions.jsonl"
    assert main(["muse", "generate", "--annotations", str(DEMO / "muse" / "annotations.json"),
                 "--images", str(DEMO / "muse"), "--out", str(questions)]) == 0
    return _run(["run", "muse", "--questions", str(questions), "--model", "baseline:random"],
                demo_root / "muse")
