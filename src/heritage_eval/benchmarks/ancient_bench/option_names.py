"""The benchmark's registered name, the words its options choose among, and the help of
its normalisation switches: one source for the typed ``run ancient-bench`` options
(:mod:`~heritage_eval.benchmarks.ancient_bench.options`), the ``score ancient-bench``
parser (:mod:`~heritage_eval.benchmarks.ancient_bench.score_command`) and the data
modules.

Imports nothing, so that the parser of ``score ancient-bench`` is built without pydantic
or the scoring code (issue 23: start-up within 0.3 s of ``python -c pass``).
"""

from __future__ import annotations

#: The registered name (``run ancient-bench``; ``SampleRecord.benchmark``).
BENCHMARK = "ancient-bench"

#: Names of the normalisation presets, sorted: the keys of
#: :data:`heritage_eval.benchmarks.ancient_bench.normalize.PROTOCOLS` ('official' = the
#: official evaluator's ``config.yaml``, 'paper' = the paper's appendix A.6).
PROTOCOL_NAMES: tuple[str, ...] = ("official", "paper")

#: What a missing or unusable prediction file does (``--missing``): 'empty' scores it as
#: an empty answer (0) and lists it, 'skip' leaves it out of the means and lists it,
#: 'error' refuses to score, as the official evaluator stops at the first missing file
#: (:mod:`~heritage_eval.benchmarks.ancient_bench.predictions`).
MISSING_POLICIES: tuple[str, ...] = ("empty", "skip", "error")

#: One switch per normalisation flag: flag name -> help text (the field names of
#: :class:`~heritage_eval.benchmarks.ancient_bench.normalize.NormalizationFlags`).
FLAG_HELP = {
    "ignore_st": "convert both sides to simplified characters (OpenCC t2s) before scoring",
    "ignore_punc": "drop Unicode punctuation except < > = - ▢ 〇 ~ ～ 、",
    "ignore_space": "drop all whitespace (spaces, line breaks, U+3000)",
    "ignore_case": "lower-case Latin letters",
    "collapse_u25a1": "also collapse runs of □ (U+25A1), as the paper describes; the "
                      "official code collapses only ▢ (U+25A2)",
}
