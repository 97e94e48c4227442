"""Ancient-Bench: transcription of ancient Chinese artifacts in 9 media (NED, character F1).

Modules: ``categories`` (media names), ``loader`` (official release layout), ``prompts``,
``normalize`` (official normalisation), ``scoring``, ``analysis``, ``records`` (the
benchmark's row), ``envelope`` (row <-> platform sample record), ``predictions``
(official prediction layout), ``pipeline``, ``report`` (tables), ``console``,
``options``, ``option_names`` (the words the options choose among; no imports),
``benchmark`` (:class:`AncientBench`, ``run ancient-bench``), ``score_command`` (the
``score ancient-bench`` parser and handler, light), ``score`` (checks and plans the
files) and ``score_write`` (scores and writes the run folder), ``export`` (official
predictions layout), ``commands`` (registry declarations).

The names below are imported on first use, so that importing ``commands`` (done for
every ``heritage-eval`` invocation, ``--help`` included) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "MEDIA": "categories", "medium_name": "categories",
    "Release": "loader", "load_release": "loader",
    "PROTOCOLS": "normalize", "NormalizationFlags": "normalize",
    "PromptSet": "prompts", "load_prompts": "prompts",
    "PairScore": "scoring", "score_pair": "scoring",
    "AncientBench": "benchmark", "score_predictions": "score",
    "official_predictions": "export",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
