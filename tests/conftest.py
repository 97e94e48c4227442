"""Session checks shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Real sample data (parity set, real images) beside the checkout: ../shared/realdata.
SHARED_REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"


def pytest_sessionstart(session: pytest.Session) -> None:
    """In CI the parity and real-data tests must run, never silently skip."""
    if os.environ.get("CI") and not SHARED_REALDATA.is_dir():
        raise pytest.UsageError(f"CI run without the shared real data at {SHARED_REALDATA}: "
                                "the parity and real-data tests would all be skipped")


def pytest_report_header(config: pytest.Config) -> str:
    found = "found" if SHARED_REALDATA.is_dir() else "MISSING (real-data tests will skip)"
    return f"shared real data: {SHARED_REALDATA} ({found})"
