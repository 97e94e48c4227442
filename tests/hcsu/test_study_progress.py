"""A study's progress bars show their totals (``140/140`` per K on the demo data: 140
targets), as they did before the studies streamed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from heritage_eval.cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"


def test_k_sweep_bars_show_their_totals(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hcsu", "k-sweep", "--data", str(DEMO), "--model", "baseline:random",
                 "--ks", "2", "3", "--out", str(tmp_path / "ks")]) == 0
    err = capsys.readouterr().err
    for k in (2, 3):  # the demo release has 140 targets: each K asks 140 questions
        assert re.search(rf"K={k} \[baseline:random\]: 100%.*140/140", err), err[-2000:]
