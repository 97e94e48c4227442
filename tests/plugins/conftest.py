"""The example plug-in (examples/oracle-plugin) installed as a lab would install it.

``plugin_site``: ``pip install --no-deps --no-build-isolation --no-index --target DIR``
of a copy of the example (so the checkout gets no build/ or egg-info), once per test
session. Commands then run in subprocesses with ``PYTHONPATH=DIR``: the plug-in's
entry point is found in DIR's ``*.dist-info``, exactly as after a ``pip install``.
Offline: ``--no-index`` and the venv's own setuptools.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "oracle-plugin"

#: Recorded answers replayed by ``--model oracle-replay:demo`` (glyph id -> text). The
#: bundled set's references: I = 人 日 月 山, V = 水 火 木 羊 (glyphs.jsonl).
ANSWERS = {
    "ob-001": "人",            # right
    "ob-002": "Answer: 日",    # right: only the text after the last colon is read
    "ob-003": "目",            # wrong (reference 月)
    "ob-004": "山",            # right
    "ob-005": "水",            # right
    "ob-006": "",              # empty answer: the model's failure
    "ob-007": "林 木",          # wrong at k=1, right at k=2 (reference 木)
    "ob-008": "I cannot tell",  # no character: unparsed, wrong
}


def pip_install(source: Path, target: Path) -> None:
    """Install the project folder ``source`` into ``target`` (no dependencies, no
    index, no build isolation); fails the test with pip's output when pip fails."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--disable-pip-version-check", "--quiet", "--target", str(target),
         str(source)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"pip install failed:\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the example plug-in was installed into (its package and dist-info)."""
    root = tmp_path_factory.mktemp("oracle_plugin")
    source = root / "source"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))
    site = root / "site"
    pip_install(source, site)
    return site


@pytest.fixture(scope="session")
def demo_data(plugin_site: Path) -> Path:
    """The demo set as installed with the package (package data)."""
    return plugin_site / "oracle_demo" / "data"


@pytest.fixture(scope="session")
def answers_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("answers") / "answers.json"
    path.write_text(json.dumps(ANSWERS, ensure_ascii=False), encoding="utf-8")
    return path


def heritage_eval(args: Sequence[str], paths: Sequence[Path], cwd: Path | None = None,
                  timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``heritage-eval ARGS`` in a fresh interpreter with ``PYTHONPATH`` = ``paths``."""
    return python(["-m", "heritage_eval.cli.main", *args], paths, cwd, timeout)


def python(args: Sequence[str], paths: Sequence[Path], cwd: Path | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with ``PYTHONPATH`` = ``paths`` (UTF-8 output)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths),
           "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          encoding="utf-8", env=env, cwd=cwd, timeout=timeout, check=False)


def replay_args(data: Path, answers: Path, out: Path, *extra: str) -> list[str]:
    """``run oracle-recognition`` with the replayed answers."""
    return ["run", "oracle-recognition", "--data", str(data), "--model",
            "oracle-replay:demo", "--model-option", f"answers={answers}", "--out", str(out),
            *extra]


def read_summary(run: Path) -> dict[str, Any]:
    data = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def read_records(run: Path) -> dict[str, dict[str, Any]]:
    """``samples.jsonl`` as id -> record dict."""
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}
