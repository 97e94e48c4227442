"""Fixtures that import the demo-data scripts (``scripts/`` is not a package)."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import realdata

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
DEMO = REPO / "data" / "demo"
REALDATA = realdata()


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


def check_regeneration(rc: ModuleType, root: Path, keys: list[str],
                       generate: Callable[..., object], out: Path) -> None:
    """Regenerate the demo set committed at ``root`` into ``out`` with its recorded seed and
    assert the same files, byte for byte (skipped without the fonts or the environment)."""
    require_fonts(rc, keys)
    manifest = json.loads((root / "MANIFEST.json").read_text(encoding="utf-8"))
    require_same_environment(rc, manifest, keys)
    generate(out, seed=manifest["seed"])
    committed = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    fresh = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert fresh == committed
    for rel in committed:
        assert (out / rel).read_bytes() == (root / rel).read_bytes(), rel
