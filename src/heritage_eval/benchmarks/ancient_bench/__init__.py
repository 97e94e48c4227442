"""Ancient-Bench: transcription of ancient Chinese artifacts in 9 media (NED, character F1).

Modules: ``categories`` (media names), ``loader`` (official release layout), ``prompts``,
``normalize`` (official normalisation), ``scoring``, ``analysis``, ``records``,
``predictions`` (official prediction layout), ``pipeline``, ``report``, ``cli``.
"""

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA, medium_name
from heritage_eval.benchmarks.ancient_bench.loader import Release, load_release
from heritage_eval.benchmarks.ancient_bench.normalize import PROTOCOLS, NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet, load_prompts
from heritage_eval.benchmarks.ancient_bench.scoring import PairScore, score_pair

__all__ = [
    "MEDIA",
    "PROTOCOLS",
    "NormalizationFlags",
    "PairScore",
    "PromptSet",
    "Release",
    "load_prompts",
    "load_release",
    "medium_name",
    "score_pair",
]
