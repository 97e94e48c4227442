"""The ``heritage-eval hcsu …`` command group: canonicalize, k-sweep, shot-sweep,
ablation, robustness, write-descriptions and report."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.hcsu.canonical import DEFAULT_MIN_AREA_FRAC, CanonParams
from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree
from heritage_eval.benchmarks.hcsu.description_scoring import answered_count
from heritage_eval.benchmarks.hcsu.generated import write_descriptions
from heritage_eval.benchmarks.hcsu.options import (
    DESCRIPTION,
    DISCRIMINATION,
    WRITE,
    add_description_options,
    add_discrimination_options,
    description_config,
    discrimination_config,
    guarded,
)
from heritage_eval.benchmarks.hcsu.pipeline import PAPER_TEMPERATURE
from heritage_eval.benchmarks.hcsu.report import add_report_args, report
from heritage_eval.benchmarks.hcsu.runio import (
    LIMIT_HELP,
    add_bertscore_args,
    add_data_args,
    add_judge_args,
    add_task_args,
    engine_from_args,
    fail_if_nothing_answered,
    judge_backend,
    judge_from_args,
    load_data,
    model_for,
    print_summary,
    report_errors,
    robustness_exit,
    run_provenance,
    scorer_from_args,
    study_exit,
    write_run,
)
from heritage_eval.benchmarks.hcsu.studies import (
    PAPER_KS,
    PAPER_SHOTS,
    description_ablation,
    k_sweep,
    plan_ablation,
    plan_k_sweep,
    plan_shot_sweep,
    plot_k_sweep,
    prepare_conditions,
    robustness,
    shot_sweep,
)
from heritage_eval.benchmarks.hcsu.tables import (
    discrimination_table,
    k_sweep_table,
    robustness_table,
    shot_sweep_table,
)
from heritage_eval.cli.common import add_model_args, positive_int
from heritage_eval.core.store import RunFolder

GROUP = "hcsu"
GROUP_HELP = "HCSU tools: canonicalize images, calibration sweeps, ablations, robustness"


def _ints(text: str) -> list[int]:
    """argparse type: ``"2-10"`` or ``"1,2,4"`` -> list of positive ints."""
    out: list[int] = []
    try:
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            out += list(range(int(lo), int(hi) + 1)) if sep else [int(lo)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like '2-10' or '1,2,4', got "
                                         f"{text!r}") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
    return out


def _fraction(text: str) -> float:
    """argparse type: a number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text}")
    return value


TASKS = ("discrimination", "description")


def _tasks(text: str) -> list[str]:
    """argparse type: comma-separated subset of :data:`TASKS`."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in TASKS]
    if bad or not items:
        raise argparse.ArgumentTypeError(f"invalid choice: {', '.join(bad) or repr(text)} "
                                         f"(choose from {', '.join(TASKS)}, comma-separated)")
    return items


# ------------------------------------------------------------------ canonicalize
def _canon_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("src", type=Path, help="source folder (e.g. the raw Wild images, with "
                   "bei/ and tie/ subfolders); never modified")
    p.add_argument("dst", type=Path, help="destination folder (must not overlap SRC)")
    p.add_argument("--variant", choices=("canonical", "wild-resize"), default="canonical",
                   help="canonical: the full §3.3 pipeline (default); wild-resize: pad to a "
                        "square and resize only")
    p.add_argument("--size", type=positive_int, default=256,
                   help="output side in pixels, >= 1 (default: 256)")
    p.add_argument("--min-area-frac", type=_fraction, default=DEFAULT_MIN_AREA_FRAC,
                   help="drop ink components smaller than this fraction of the image area, "
                        f"in [0, 1); 0 keeps every component (default: {DEFAULT_MIN_AREA_FRAC})")
    p.add_argument("--default-domain", choices=("tie", "bei"), default="tie",
                   help="domain of images not under a bei/ or tie/ top folder (default: tie)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help=f"processes, >= 1 (default: all cores, here {os.cpu_count()})")
    p.add_argument("--save-stages", action="store_true",
                   help="also save the intermediate stages of the canonical variant under "
                        "DST/_stages/<domain>/<class>/<stage>/ (stages: inverted (Bei only), "
                        "binary, denoised, masked)")
    p.add_argument("--force", action="store_true",
                   help="rewrite existing outputs (inputs are never touched)")


def _canonicalize(args: argparse.Namespace) -> int:
    if args.save_stages and args.variant == "wild-resize":
        print("warning: --save-stages is ignored with --variant wild-resize (it only pads "
              "and resizes: there is no intermediate stage)", file=sys.stderr)
    report = canonicalize_tree(args.src, args.dst, args.variant,
                               CanonParams(args.size, args.min_area_frac), args.workers,
                               args.save_stages, args.force, args.default_domain)
    rate = report.written / report.elapsed_s if report.elapsed_s > 0 else 0.0
    print(f"written {report.written}, skipped {report.skipped} (already done), errors "
          f"{len(report.errors)}; {rate:.1f} images/s")
    for note in report.collisions:
        print(f"warning: name collision: {note}", file=sys.stderr)
    for err in report.errors[:20]:
        print(f"error: {err}", file=sys.stderr)
    return 1 if report.errors else 0


# ------------------------------------------------------------------ sweeps / ablation
def _sweep_args(p: argparse.ArgumentParser) -> None:
    add_task_args(p, DISCRIMINATION, lambda q: q.add_argument(
        "--ks", type=_ints, default=list(PAPER_KS),
        help="K values, e.g. '2-10' or '2,4,8' (default: 2-10, as in the paper)"),
        omit=("--k",))



def _report_each(results: list[dict[str, Any]], records: list[dict[str, Any]], key: str,
                 label: str) -> None:
    """:func:`~.runio.report_errors` for every study result, over the records whose
    ``key`` matches; ``label`` is a format string for the key's value (``"K={}"``)."""
    for r in results:
        report_errors(label.format(r[key]), r, [x for x in records if x[key] == r[key]])


def _k_sweep(args: argparse.Namespace) -> int:
    backend = model_for(args, DISCRIMINATION)
    folder = RunFolder(args.out)
    ds = load_data(args)
    base = discrimination_config(args, dataset=ds)
    plans, skipped, message = plan_k_sweep(ds, base, args.ks, args.limit)
    if message:
        print(f"warning: {message}" if plans else f"error: {message}", file=sys.stderr)
    if not plans:
        return 2  # checked before the cache is opened: nothing written
    engine = engine_from_args(args, folder, backend)
    results, records = k_sweep(ds, base, plans, engine)
    md = "## HCSU K-way calibration\n\n" + k_sweep_table(results)
    plot_k_sweep(results, folder.path("k_sweep.png"))
    spec = base.spec() | {"k": sorted(plans)}  # the K values run, not one K
    write_run(folder, "hcsu-k-sweep", results, records,
              run_provenance(args, engine, ds, spec, skipped=skipped), md, ds.problems)
    print_summary(md, folder)
    _report_each(results, records, "k", "K={}")
    return study_exit(results, records, folder)


def _shot_args(p: argparse.ArgumentParser) -> None:
    add_task_args(p, DESCRIPTION, lambda q: q.add_argument(
        "--shot-list", type=_ints, default=list(PAPER_SHOTS),
        help="shot counts to run (default: 1,2,3,4,8, as in the paper)"),
        omit=("--shots",))


def _shot_sweep(args: argparse.Namespace) -> int:
    backend = model_for(args, DESCRIPTION)
    judge = judge_backend(args)
    folder = RunFolder(args.out)
    ds = load_data(args)
    base = description_config(args)
    plans, skipped = plan_shot_sweep(ds, base, args.shot_list, args.limit)
    if not plans:
        print("error: no shot count can be met (see above)", file=sys.stderr)
        return 2
    engine = engine_from_args(args, folder, backend)
    scorer, why = scorer_from_args(args)
    results, records = shot_sweep(ds, base, plans, engine, scorer, why,
                                  judge_from_args(args, folder, judge))
    md = "## HCSU few-shot calibration\n\n" + shot_sweep_table(results)
    spec = base.spec() | {"shots": sorted(plans)}  # the shot counts run
    write_run(folder, "hcsu-shot-sweep", results, records,
              run_provenance(args, engine, ds, spec, skipped=skipped), md, ds.problems)
    print_summary(md, folder)
    _report_each(results, records, "shots", "{} shots")
    n = answered_count(records, scorer is not None, judge is not None)
    return fail_if_nothing_answered(f"none of the {len(records)} description(s) was "
                                    "answered (errors or failed metrics)", n == 0, folder)


def _ablation(args: argparse.Namespace) -> int:
    backend = model_for(args, DISCRIMINATION)
    folder = RunFolder(args.out)
    ds = load_data(args)
    base = discrimination_config(args, dataset=ds)
    modes = ["random", "generated", "expert"] if base.generated else ["random", "expert"]
    plans = plan_ablation(ds, base, modes, args.limit)  # type: ignore[arg-type]
    engine = engine_from_args(args, folder, backend)
    results, records = description_ablation(ds, base, plans, engine)
    md = ("## HCSU description ablation (Table 5)\n\n"
          + discrimination_table(results, label="Descriptions", label_key="descriptions"))
    write_run(folder, "hcsu-description-ablation", results, records,
              run_provenance(args, engine, ds, base.spec() | {"descriptions": modes}), md,
              ds.problems)
    print_summary(md, folder)
    _report_each(results, records, "descriptions", "{} descriptions")
    return study_exit(results, records, folder)


def _ablation_args(p: argparse.ArgumentParser) -> None:
    # every description variant is run (generated ones with --generated-descriptions)
    add_task_args(p, DISCRIMINATION, omit=("--descriptions",))


# ------------------------------------------------------------------ robustness
def _robust_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    p.add_argument("--canonical", type=Path, default=None, metavar="DIR",
                   help="canonical (Origin) copy of the same classes, e.g. the release's "
                        "processed bei/ tie/; default: canonicalize --data into OUT/conditions")
    p.add_argument("--tasks", type=_tasks, default=list(TASKS),
                   help="tasks to run, comma-separated: discrimination, description "
                        "(default: both)")
    p.add_argument("--description-model", default=None, metavar="MODEL",
                   help="model for the description task (default: --model)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="processes for making the Wild-Resize / canonical copies "
                        "(default: all cores)")
    add_discrimination_options(p)
    add_description_options(p)
    add_judge_args(p)
    add_bertscore_args(p)
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=256, limit_help=LIMIT_HELP)


def _robustness(args: argparse.Namespace) -> int:
    tasks = set(args.tasks)
    desc_args = argparse.Namespace(**{**vars(args),
                                      "model": args.description_model or args.model})
    backends = {}
    if "discrimination" in tasks:
        backends["discrimination"] = model_for(args, DISCRIMINATION)
    if "description" in tasks:
        backends["description"] = model_for(desc_args, DESCRIPTION)
    judge = judge_backend(args) if "description" in tasks else None
    folder = RunFolder(args.out)
    folders = prepare_conditions(args.data, folder.path("conditions"), args.canonical,
                                 args.workers)
    ds = load_data(args)
    engines = {task: engine_from_args(desc_args if task == "description" else args, folder,
                                      backend) for task, backend in backends.items()}
    scorer, why = scorer_from_args(args) if "description" in tasks else (None, None)
    disc = discrimination_config(args, dataset=ds) if "discrimination" in tasks else None
    desc = description_config(args) if "description" in tasks else None
    password = args.zip_password or os.environ.get(args.zip_password_env) or None
    rows, records = robustness(folders, disc, desc, engines, scorer, why,
                               judge_from_args(args, folder, judge), args.limit, password)
    md = "## HCSU robustness (Table 4)\n\n" + robustness_table(rows)
    spec = {"discrimination": disc.spec() if disc else None,
            "description": desc.spec() if desc else None}
    write_run(folder, "hcsu-robustness", rows, records,
              run_provenance(args, next(iter(engines.values())), ds, spec,
                             conditions={k: str(v) for k, v in folders.items()}),
              md, ds.problems)
    print_summary(md, folder)
    return robustness_exit(records, scorer is not None, judge is not None, folder)


# ------------------------------------------------------------------ others
def _write_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p, per_class=False)
    p.add_argument("--max-words", type=positive_int, default=50,
                   help="word limit (default: 50)")
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=256,
                   limit_help="describe only the first N classes (sorted by class key; "
                              "for a quick try)")


def _write(args: argparse.Namespace) -> int:
    backend = model_for(args, WRITE)
    folder = RunFolder(args.out)
    ds = load_data(args)
    engine = engine_from_args(args, folder, backend)
    good, errors = write_descriptions(ds, engine, args.max_words, args.limit)
    path = folder.write_json("generated_descriptions.json", good)
    for key, err in errors.items():
        print(f"error: {key}: {err}", file=sys.stderr)
    print(f"{len(good)} descriptions written to {path}")
    return 1 if errors else 0


def _register(name: str, help_text: str, add_args: registry.AddArgs,
              handler: registry.Handler, description: str = "") -> None:
    registry.register_group_command(GROUP, GROUP_HELP, registry.Command(
        name=name, help=help_text, add_args=add_args, handler=guarded(handler),
        description=description or help_text))


_register("canonicalize", "canonicalize character images (paper §3.3) on all cores",
          _canon_args, _canonicalize,
          "Invert rubbings, Otsu threshold, fix polarity from the corners, drop small "
          "connected components, put the real stroke pixels on white, pad to a square and "
          "Lanczos-resize to 256x256. Idempotent; never overwrites an input.\n\n"
          "Example:\n  heritage-eval hcsu canonicalize raw/ canonical/ --save-stages")
_register("k-sweep", "discrimination accuracy for K = 2..10 against chance 1/K",
          _sweep_args, _k_sweep)
_register("shot-sweep", "description scores for 1, 2, 3, 4, 8 shots", _shot_args, _shot_sweep)
_register("ablation", "discrimination with random / generated / expert descriptions "
          "(Table 5)", _ablation_args, _ablation)
_register("robustness", "both tasks on Wild (raw), Wild-Resize and canonical images "
          "(Table 4)", _robust_args, _robustness)
_register("write-descriptions", "ask a text model for one style description per class "
          "(for --descriptions generated)", _write_args, _write)
_register("report", "merge run folders of one command into one table (e.g. several models)",
          add_report_args, report)

