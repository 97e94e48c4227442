"""Where the Chronicles-OCR tests find things, and the command line they call: the
bundled demo set, the probe predictions, the official reference outputs and the
``heritage-eval`` executable of this interpreter's environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"
PRED = HERE / "fixtures" / "predictions"
OFFICIAL = HERE / "fixtures" / "official"
CLI = Path(sys.executable).with_name("heritage-eval")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``heritage-eval ARGS`` in a subprocess (stdout/stderr captured, 300 s limit)."""
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=300,
                          check=False)
