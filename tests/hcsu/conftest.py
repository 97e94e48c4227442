"""Shared fixtures of the HCSU tests: the real sample beside the checkout, and the
BERTScore stand-in of the study commands."""

from __future__ import annotations

import pytest

from heritage_eval.benchmarks.hcsu import cli_studies
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from tests.conftest import realdata
from tests.hcsu.stream_fixtures import FakeScorer

#: ../shared/realdata/hcsu relative to the repository root (see SOURCES.md there).
REAL = realdata("hcsu")


@pytest.fixture(scope="session")
def real() -> HcsuDataset:
    """The four real classes (Bei: Cao Quan clerical, Yishan seal; Tie: Wen Zhengming
    regular, Shenlong Lantingxu running)."""
    return load_hcsu(REAL)


@pytest.fixture
def fake_study_bertscore(monkeypatch: pytest.MonkeyPatch) -> None:
    """The study commands score BERTScore with :class:`FakeScorer` (no model download;
    the same stand-in in every path a test compares)."""
    monkeypatch.setattr(cli_studies, "scorer_for", lambda opts: (FakeScorer(), None))
