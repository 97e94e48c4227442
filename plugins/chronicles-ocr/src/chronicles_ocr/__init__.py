"""heritage-eval-chronicles-ocr: the Chronicles-OCR benchmark as a heritage-eval plug-in.

Seven Chinese scripts (oracle bone, bronze, seal = ancient; clerical, regular, running,
cursive = modern) and four rule-based tasks: spotting and recognition (ancient only),
parsing and script classification (all), scored as the official code scores them
(``--protocol official``) or as its README describes (``--protocol corrected``);
docs/chronicles-ocr.md.

This module is what the entry point names (``chronicles-ocr = "chronicles_ocr:PLUGIN"``),
so it stays light: everything else is imported when the benchmark is used.
"""

from __future__ import annotations

from pathlib import Path

from heritage_eval.plugin import BenchmarkPlugin, require_api

require_api(1, 2)  # 1.2: ReiterableSamples, CompactIds, file_identities

#: The bundled demo set (synthetic images in the official layout): ``--data`` for a try.
DEMO_DATA = Path(__file__).resolve().parent / "demo"

PLUGIN = BenchmarkPlugin(
    benchmark="chronicles_ocr.benchmark:ChroniclesOCR",
    help="Chinese historical-script OCR, seven scripts x four tasks (Chronicles-OCR)",
    renderer="chronicles_ocr.viewer:render",
    backends=("chronicles_ocr.replay",),
    scorer="chronicles_ocr.scoring:score",
    score_options="chronicles_ocr.score_options:ScoreOptions",
    score_help=("score answers recorded by the official Chronicles-OCR infer.py "
                "(PREDICTIONS/<model_tag>/results.jsonl) with the official rules"),
)

__all__ = ["DEMO_DATA", "PLUGIN"]
