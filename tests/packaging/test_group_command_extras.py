"""A group command whose module needs an extra that is not installed (OpenCV, pandas …)
ends with the ``pip install`` line of the extra named after its package (exit 2), not
with a traceback while the parser is built (benchmarks/registry.py, LazyCommand.resolve).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
HEAVY = "cv2,pandas,sklearn,skimage,matplotlib,scipy,pyarrow,lxml,imagehash"


@pytest.mark.parametrize("argv, extra", [
    (["hcsu", "canonicalize", "a", "b"], "hcsu"),
    (["muse", "generate", "--help"], "muse"),
    (["muse", "analyze", "--help"], "muse"),
])
def test_missing_extra_of_a_group_command(argv: list[str], extra: str) -> None:
    env = {**os.environ, "HE_BLOCKED": HEAVY}
    proc = subprocess.run([sys.executable, str(HERE / "blocked_cli.py"), *argv], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert f"pip install 'heritage-eval[{extra}]'" in proc.stderr
    assert "Traceback" not in proc.stderr
