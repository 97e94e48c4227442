"""The CJK font lookup for figures (report/fonts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.report import fonts


def test_env_font_file_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # any font file works for the mechanism: matplotlib's own DejaVu Sans (always present)
    import matplotlib

    dejavu = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    monkeypatch.setenv(fonts.CJK_FONT_ENV, str(dejavu))
    assert fonts.cjk_family() == "DejaVu Sans"  # the family name read from the file


def test_pick_prefers_the_list_then_hints() -> None:
    assert fonts._pick({"DejaVu Sans", "WenQuanYi Zen Hei", "Noto Sans CJK SC"}) == \
        "Noto Sans CJK SC"
    assert fonts._pick({"DejaVu Sans", "Some Kai Font"}) == "Some Kai Font"
    assert fonts._pick({"DejaVu Sans"}) is None
