"""Argument builders of the ``hcsu`` tool commands (:mod:`.cli_tools`,
:mod:`.cli_studies`) and their argparse types.

The commands that run a model (the studies and ``write-descriptions``) generate their
options from a typed options model (:mod:`.option_models`) plus the platform's model,
output and run-folder sections (:func:`heritage_eval.cliargs.run_options.add_run_options`,
with the paper's temperature 0.1 and the task's max tokens), and read them back into a
:class:`~heritage_eval.core.config.RunConfig` (:meth:`CommandOptions.config`). A study's
fingerprint leaves out the platform options it does not offer (:data:`STUDY_SKIP`), and
its defaults are kept (:meth:`CommandOptions.default_fingerprint`), so that an option added
later, at its default, does not make an older study folder "another configuration"."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from heritage_eval.benchmarks.hcsu.option_models import (
    AblationOptions,
    KSweepOptions,
    RobustnessOptions,
    ShotSweepOptions,
    WriteOptions,
)
from heritage_eval.benchmarks.hcsu.task_defaults import (
    DISCRIMINATION_MAX_TOKENS,
    LIMIT_HELP,
    PAPER_TEMPERATURE,
)
from heritage_eval.cliargs.run_options import add_run_options, run_config_from_args
from heritage_eval.core.config import SECTIONS, BenchmarkOptions, RunConfig
from heritage_eval.core.fingerprint import config_of

#: Platform options the studies do not offer: the run command's model-failure rule
#: (a study scores model failures as wrong answers), downscale warning and executor.
STUDY_SKIP = ("model_failures", "warn_downscale", "executor", "ray_address", "ray_workers")
#: ``write-descriptions`` writes one file, not a run folder: no --resume / --overwrite.
WRITE_SKIP = (*STUDY_SKIP, "resume", "overwrite")
#: The platform options a study needs.
REQUIRED = ("out", "model")


@dataclass(frozen=True)
class CommandOptions:
    """The options of one ``hcsu`` command that runs a model.

    ``name``: the benchmark name its run folder records (``hcsu-k-sweep``).
    ``options``: its own typed options. ``max_tokens``: its ``--max-tokens`` default.
    ``limit_help``: ``--limit``'s help. ``skip``: platform options it does not offer."""

    name: str
    options: type[BenchmarkOptions]
    max_tokens: int
    limit_help: str = LIMIT_HELP
    skip: tuple[str, ...] = STUDY_SKIP

    def defaults(self) -> dict[str, Any]:
        """Its defaults of platform options: the paper's temperature, its max tokens."""
        return {"temperature": PAPER_TEMPERATURE, "max_tokens": self.max_tokens}

    def add_args(self, p: argparse.ArgumentParser) -> None:
        """Add its own options, then the platform's (model, caching and output, run
        folder), to ``p``. The parsed namespace holds the options given plus the
        defaults of :meth:`defaults`."""
        add_run_options(p, self.options, defaults=self.defaults(),
                        helps={"limit": self.limit_help}, required=REQUIRED,
                        skip=self.skip, title="command options")
        p.set_defaults(**self.defaults())

    def config(self, args: argparse.Namespace) -> RunConfig:
        """The :class:`RunConfig` of the parsed ``args``. Raises
        :class:`~heritage_eval.core.config.OptionsError` (exit 2) naming the option."""
        return run_config_from_args(args, self.name, self.options, defaults=self.defaults(),
                                    required=REQUIRED, skip=self.skip)

    def fingerprint(self, config: RunConfig) -> dict[str, Any]:
        """The configuration recorded in its run folder: every option it offers that can
        change a result (:func:`~heritage_eval.core.fingerprint.config_of`)."""
        return config_of({k: v for k, v in config.flat().items() if k not in self.skip})

    def default_fingerprint(self) -> dict[str, Any]:
        """:meth:`fingerprint` of every option at its default (required ones left out)."""
        values: dict[str, Any] = {}
        for model in (self.options, *SECTIONS.values()):
            for key, field in model.model_fields.items():
                if not field.is_required() and key not in self.skip:
                    values[key] = field.get_default(call_default_factory=True)
        return config_of({**values, **self.defaults()})


K_SWEEP_OPTIONS = CommandOptions("hcsu-k-sweep", KSweepOptions, DISCRIMINATION_MAX_TOKENS)
SHOT_SWEEP_OPTIONS = CommandOptions("hcsu-shot-sweep", ShotSweepOptions, 256)
ABLATION_OPTIONS = CommandOptions("hcsu-description-ablation", AblationOptions,
                        DISCRIMINATION_MAX_TOKENS)
ROBUSTNESS_OPTIONS = CommandOptions("hcsu-robustness", RobustnessOptions, 256)
WRITE_OPTIONS = CommandOptions("hcsu-write-descriptions", WriteOptions, 256,
                     limit_help="describe only the first N classes (sorted by class key; "
                                "for a quick try)", skip=WRITE_SKIP)


def k_sweep_args(p: argparse.ArgumentParser) -> None:
    """Options of ``hcsu k-sweep`` (:data:`K_SWEEP_OPTIONS`)."""
    K_SWEEP_OPTIONS.add_args(p)


def shot_sweep_args(p: argparse.ArgumentParser) -> None:
    """Options of ``hcsu shot-sweep`` (:data:`SHOT_SWEEP_OPTIONS`)."""
    SHOT_SWEEP_OPTIONS.add_args(p)


def ablation_args(p: argparse.ArgumentParser) -> None:
    """Options of ``hcsu ablation`` (:data:`ABLATION_OPTIONS`)."""
    ABLATION_OPTIONS.add_args(p)


def robustness_args(p: argparse.ArgumentParser) -> None:
    """Options of ``hcsu robustness`` (:data:`ROBUSTNESS_OPTIONS`)."""
    ROBUSTNESS_OPTIONS.add_args(p)


def write_descriptions_args(p: argparse.ArgumentParser) -> None:
    """Options of ``hcsu write-descriptions`` (:data:`WRITE_OPTIONS`)."""
    WRITE_OPTIONS.add_args(p)
