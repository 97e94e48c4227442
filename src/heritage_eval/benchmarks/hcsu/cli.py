"""HCSU commands: ``run hcsu-discrimination``, ``run hcsu-description`` and the ``hcsu``
group (see :mod:`.cli_tools`). Importing this module registers the commands and the
offline baselines ``baseline:image-similarity`` / ``baseline:nearest-description``."""

from __future__ import annotations

import argparse

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.hcsu import baselines, cli_tools  # noqa: F401  (registration)
from heritage_eval.benchmarks.hcsu.description_scoring import answered_count
from heritage_eval.benchmarks.hcsu.options import (
    DESCRIPTION,
    DISCRIMINATION,
    description_config,
    discrimination_config,
    guarded,
)
from heritage_eval.benchmarks.hcsu.pipeline import (
    Engine,
    TaskRun,
    plan_description,
    plan_discrimination,
    result_entry,
    run_description,
    run_discrimination,
)
from heritage_eval.benchmarks.hcsu.records import error_lines
from heritage_eval.benchmarks.hcsu.runio import (
    add_task_args,
    engine_from_args,
    fail_if_nothing_answered,
    judge_backend,
    judge_from_args,
    load_data,
    model_for,
    print_summary,
    report_errors,
    run_provenance,
    scorer_from_args,
    write_run,
)
from heritage_eval.benchmarks.hcsu.scoring import cross_domain_note, nothing_answered
from heritage_eval.benchmarks.hcsu.tables import description_table, discrimination_table
from heritage_eval.core.store import RunFolder

_EPILOG = ("Examples:\n"
           "  heritage-eval run {name} --data data/demo/hcsu --model {model}{flags} "
           "--out runs/x\n"
           "  heritage-eval run {name} --data HCSU --model openai:qwen3-vl-235b "
           "--base-url http://localhost:8000/v1 --out runs/qwen")


def _discrimination_args(p: argparse.ArgumentParser) -> None:
    add_task_args(p, DISCRIMINATION)


def _url(engine: Engine) -> str | None:
    return getattr(engine.backend, "base_url", None)


def _notes(notes: list[str]) -> str:
    return "".join(f"\n{n}\n" for n in notes)


def error_note(run: TaskRun) -> list[str]:
    """The error digest as a Markdown paragraph (empty list when no error)."""
    lines = error_lines("Errors", run.extra.get("errors") or {"n_error": 0}, len(run.records))
    return ["  \n".join(line.strip() for line in lines)] if lines else []


def discrimination_notes(run: TaskRun) -> str:
    """Markdown notes under Table 2: why Avg. Acc is missing, the cross-domain caveat of
    ``--distractor-pool all``, the errors."""
    notes = [run.extra["avg_accuracy_note"]] if run.extra.get("avg_accuracy_note") else []
    if run.extra.get("distractor_pool") == "all":
        notes.append(cross_domain_note(run.per_domain))
    return _notes(notes + error_note(run))


def description_notes(run: TaskRun) -> str:
    """Markdown notes under Table 3: how empty / unscored descriptions count, errors."""
    notes = ["An empty description is unparsed: it counts in Invalid (empty ÷ answered) "
             "and scores 0 in the BERTScore and judge means, which otherwise hold the "
             "descriptions each metric scored; a metric that scored no description of a "
             "domain shows – there, never 0.00. Descriptions a metric failed on "
             "(unscored, counts shown) enter no mean of it."]
    return _notes(notes + error_note(run))


def _discrimination(args: argparse.Namespace) -> int:
    backend = model_for(args, DISCRIMINATION)  # refused before anything is written
    folder = RunFolder(args.out)
    dataset = load_data(args)
    config = discrimination_config(args, dataset=dataset)
    plan = plan_discrimination(dataset, config, args.limit)  # K checked before the cache
    engine = engine_from_args(args, folder, backend)
    run = run_discrimination(dataset, config, engine, plan=plan)
    entry = result_entry(engine.backend.spec, run)
    md = ("## HCSU style discrimination (Table 2)\n\n" + discrimination_table([entry])
          + discrimination_notes(run))
    write_run(folder, "hcsu-discrimination", [entry], run.records,
              run_provenance(args, engine, dataset, config.spec()), md, dataset.problems)
    print_summary(md, folder)
    report_errors("hcsu-discrimination", entry, run.records, _url(engine))
    return fail_if_nothing_answered(f"none of the {len(run.records)} sample(s) was answered "
                                    "(every one ended as error)",
                                    nothing_answered(run.per_domain), folder)


def _description_args(p: argparse.ArgumentParser) -> None:
    add_task_args(p, DESCRIPTION)


def _description(args: argparse.Namespace) -> int:
    backend = model_for(args, DESCRIPTION)
    judge = judge_backend(args)
    folder = RunFolder(args.out)
    dataset = load_data(args)
    config = description_config(args)
    plan = plan_description(dataset, config, args.limit)  # anti-leakage checked first
    engine = engine_from_args(args, folder, backend)
    judge_engine = judge_from_args(args, folder, judge)
    scorer, why = scorer_from_args(args)
    run = run_description(dataset, config, engine, scorer, why, judge_engine, plan=plan)
    entry = result_entry(engine.backend.spec, run)
    md = ("## HCSU style description (Table 3)\n\n" + description_table([entry])
          + description_notes(run))
    write_run(folder, "hcsu-description", [entry], run.records,
              run_provenance(args, engine, dataset, config.spec(),
                             judge_model=judge.spec if judge else None,
                             bertscore=run.extra["bertscore"]), md, dataset.problems)
    print_summary(md, folder)
    report_errors("hcsu-description", entry, run.records, _url(engine),
                  _url(judge_engine) if judge_engine else None)
    n = answered_count(run.records, scorer is not None, judge is not None)
    return fail_if_nothing_answered(f"none of the {len(run.records)} description(s) was "
                                    "answered (errors or failed metrics; see the warnings "
                                    "above)", n == 0, folder)


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
