"""Command-line options of ``run ancient-bench`` and ``score ancient-bench``.

Light on purpose (no scoring code, no pandas): ``run ancient-bench``'s options are the
typed :class:`RunOptions` (the command line and the Python API are generated from it);
the ``score`` command builds its parser here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import field_validator

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.normalize import PROTOCOLS, NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.predictions import MISSING_POLICIES
from heritage_eval.core.config import BenchmarkOptions
from heritage_eval.core.option_spec import opt

#: One switch per normalisation flag: flag name -> help text.
FLAG_HELP = {
    "ignore_st": "convert both sides to simplified characters (OpenCC t2s) before scoring",
    "ignore_punc": "drop Unicode punctuation except < > = - ▢ 〇 ~ ～ 、",
    "ignore_space": "drop all whitespace (spaces, line breaks, U+3000)",
    "ignore_case": "lower-case Latin letters",
    "collapse_u25a1": "also collapse runs of □ (U+25A1), as the paper describes; the "
                      "official code collapses only ▢ (U+25A2)",
}


def add_protocol_args(p: argparse.ArgumentParser) -> None:
    """``--protocol`` preset plus one switch per normalisation flag (overrides the preset)."""
    g = p.add_argument_group("scoring protocol")
    g.add_argument("--protocol", choices=sorted(PROTOCOLS), default="official",
                   help="normalisation preset: 'official' = the official evaluator's config "
                        "(ignore_st=false, ignore_punc=true, ignore_space=true, "
                        "ignore_case=false); 'paper' = the paper's appendix A.6 (also "
                        "lower-cases and collapses □ runs) (default: official)")
    for name, text in FLAG_HELP.items():
        g.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None,
                       action=argparse.BooleanOptionalAction,
                       help=f"{text} (default: from --protocol)")


def add_categories_arg(p: argparse.ArgumentParser) -> None:
    """``--categories NAME…``: folder or paper names of the media to keep."""
    p.add_argument("--categories", nargs="+", default=None, metavar="NAME",
                   help="only these media: folder names or paper names "
                        f"({', '.join(MEDIA.values())}) (default: all found)")


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
    categories: Annotated[tuple[str, ...] | None, opt(
        "only these media: folder names or paper names "
        f"({', '.join(MEDIA.values())}) (default: all found)", metavar="NAME")] = None
    protocol: Annotated[Literal["official", "paper"], opt(
        "normalisation preset: 'official' = the official evaluator's config "
        "(ignore_st=false, ignore_punc=true, ignore_space=true, ignore_case=false); "
        "'paper' = the paper's appendix A.6 (also lower-cases and collapses □ runs)",
        choices=tuple(sorted(PROTOCOLS)), group="scoring protocol")] = "official"
    ignore_st: Annotated[bool | None, _flag("ignore_st")] = None
    ignore_punc: Annotated[bool | None, _flag("ignore_punc")] = None
    ignore_space: Annotated[bool | None, _flag("ignore_space")] = None
    ignore_case: Annotated[bool | None, _flag("ignore_case")] = None
    collapse_u25a1: Annotated[bool | None, _flag("collapse_u25a1")] = None

    @field_validator("categories", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        # the list rule of every list option (docs/reference/conventions.md): commas and
        # spaces both separate, empty pieces dropped, a repeated name kept once
        if value is None:
            return None
        words = [value] if isinstance(value, str) else list(value)
        pieces = [p.strip() for w in words for p in str(w).split(",")]
        return tuple(dict.fromkeys(p for p in pieces if p))


def add_score_options(p: argparse.ArgumentParser) -> None:
    """Every option of ``score ancient-bench`` except ``--resume`` / ``--overwrite``."""
    p.add_argument("--data", required=True, type=Path,
                   help="ground-truth root: <category>/conv.jsonl (images not needed)")
    p.add_argument("--predictions", required=True, type=Path,
                   help="predictions root in the official layout: "
                        "<root>/<model>/<category>/results/<stem>.json with {\"answer\": ...}")
    p.add_argument("--out", required=True, type=Path,
                   help="output folder: samples.jsonl, summary.json, summary.md")
    p.add_argument("--models", nargs="+", default=None, metavar="NAME",
                   help="model folders to score (default: every folder under --predictions)")
    p.add_argument("--missing", choices=MISSING_POLICIES, default="empty",
                   help="a missing prediction file: 'empty' scores it as an empty answer (0) "
                        "and lists it; 'skip' leaves it out of the means and lists it; "
                        "'error' stops without writing anything, as the official script "
                        "does (default: empty)")
    add_categories_arg(p)
    add_protocol_args(p)
