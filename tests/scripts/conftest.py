"""Fixtures that import the demo-data scripts (``scripts/`` is not a package)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
DEMO = REPO / "data" / "demo"
REALDATA = REPO / ".." / "shared" / "realdata"


def _import(name: str) -> ModuleType:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)


@pytest.fixture(scope="session")
def rc() -> ModuleType:
    """``scripts/_render_common.py``."""
    return _import("_render_common")


@pytest.fixture(scope="session")
def ancient() -> ModuleType:
    """``scripts/make_ancient_demo.py``."""
    return _import("make_ancient_demo")


@pytest.fixture(scope="session")
def hcsu() -> ModuleType:
    """``scripts/make_hcsu_demo.py``."""
    return _import("make_hcsu_demo")


def require_fonts(rc: ModuleType, keys: list[str]) -> None:
    """Skip the calling test, naming the apt packages, when a demo font is missing."""
    try:
        for key in keys:
            rc.locate_font(key)
    except rc.FontMissingError as exc:
        pytest.skip(f"demo fonts not installed ({exc}); CI needs: apt-get install "
                    + " ".join(rc.apt_packages(keys)))


def require_same_environment(rc: ModuleType, manifest: dict, keys: list[str]) -> None:
    """Skip when library versions or font files differ from those the data was made with.

    Output bytes depend on Pillow (FreeType, zlib, libjpeg), numpy and OpenCV versions and
    on the font files; with any of them different, byte identity is not expected.
    """
    now = rc.environment_fingerprint(keys)
    then = manifest["environment"]
    diff = sorted(k for k in now if now[k] != then.get(k))
    if diff:
        pytest.skip(f"environment differs from the committed MANIFEST.json in {diff}: "
                    f"now {[now[k] for k in diff]}, committed {[then.get(k) for k in diff]}")
