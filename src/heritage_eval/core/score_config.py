"""The configuration of a plug-in's typed ``score NAME`` (a benchmark whose scorer of
predictions made elsewhere is declared with typed options): which platform options it
keeps, and its :class:`~heritage_eval.core.config.RunConfig` from keywords (the Python
API's route; the command line builds the same from its parser)."""

from __future__ import annotations

from typing import Any

from heritage_eval.core.plugins import load_target, typed_scorers

#: The platform options a typed ``score NAME`` keeps (the rest is about running a model).
SCORE_KEPT = ("out", "resume", "overwrite", "allow_outside_paths", "model_failures")


def score_skipped() -> list[str]:
    """Platform option keywords a typed ``score NAME`` does not have."""
    from heritage_eval.core.config import SECTIONS

    return [k for model in SECTIONS.values() for k in model.model_fields
            if k not in SCORE_KEPT]


def score_config(name: str, values: dict[str, Any]) -> Any:
    """The :class:`~heritage_eval.core.config.RunConfig` of a plug-in's typed ``score
    NAME`` from keywords (the Python API's route; the command line builds the same).
    Raises ``OptionsError`` for an option it does not have or a refused value."""
    from heritage_eval.core.config import OptionsError, build_run_config

    target, _ = typed_scorers()[name]
    unknown = sorted({k.replace("-", "_") for k in values} & set(score_skipped()))
    if unknown:
        raise OptionsError(f"'score {name}' has no option(s) {', '.join(unknown)}")
    return build_run_config(name, load_target(target), values, required=("out",))
