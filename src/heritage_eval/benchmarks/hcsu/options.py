"""What the HCSU commands share about their options: the task names, model refusal, the
task settings built from the typed options (:mod:`.option_models`), and the error guard
of the ``hcsu`` group commands."""

from __future__ import annotations

import argparse
import sys
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
from heritage_eval.benchmarks.hcsu.task_defaults import DESCRIPTION as DESCRIPTION
from heritage_eval.benchmarks.hcsu.task_defaults import DISCRIMINATION as DISCRIMINATION
from heritage_eval.benchmarks.hcsu.task_defaults import (
    DISCRIMINATION_MAX_TOKENS as DISCRIMINATION_MAX_TOKENS,
)
from heritage_eval.core.backends import ModelBackend
from heritage_eval.metrics.bertscore import BertScoreConfig

WRITE = "hcsu-write-descriptions"
#: The multiple-choice chance baseline reads ``payload["options"]``: discrimination only.
_GENERIC_CHOICE = {"baseline:random": (DISCRIMINATION,)}


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


def bertscore_config(args: Any) -> BertScoreConfig:
    """The BERTScore settings from ``--bertscore-model``, ``--bertscore-layers`` and
    ``--bertscore-baseline`` of ``args`` (typed options or a namespace; absent options:
    the defaults)."""
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


def _arg(args: Any, name: str, default: int) -> int:
    """``args.<name>``, or ``default`` for a command that does not offer the option."""
    return int(getattr(args, name, default))


def discrimination_config(args: Any, k: int | None = None,
                          descriptions: DescriptionMode | None = None,
                          dataset: HcsuDataset | None = None) -> DiscriminationConfig:
    """The discrimination settings from the options ``args`` (a command's typed options,
    e.g. :class:`~.option_models.DiscriminationOptions`, or any object with those
    attributes; ``k`` / ``descriptions`` absent: the default, or the given value). With
    ``dataset``, unknown keys of ``--generated-descriptions`` are added to
    ``dataset.problems`` and printed as warnings. Raises :class:`HcsuConfigError` for
    ``--descriptions generated`` without a file."""
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


def description_config(args: Any, shots: int | None = None) -> DescriptionConfig:
    """The description settings from the options ``args`` (typed options or any object
    with those attributes; ``shots`` absent: the default, or the given value)."""
    return DescriptionConfig(shots=shots or _arg(args, "shots", DEFAULT_SHOTS),
                             per_class=args.per_class,
                             pool=args.shot_pool, seed=args.seed, max_words=args.max_words)


def guarded(handler: registry.Handler) -> registry.Handler:
    """An ``hcsu`` group command's handler with the templates of ``--prompts`` in use
    (the built-in ones without it) and data / configuration / option / run-folder errors
    turned into a clear message and exit code 2."""
    def run(args: argparse.Namespace) -> int:
        from heritage_eval.benchmarks.hcsu.prompts import TEMPLATES
        from heritage_eval.core.benchmark import UsageError
        from heritage_eval.core.config import OptionsError
        from heritage_eval.core.prompt_templates import PromptFileError
        from heritage_eval.core.rundir import RunFolderBusy, RunFolderConflict

        try:
            with TEMPLATES.using(getattr(args, "prompts", None)):
                return handler(args)
        except (HcsuConfigError, HcsuDataError, ArchiveError, CanonicalizeError,
                UsageError, RunFolderConflict, RunFolderBusy, PromptFileError,
                OptionsError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return run
