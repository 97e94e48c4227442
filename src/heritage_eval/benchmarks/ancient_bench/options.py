"""Command-line options of ``run ancient-bench`` and ``score ancient-bench``.

Light on purpose (no scoring code, no pandas): ``run ancient-bench``'s options are the
typed :class:`RunOptions` (the command line and the Python API are generated from it);
the ``score`` command's parser is built by
:mod:`~heritage_eval.benchmarks.ancient_bench.score_command` (re-exported here), which
needs no pydantic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA, read_categories
from heritage_eval.benchmarks.ancient_bench.normalize import PROTOCOLS, NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.option_names import FLAG_HELP, PROTOCOL_NAMES
from heritage_eval.benchmarks.ancient_bench.score_command import (
    add_categories_arg,
    add_protocol_args,
    add_score_options,
)
from heritage_eval.core.config import BenchmarkOptions
from heritage_eval.core.option_spec import opt

__all__ = ["FLAG_HELP", "RunOptions", "add_categories_arg", "add_protocol_args",
           "add_score_options", "flags_from_args"]


def flags_from_args(args: Any) -> tuple[dict[str, Any], NormalizationFlags]:
    """The protocol block for provenance (``{"name": …, "flags": {…}}``; the name gets
    ``+overrides`` when a flag switch was given) and the effective flags. ``args``: the
    parsed ``score`` namespace or the run's options (:class:`RunOptions`)."""
    preset = PROTOCOLS[args.protocol]
    overrides = {k: getattr(args, k) for k in FLAG_HELP if getattr(args, k, None) is not None}
    flags = preset.model_copy(update=overrides)
    name = args.protocol if not overrides else f"{args.protocol}+overrides"
    return {"name": name, "flags": flags.model_dump()}, flags


def _flag(name: str) -> Any:
    return opt(f"{FLAG_HELP[name]} (default: from --protocol)", negatable=True,
               group="scoring protocol")


class RunOptions(BenchmarkOptions):
    """The benchmark options of ``run ancient-bench`` (the platform adds the model,
    output and run-folder options)."""

    data: Annotated[Path, opt(
        "release root in the official layout: <category>/conv.jsonl + images")]
    prompts: Annotated[Path | None, opt(
        "JSON object replacing prompt templates: keys 'base' and medium names (e.g. "
        "'seals' or 'Seal') -> text (default: built-in prompts)", metavar="FILE")] = None
    # the list rule of every list option (docs/reference/conventions.md), the order not
    # the user's: folder names in the paper's order, so one selection is one configuration
    categories: Annotated[tuple[str, ...] | None, BeforeValidator(read_categories), opt(
        "only these media: folder names or paper names "
        f"({', '.join(MEDIA.values())}) (default: all found)", metavar="NAME",
        selection=True)] = None
    protocol: Annotated[Literal["official", "paper"], opt(
        "normalisation preset: 'official' = the official evaluator's config "
        "(ignore_st=false, ignore_punc=true, ignore_space=true, ignore_case=false); "
        "'paper' = the paper's appendix A.6 (also lower-cases and collapses □ runs)",
        choices=tuple(sorted(PROTOCOL_NAMES)), group="scoring protocol")] = "official"
    ignore_st: Annotated[bool | None, _flag("ignore_st")] = None
    ignore_punc: Annotated[bool | None, _flag("ignore_punc")] = None
    ignore_space: Annotated[bool | None, _flag("ignore_space")] = None
    ignore_case: Annotated[bool | None, _flag("ignore_case")] = None
    collapse_u25a1: Annotated[bool | None, _flag("collapse_u25a1")] = None
