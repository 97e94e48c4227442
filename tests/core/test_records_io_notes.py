"""A skipped ``samples.jsonl`` line is reported once (core/records_io.py ``iter_records``).

The rule: a caller that collects the notes (``warnings`` list: ``compare``, the viewer,
the paper commands, ``export``) shows them itself, so nothing is logged; a caller that
does not gets them in the log. Before, ``compare`` of a damaged folder printed the same
line as a logged ``warning: … skipped`` and then as its ``error: … unreadable line``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from heritage_eval.core.records_io import iter_records


def _damaged(tmp_path: Path) -> Path:
    path = tmp_path / "samples.jsonl"
    path.write_text('{"schema": \n\n[1, 2]\n', encoding="utf-8")  # two bad lines, a blank
    return path


def test_collected_notes_are_not_logged(tmp_path: Path,
                                        caplog: pytest.LogCaptureFixture) -> None:
    # guards against: the same skipped line shown twice
    notes: list[str] = []
    with caplog.at_level(logging.WARNING):
        assert list(iter_records(_damaged(tmp_path), notes)) == []
    assert [n.split(": skipped")[0].rsplit(":", 1)[1] for n in notes] == ["1", "3"]
    assert caplog.records == []


def test_uncollected_notes_are_logged(tmp_path: Path,
                                      caplog: pytest.LogCaptureFixture) -> None:
    # guards against: a skipped line nobody hears of
    with caplog.at_level(logging.WARNING):
        assert list(iter_records(_damaged(tmp_path))) == []
    assert [r.getMessage().split(": skipped")[0].rsplit(":", 1)[1]
            for r in caplog.records] == ["1", "3"]
