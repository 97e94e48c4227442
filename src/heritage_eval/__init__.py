"""heritage-eval: evaluate VLMs and OCR systems on cultural-heritage benchmarks.

Benchmarks: Ancient-Bench (ancient Chinese artifact transcription), HCSU (calligraphy
style understanding) and MUSE (artworks in situated education). See the README.

The Python API (``import heritage_eval as he``): :func:`evaluate`, :func:`score`,
:func:`load_run`, :func:`compare`, :func:`run_suite` and :class:`Run`, loaded on first
use so that ``import heritage_eval`` (and the command line's start-up) stays light.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.2.0"

_API = {"evaluate", "score", "load_run", "compare", "Run", "OptionsError"}
__all__ = ["Run", "__version__", "compare", "evaluate", "load_run", "run_suite", "score"]


def __getattr__(name: str) -> Any:
    if name in _API:
        from heritage_eval import api

        return getattr(api, name)
    if name == "run_suite":
        from heritage_eval.suite import run_suite

        return run_suite
    raise AttributeError(f"module 'heritage_eval' has no attribute {name!r}")
