"""The scale benchmark's synthetic data (``bench/_stream_data.py``) loads and runs.

``bench/bench_stream_scale.py`` measures whole ``heritage-eval run BENCH`` processes on
data made by ``_stream_data.py``; if a loader's format moved on and the maker did not,
the benchmark would fail only when someone runs it. Here each maker writes a tiny set
(20 samples, a pool of four small images) and the real command line runs on it with the
benchmark's own model (``bench/_bench_model.py``: ``bench:echo`` / ``baseline:random``),
once whole and once with ``--limit``: every record must be a scored (or, for answers the
benchmark cannot read, unscored) sample — none an ``error`` naming the data.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
N = 20


@pytest.fixture(scope="module")
def sd() -> ModuleType:
    """``bench/_stream_data.py`` (``bench/`` is not a package)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("_stream_data")


@pytest.fixture(scope="module")
def pools(sd: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("pools")
    return {"scans": sd.image_pool(root / "scans", 4, (60, 120)),
            "crops": sd.image_pool(root / "crops", 4, (30, 60), crops=True),
            "muse_template": sd.muse_template(root / "muse")}


def _run(bench: str, args: list[str], out: Path) -> list[dict[str, object]]:
    """Run ``heritage-eval run bench`` through ``_bench_model.py``; its records."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, str(BENCH / "_bench_model.py"), "run", bench,
                           *args, "--out", str(out)], capture_output=True, text=True,
                          env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in
            (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


CASES = {
    # benchmark: (maker, model options)
    "ancient-bench": ("ancient", ["--model", "bench:echo"]),
    "hcsu-discrimination": ("hcsu", ["--model", "baseline:random"]),
    "hcsu-description": ("hcsu-description", ["--model", "bench:echo", "--model-option",
                                              "tasks=hcsu-description", "--no-bertscore"]),
    "muse": ("muse", ["--model", "bench:echo"]),
    "chronicles-ocr": ("chronicles", ["--model", "bench:echo"]),
}


def _make(sd: ModuleType, kind: str, root: Path, pools: dict[str, object]) -> Any:
    scans, crops = pools["scans"], pools["crops"]
    if kind == "ancient":
        return sd.make_ancient(root, N, scans)
    if kind in ("hcsu", "hcsu-description"):
        return sd.make_hcsu_scaled(root, N, crops, discrimination=kind == "hcsu")
    if kind == "muse":
        return sd.make_muse(root, N, scans, pools["muse_template"])
    # two rows of each script, so that --limit 1 (per script and task) keeps half
    return sd.make_chronicles(root, 2 * N, scans, tasks_per_script=(4, 2))


@pytest.mark.parametrize("bench", sorted(CASES))
def test_made_data_runs_whole_and_limited(bench: str, sd: ModuleType,
                                          pools: dict[str, object], tmp_path: Path) -> None:
    kind, model = CASES[bench]
    made = _make(sd, kind, tmp_path / "data", pools)
    # by construction: 20 images (Ancient-Bench, HCSU: 5 classes of class_size(20) = 4),
    # 20 questions (MUSE), 14 rows = 2 x (3 ancient x 4 tasks + 4 modern x 2) = 40
    # (Chronicles-OCR).
    assert made.samples == (2 * N if bench == "chronicles-ocr" else N)
    records = _run(bench, [*made.args, *model], tmp_path / "run")
    ids = {str(r["id"]).split("#")[0] for r in records}
    states = Counter(str(r["state"]) for r in records)
    assert "error" not in states, [r for r in records if r["state"] == "error"][:2]
    if bench == "muse":  # one record per turn (ids <question>#<turn>); 20 questions
        assert len(ids) == N and len(records) > N
    elif bench == "chronicles-ocr":  # ids: <image_path>#<task>
        assert len(records) == 2 * N and len(ids) == 14
    else:
        assert len(records) == N == len(ids)
    limited = _run(bench, [*made.args, *model, "--limit", "1"], tmp_path / "run-limited")
    assert limited and len(limited) < len(records)
    assert "error" not in Counter(str(r["state"]) for r in limited)
