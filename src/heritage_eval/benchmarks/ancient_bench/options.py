"""Command-line options of ``run ancient-bench`` and ``score ancient-bench``.

Light on purpose (no scoring code, no pandas): the generic ``run`` command and the
``score`` command both build their parsers from here, and the Python API builds its
option namespaces from the same builders.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.normalize import PROTOCOLS, NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.predictions import MISSING_POLICIES

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


def flags_from_args(args: argparse.Namespace) -> tuple[dict[str, Any], NormalizationFlags]:
    """The protocol block for provenance (``{"name": …, "flags": {…}}``; the name gets
    ``+overrides`` when a flag switch was given) and the effective flags."""
    preset = PROTOCOLS[args.protocol]
    overrides = {k: getattr(args, k) for k in FLAG_HELP if getattr(args, k, None) is not None}
    flags = preset.model_copy(update=overrides)
    name = args.protocol if not overrides else f"{args.protocol}+overrides"
    return {"name": name, "flags": flags.model_dump()}, flags


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The benchmark options of ``run ancient-bench`` (the platform adds the model,
    output and run-folder options)."""
    p.add_argument("--data", required=True, type=Path,
                   help="release root in the official layout: <category>/conv.jsonl + images")
    p.add_argument("--prompts", type=Path, default=None, metavar="FILE",
                   help="JSON object replacing prompt templates: keys 'base' and medium "
                        "names (e.g. 'seals' or 'Seal') -> text (default: built-in prompts)")
    add_categories_arg(p)
    add_protocol_args(p)


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
