"""Task options shared by the HCSU commands, config builders, and the error guard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.hcsu.archive import ArchiveError
from heritage_eval.benchmarks.hcsu.canonical_batch import CanonicalizeError
from heritage_eval.benchmarks.hcsu.description import DescriptionConfig
from heritage_eval.benchmarks.hcsu.discrimination import DescriptionMode, DiscriminationConfig
from heritage_eval.benchmarks.hcsu.generated import read_generated
from heritage_eval.benchmarks.hcsu.loader import HcsuDataError
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError


def add_discrimination_options(p: argparse.ArgumentParser) -> None:
    """Options of the K-way task (shared with the k-sweep / ablation / robustness tools)."""
    g = p.add_argument_group("discrimination")
    g.add_argument("--k", type=int, default=8,
                   help="candidates per question: the true class + K-1 distractors (default: 8)")
    g.add_argument("--distractor-pool", choices=("domain", "all"), default="domain",
                   help="draw distractors from the target's domain (default) or both domains")
    g.add_argument("--descriptions", choices=("expert", "random", "generated"),
                   default="expert",
                   help="candidate descriptions: the class's expert text (default), another "
                        "class's text, or model-written texts from --generated-descriptions")
    g.add_argument("--generated-descriptions", type=str, default=None, metavar="FILE",
                   help="JSON object class key or '<calligrapher>-<script>' -> description "
                        "(needed by --descriptions generated; see 'hcsu write-descriptions')")


def add_description_options(p: argparse.ArgumentParser) -> None:
    """Options of the description task."""
    g = p.add_argument_group("description")
    g.add_argument("--shots", type=int, default=2,
                   help="in-context examples, each from another class, none showing the "
                        "target's character (default: 2, as in the paper)")
    g.add_argument("--shot-pool", choices=("domain", "all"), default="domain",
                   help="draw shots from the target's domain (default) or both domains")
    g.add_argument("--max-words", type=int, default=50,
                   help="word limit asked of the model (default: 50)")


def discrimination_config(args: argparse.Namespace, k: int | None = None,
                          descriptions: DescriptionMode | None = None) -> DiscriminationConfig:
    """The discrimination settings from the command-line options."""
    mode: DescriptionMode = descriptions or args.descriptions
    generated = None
    if args.generated_descriptions:
        generated = read_generated(Path(args.generated_descriptions))
    elif mode == "generated":
        raise HcsuConfigError("--descriptions generated needs --generated-descriptions FILE")
    return DiscriminationConfig(k=k or args.k, per_class=args.per_class,
                                pool=args.distractor_pool, descriptions=mode,
                                seed=args.seed, generated=generated)


def description_config(args: argparse.Namespace, shots: int | None = None
                       ) -> DescriptionConfig:
    """The description settings from the command-line options."""
    return DescriptionConfig(shots=shots or args.shots, per_class=args.per_class,
                             pool=args.shot_pool, seed=args.seed, max_words=args.max_words)


def guarded(handler: registry.Handler) -> registry.Handler:
    """Turn data / configuration errors into a clear message and exit code 2."""
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except (HcsuConfigError, HcsuDataError, ArchiveError, CanonicalizeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return run
