"""Shared fixtures of the HCSU tests: the real sample beside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset

#: ../shared/realdata/hcsu relative to the repository root (see SOURCES.md there).
REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "realdata" / "hcsu"


@pytest.fixture(scope="session")
def real() -> HcsuDataset:
    """The four real classes (Bei: Cao Quan clerical, Yishan seal; Tie: Wen Zhengming
    regular, Shenlong Lantingxu running)."""
    return load_hcsu(REAL)
