"""Task options shared by the HCSU commands, config builders, and the error guard."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.hcsu.archive import ArchiveError
from heritage_eval.benchmarks.hcsu.canonical_batch import CanonicalizeError
from heritage_eval.benchmarks.hcsu.description import DEFAULT_SHOTS, DescriptionConfig
from heritage_eval.benchmarks.hcsu.discrimination import (
    DEFAULT_K,
    DescriptionMode,
    DiscriminationConfig,
)
from heritage_eval.benchmarks.hcsu.generated import read_generated
from heritage_eval.benchmarks.hcsu.loader import HcsuDataError
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.cli.common import positive_int
from heritage_eval.metrics.bertscore import BertScoreConfig
from heritage_eval.models.base import ModelBackend

#: Task names used for model refusal (``supported_tasks`` of a baseline).
DISCRIMINATION = "hcsu-discrimination"
DESCRIPTION = "hcsu-description"
WRITE = "hcsu-write-descriptions"
#: Default ``--max-tokens`` of the K-way task (was 64). The answer itself is one letter
#: (a few tokens with ``Answer: C``), but a reasoning model spends its thinking on the same
#: budget on most OpenAI-compatible servers (vLLM counts ``reasoning_content`` against
#: ``max_tokens``): at 64 such models were cut off before giving any letter (finish reason
#: ``length``, unparsed, counted wrong). 4,096 leaves room for a typical chain of thought;
#: a model that answers at once stops after a few tokens, so the limit costs nothing there.
#: The paper gives no token limit (§4, only temperature 0.1).
DISCRIMINATION_MAX_TOKENS = 4096
#: The multiple-choice chance baseline reads ``payload["options"]``: discrimination only.
_GENERIC_CHOICE = {"baseline:random": (DISCRIMINATION,)}


def k_value(text: str) -> int:
    """argparse type: a K between 2 and 26 (one letter label per candidate)."""
    value = positive_int(text)
    if not 2 <= value <= 26:
        raise argparse.ArgumentTypeError(f"must be between 2 and 26, got {text}")
    return value


def refuse_model(backend: ModelBackend, task: str, role: str = "--model") -> str | None:
    """Why ``backend`` cannot run ``task``, or ``None``.

    An engine that ignores the prompt (``reads_prompt`` False: the bundled OCR engine)
    cannot compare styles or write descriptions. A backend that answers from the
    structured payload (an offline baseline) must declare the task in its
    ``supported_tasks``; ``baseline:random`` supports the multiple-choice task only.
    """
    spec = backend.spec
    if not backend.reads_prompt:
        return (f"{role} {spec!r} is an OCR engine: it reads text off the image and ignores "
                f"the prompt, so it cannot do {task}; use 'openai:NAME' (a vision-language "
                "model endpoint) or an HCSU baseline")
    supported = getattr(backend, "supported_tasks", None)
    if supported is None and backend.reads_payload:
        supported = _GENERIC_CHOICE.get(spec, ())
    if supported is not None and task not in supported:
        which = ", ".join(supported) or "no HCSU task"
        return (f"{role} {spec!r} does not support {task} (it supports: {which}); its "
                "answers would all be empty or meaningless and score 0. Use "
                "'baseline:image-similarity' for hcsu-discrimination, "
                "'baseline:nearest-description' for hcsu-description, or 'openai:NAME'")
    return None


def add_prompts_option(p: argparse.ArgumentParser) -> None:
    """``--prompts FILE`` (once per command, whichever task adds it first); applied by
    :func:`guarded` around the handler (``prompts.TEMPLATES.using``)."""
    if any("--prompts" in a.option_strings for a in p._actions):
        return
    p.add_argument("--prompts", type=Path, default=None, metavar="FILE",
                   help="JSON file replacing prompt templates: name -> text, or the 'hcsu' "
                        "section of 'heritage-eval prompts dump' (names: system, "
                        "discrimination_intro, ..., description_ask; default: built-in)")


def add_discrimination_options(p: argparse.ArgumentParser,
                               omit: Collection[str] = ()) -> None:
    """Options of the K-way task (shared with the k-sweep / ablation / robustness tools).
    ``omit``: option names a command sets itself (``"--k"``, ``"--descriptions"``), so
    its ``--help`` never offers an option it would ignore."""
    add_prompts_option(p)
    g = p.add_argument_group("discrimination")
    if "--k" not in omit:
        g.add_argument("--k", type=k_value, default=DEFAULT_K,
                       help="candidates per question: the true class + K-1 distractors "
                            f"(default: {DEFAULT_K})")
    g.add_argument("--distractor-pool", choices=("domain", "all"), default="domain",
                   help="draw distractors from the target's domain (default) or both domains")
    g.add_argument("--references-avoid-target-char", default=True,
                   action=argparse.BooleanOptionalAction,
                   help="each candidate's reference image shows another character than the "
                        "target where its class has one, so that the true class cannot be "
                        "found by matching glyph shapes; our addition, not stated in the "
                        "paper: --no-references-avoid-target-char draws references from all "
                        "of a class's other images (default: on)")
    if "--descriptions" not in omit:
        g.add_argument("--descriptions", choices=("expert", "random", "generated"),
                       default="expert",
                       help="candidate descriptions: the class's expert text (default), "
                            "another class's text, or model-written texts from "
                            "--generated-descriptions")
    g.add_argument("--generated-descriptions", type=str, default=None, metavar="FILE",
                   help="JSON object class key or '<calligrapher>-<script>' -> description "
                        + ("(adds the generated variant" if "--descriptions" in omit else
                           "(needed by --descriptions generated")
                        + "; see 'hcsu write-descriptions')")


def add_description_options(p: argparse.ArgumentParser,
                            omit: Collection[str] = ()) -> None:
    """Options of the description task; ``omit`` as in
    :func:`add_discrimination_options` (``"--shots"``)."""
    add_prompts_option(p)
    g = p.add_argument_group("description")
    if "--shots" not in omit:
        g.add_argument("--shots", type=positive_int, default=DEFAULT_SHOTS,
                       help="in-context examples, each from another class, none showing the "
                            f"target's character (default: {DEFAULT_SHOTS}, as in the paper)")
    g.add_argument("--shot-pool", choices=("domain", "all"), default="domain",
                   help="draw shots from the target's domain (default) or both domains")
    g.add_argument("--max-words", type=positive_int, default=50,
                   help="word limit asked of the model (default: 50)")


def add_bertscore_baseline_option(g: argparse._ArgumentGroup) -> None:
    """``--bertscore-baseline FILE|LANG`` (BERTScore baseline rescaling; see
    :mod:`heritage_eval.metrics.bertscore`). Added to the BERTScore option group."""
    g.add_argument("--bertscore-baseline", default=None, metavar="FILE|LANG",
                   help="rescale BERTScore-F1 with a baseline: bert-score's "
                        "rescale_baseline/<lang>/<model>.tsv format (header LAYER,P,R,F; the "
                        "row of the scoring layer gives b; F -> (F - b) / (1 - b)), or a "
                        "language code (zh) for the file bert-score ships for a hub-id "
                        "--bertscore-model. A missing or malformed file stops the run "
                        "(default: no rescaling)")


def bertscore_config(args: argparse.Namespace) -> BertScoreConfig:
    """The BERTScore settings from ``--bertscore-model``, ``--bertscore-layers`` and
    ``--bertscore-baseline`` (absent options: the defaults)."""
    return BertScoreConfig(model=getattr(args, "bertscore_model", None),
                           num_layers=getattr(args, "bertscore_layers", None),
                           baseline=getattr(args, "bertscore_baseline", None))


def generated_problems(generated: dict[str, str], dataset: HcsuDataset, path: str
                       ) -> list[str]:
    """Warnings for keys of a generated-descriptions file that name no class key or style
    of ``dataset`` (a typo there would silently leave a class without its text)."""
    known = set(dataset.classes) | {c.style for c in dataset.classes.values()}
    return [f"{path}: key {key!r} matches no class of the data (expected a class key like "
            f"'Tie/王羲之-行书' or a style like '王羲之-行书'); ignored"
            for key in sorted(generated) if key not in known]


def _arg(args: argparse.Namespace, name: str, default: int) -> int:
    """``args.<name>``, or ``default`` for a command that does not offer the option."""
    return int(getattr(args, name, default))


def discrimination_config(args: argparse.Namespace, k: int | None = None,
                          descriptions: DescriptionMode | None = None,
                          dataset: HcsuDataset | None = None) -> DiscriminationConfig:
    """The discrimination settings from the command-line options. With ``dataset``,
    unknown keys of ``--generated-descriptions`` are added to ``dataset.problems`` and
    printed as warnings."""
    chosen: Any = getattr(args, "descriptions", "expert")  # absent: ablation runs all
    mode: DescriptionMode = descriptions or chosen
    generated = None
    if args.generated_descriptions:
        generated = read_generated(Path(args.generated_descriptions))
        if dataset is not None:
            for problem in generated_problems(generated, dataset, args.generated_descriptions):
                if problem not in dataset.problems:
                    dataset.problems.append(problem)
                    print(f"warning: {problem}", file=sys.stderr)
    elif mode == "generated":
        raise HcsuConfigError("--descriptions generated needs --generated-descriptions FILE")
    return DiscriminationConfig(k=k or _arg(args, "k", DEFAULT_K), per_class=args.per_class,
                                pool=args.distractor_pool, descriptions=mode,
                                seed=args.seed, generated=generated,
                                avoid_target_char=bool(getattr(
                                    args, "references_avoid_target_char", True)))


def description_config(args: argparse.Namespace, shots: int | None = None
                       ) -> DescriptionConfig:
    """The description settings from the command-line options."""
    return DescriptionConfig(shots=shots or _arg(args, "shots", DEFAULT_SHOTS),
                             per_class=args.per_class,
                             pool=args.shot_pool, seed=args.seed, max_words=args.max_words)


def guarded(handler: registry.Handler) -> registry.Handler:
    """Turn data / configuration / run-folder errors into a clear message and exit
    code 2."""
    def run(args: argparse.Namespace) -> int:
        from heritage_eval.benchmarks.hcsu.prompts import TEMPLATES
        from heritage_eval.core.benchmark import UsageError
        from heritage_eval.core.prompt_templates import PromptFileError
        from heritage_eval.core.rundir import RunFolderBusy, RunFolderConflict

        try:
            with TEMPLATES.using(getattr(args, "prompts", None)):
                return handler(args)
        except (HcsuConfigError, HcsuDataError, ArchiveError, CanonicalizeError,
                UsageError, RunFolderConflict, RunFolderBusy, PromptFileError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return run
