"""Shared fixtures of the HCSU tests: the real sample beside the checkout."""

from __future__ import annotations

import pytest

from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from tests.conftest import realdata

#: ../shared/realdata/hcsu relative to the repository root (see SOURCES.md there).
REAL = realdata("hcsu")


@pytest.fixture(scope="session")
def real() -> HcsuDataset:
    """The four real classes (Bei: Cao Quan clerical, Yishan seal; Tie: Wen Zhengming
    regular, Shenlong Lantingxu running)."""
    return load_hcsu(REAL)
