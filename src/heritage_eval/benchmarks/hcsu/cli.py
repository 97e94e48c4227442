"""HCSU commands: ``run hcsu-discrimination``, ``run hcsu-description`` and the ``hcsu``
group (see :mod:`.cli_tools`). Importing this module registers the commands and the
offline baselines ``baseline:image-similarity`` / ``baseline:nearest-description``."""

from __future__ import annotations

import argparse

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.hcsu import baselines, cli_tools  # noqa: F401  (registration)
from heritage_eval.benchmarks.hcsu.options import (
    add_description_options,
    add_discrimination_options,
    description_config,
    discrimination_config,
    guarded,
)
from heritage_eval.benchmarks.hcsu.pipeline import (
    PAPER_TEMPERATURE,
    run_description,
    run_discrimination,
)
from heritage_eval.benchmarks.hcsu.runio import (
    add_bertscore_args,
    add_data_args,
    add_judge_args,
    engine_from_args,
    judge_from_args,
    load_data,
    print_summary,
    result_entry,
    run_provenance,
    scorer_from_args,
    write_run,
)
from heritage_eval.benchmarks.hcsu.tables import description_table, discrimination_table
from heritage_eval.cli.common import add_model_args
from heritage_eval.core.store import RunFolder

_EPILOG = ("Examples:\n"
           "  heritage-eval run {name} --data data/demo/hcsu --model {model}{flags} "
           "--out runs/x\n"
           "  heritage-eval run {name} --data HCSU --model openai:qwen3-vl-235b "
           "--base-url http://localhost:8000/v1 --out runs/qwen")


def _discrimination_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    add_discrimination_options(p)
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=64)


def _discrimination(args: argparse.Namespace) -> int:
    folder = RunFolder(args.out)
    dataset = load_data(args)
    config = discrimination_config(args)
    engine = engine_from_args(args, folder)
    run = run_discrimination(dataset, config, engine, args.limit)
    entry = result_entry(engine.backend.spec, run)
    md = "## HCSU style discrimination (Table 2)\n\n" + discrimination_table([entry])
    write_run(folder, "hcsu-discrimination", [entry], run.records,
              run_provenance(args, engine, dataset, config.spec()), md, dataset.problems)
    print_summary(md, folder)
    return 0


def _description_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    add_description_options(p)
    add_judge_args(p)
    add_bertscore_args(p)
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=256)


def _description(args: argparse.Namespace) -> int:
    folder = RunFolder(args.out)
    dataset = load_data(args)
    config = description_config(args)
    engine = engine_from_args(args, folder)
    judge = judge_from_args(args, folder)
    scorer, why = scorer_from_args(args)
    run = run_description(dataset, config, engine, scorer, why, judge, args.limit)
    entry = result_entry(engine.backend.spec, run)
    md = "## HCSU style description (Table 3)\n\n" + description_table([entry])
    write_run(folder, "hcsu-description", [entry], run.records,
              run_provenance(args, engine, dataset, config.spec(),
                             judge_model=judge.backend.spec if judge else None,
                             bertscore=run.extra["bertscore"]), md, dataset.problems)
    print_summary(md, folder)
    return 0


registry.register_run(registry.Command(
    name="hcsu-discrimination", help="HCSU K-way calligraphy style discrimination (Table 2)",
    description="For each target character image, pick its style (calligrapher + script) "
                "among K candidates, each an expert description and a reference image. "
                "Scores accuracy, macro precision/recall/F1 per domain (Bei, Tie) and "
                "Avg. Acc.\n\n" + _EPILOG.format(name="hcsu-discrimination",
                                                 model="baseline:image-similarity",
                                                 flags=" --distractor-pool all"),
    add_args=_discrimination_args, handler=guarded(_discrimination)))
registry.register_run(registry.Command(
    name="hcsu-description", help="HCSU N-shot calligraphy style description (Table 3)",
    description="Describe the style of a target character image after N examples of other "
                "classes (none showing the same character). Scores BERTScore-F1 x10 against "
                "the expert description and, with --judge, Terminology / Richness (0-10) "
                "with their difference from the expert references.\n\n"
                + _EPILOG.format(name="hcsu-description", model="baseline:nearest-description",
                                flags=""),
    add_args=_description_args, handler=guarded(_description)))
