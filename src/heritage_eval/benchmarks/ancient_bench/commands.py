"""Declares Ancient-Bench's commands; imports nothing heavy (``heritage-eval --help``).

``run ancient-bench`` is the platform's generic command for
:class:`~heritage_eval.benchmarks.ancient_bench.benchmark.AncientBench`;
``score ancient-bench`` is
:data:`~heritage_eval.benchmarks.ancient_bench.score_command.SCORE_COMMAND` (light: its
parser needs no pydantic, its handler imports the scoring code when it runs)
and ``he.score("ancient-bench", …)`` calls
:func:`~heritage_eval.benchmarks.ancient_bench.score.score_predictions`.
Ancient-Bench registers no model backend of its own.
"""

from __future__ import annotations

from heritage_eval.benchmarks.registry import (
    LazyCommand,
    register_benchmark,
    register_score,
    register_scorer,
)

_PKG = "heritage_eval.benchmarks.ancient_bench"

register_benchmark("ancient-bench",
                   "transcribe ancient Chinese artifacts (9 media; NED, char F1)",
                   f"{_PKG}.benchmark:AncientBench")
register_score(LazyCommand("ancient-bench",
                           "score Ancient-Bench predictions in the official layout",
                           f"{_PKG}.score_command:SCORE_COMMAND"))
register_scorer("ancient-bench", f"{_PKG}.score:score_predictions")
