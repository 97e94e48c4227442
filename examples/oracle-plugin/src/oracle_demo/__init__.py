"""heritage-eval-oracle-demo: an example benchmark plug-in for heritage-eval.

Task: one glyph image in the style of an oracle-bone rubbing; the model names the modern
Chinese character. Metric: Acc@k (the reference among the model's first k candidates),
per period, with the platform's Wilson intervals.

This module is what the entry point names (``oracle-recognition = "oracle_demo:PLUGIN"``),
so it stays light: the benchmark class is named as a string and imported only when the
benchmark is used. ``backends`` registers the offline ``oracle-replay`` model with it.
"""

from __future__ import annotations

from pathlib import Path

from heritage_eval.plugin import BenchmarkPlugin, require_api

require_api(1)  # written against plug-in API 1.x: refuse to load under another major

#: The bundled demo set (8 synthetic glyphs, two periods): ``--data`` for a first try.
DEMO_DATA = Path(__file__).resolve().parent / "data"

PLUGIN = BenchmarkPlugin(
    benchmark="oracle_demo.benchmark:OracleRecognition",
    help="recognise single oracle-bone-style glyphs (example plug-in; Acc@k per period)",
    renderer="oracle_demo.viewer:render",
    backends=("oracle_demo.replay",),
)

__all__ = ["DEMO_DATA", "PLUGIN"]
