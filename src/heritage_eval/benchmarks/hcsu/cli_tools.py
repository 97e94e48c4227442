"""The ``heritage-eval hcsu …`` command group: canonicalize, k-sweep, shot-sweep,
ablation, robustness, write-descriptions and report."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.hcsu.canonical import DEFAULT_MIN_AREA_FRAC, CanonParams
from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree
from heritage_eval.benchmarks.hcsu.generated import write_descriptions
from heritage_eval.benchmarks.hcsu.options import (
    add_description_options,
    add_discrimination_options,
    description_config,
    discrimination_config,
    guarded,
)
from heritage_eval.benchmarks.hcsu.pipeline import PAPER_TEMPERATURE
from heritage_eval.benchmarks.hcsu.runio import (
    add_bertscore_args,
    add_data_args,
    add_judge_args,
    engine_from_args,
    judge_from_args,
    load_data,
    print_summary,
    read_summary,
    run_provenance,
    scorer_from_args,
    write_run,
)
from heritage_eval.benchmarks.hcsu.studies import (
    PAPER_KS,
    PAPER_SHOTS,
    description_ablation,
    k_sweep,
    plot_k_sweep,
    prepare_conditions,
    robustness,
    shot_sweep,
)
from heritage_eval.benchmarks.hcsu.tables import (
    description_table,
    discrimination_table,
    k_sweep_table,
    robustness_table,
    shot_sweep_table,
)
from heritage_eval.cli.common import add_model_args
from heritage_eval.core.store import RunFolder, atomic_write_text

GROUP = "hcsu"
GROUP_HELP = "HCSU tools: canonicalize images, calibration sweeps, ablations, robustness"


def _ints(text: str) -> list[int]:
    """``"2-10"`` or ``"1,2,4"`` -> list of ints."""
    out: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        out += list(range(int(lo), int(hi) + 1)) if sep else [int(lo)]
    return out


# ------------------------------------------------------------------ canonicalize
def _canon_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("src", type=Path, help="source folder (e.g. the raw Wild images, with "
                   "bei/ and tie/ subfolders); never modified")
    p.add_argument("dst", type=Path, help="destination folder (must not overlap SRC)")
    p.add_argument("--variant", choices=("canonical", "wild-resize"), default="canonical",
                   help="canonical: the full §3.3 pipeline (default); wild-resize: pad to a "
                        "square and resize only")
    p.add_argument("--size", type=int, default=256, help="output side in pixels (default: 256)")
    p.add_argument("--min-area-frac", type=float, default=DEFAULT_MIN_AREA_FRAC,
                   help="drop ink components smaller than this fraction of the image area "
                        f"(default: {DEFAULT_MIN_AREA_FRAC})")
    p.add_argument("--default-domain", choices=("tie", "bei"), default="tie",
                   help="domain of images not under a bei/ or tie/ top folder (default: tie)")
    p.add_argument("--workers", type=int, default=None,
                   help=f"processes (default: all cores, here {os.cpu_count()})")
    p.add_argument("--save-stages", action="store_true",
                   help="also save intermediate stages under DST/_stages/<stage>/")
    p.add_argument("--force", action="store_true",
                   help="rewrite existing outputs (inputs are never touched)")


def _canonicalize(args: argparse.Namespace) -> int:
    report = canonicalize_tree(args.src, args.dst, args.variant,
                               CanonParams(args.size, args.min_area_frac), args.workers,
                               args.save_stages, args.force, args.default_domain)
    rate = report.written / report.elapsed_s if report.elapsed_s > 0 else 0.0
    print(f"written {report.written}, skipped {report.skipped} (already done), errors "
          f"{len(report.errors)}; {rate:.1f} images/s")
    for err in report.errors[:20]:
        print(f"error: {err}", file=sys.stderr)
    return 1 if report.errors else 0


# ------------------------------------------------------------------ sweeps / ablation
def _sweep_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    add_discrimination_options(p)
    p.add_argument("--ks", default="2-10", help="K values, e.g. '2-10' or '2,4,8' "
                   "(default: 2-10, as in the paper)")
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=64)


def _k_sweep(args: argparse.Namespace) -> int:
    folder = RunFolder(args.out)
    ds = load_data(args)
    base = discrimination_config(args)
    engine = engine_from_args(args, folder)
    results, skipped, records = k_sweep(ds, base, _ints(args.ks) or list(PAPER_KS), engine,
                                        args.limit)
    md = "## HCSU K-way calibration\n\n" + k_sweep_table(results)
    if results:
        plot_k_sweep(results, folder.path("k_sweep.png"))
    write_run(folder, "hcsu-k-sweep", results, records,
              run_provenance(args, engine, ds, base.spec(), skipped=skipped), md, ds.problems)
    print_summary(md, folder)
    return 0 if results else 2


def _shot_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    add_description_options(p)
    p.add_argument("--shot-list", default="1,2,3,4,8",
                   help="shot counts to run (default: 1,2,3,4,8, as in the paper)")
    add_judge_args(p)
    add_bertscore_args(p)
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=256)


def _shot_sweep(args: argparse.Namespace) -> int:
    folder = RunFolder(args.out)
    ds = load_data(args)
    base = description_config(args)
    engine = engine_from_args(args, folder)
    scorer, why = scorer_from_args(args)
    results, skipped, records = shot_sweep(ds, base, _ints(args.shot_list) or
                                           list(PAPER_SHOTS), engine, scorer, why,
                                           judge_from_args(args, folder), args.limit)
    md = "## HCSU few-shot calibration\n\n" + shot_sweep_table(results)
    write_run(folder, "hcsu-shot-sweep", results, records,
              run_provenance(args, engine, ds, base.spec(), skipped=skipped), md, ds.problems)
    print_summary(md, folder)
    return 0 if results else 2


def _ablation(args: argparse.Namespace) -> int:
    folder = RunFolder(args.out)
    ds = load_data(args)
    base = discrimination_config(args)
    engine = engine_from_args(args, folder)
    modes = ["random", "generated", "expert"] if base.generated else ["random", "expert"]
    results, records = description_ablation(ds, base, modes, engine,  # type: ignore[arg-type]
                                            args.limit)
    md = ("## HCSU description ablation (Table 5)\n\n"
          + discrimination_table(results, label="Descriptions", label_key="descriptions"))
    write_run(folder, "hcsu-description-ablation", results, records,
              run_provenance(args, engine, ds, base.spec()), md, ds.problems)
    print_summary(md, folder)
    return 0


def _ablation_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    add_discrimination_options(p)
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=64)


# ------------------------------------------------------------------ robustness
def _robust_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p)
    p.add_argument("--canonical", type=Path, default=None, metavar="DIR",
                   help="canonical (Origin) copy of the same classes, e.g. the release's "
                        "processed bei/ tie/; default: canonicalize --data into OUT/conditions")
    p.add_argument("--tasks", default="discrimination,description",
                   help="tasks to run: discrimination, description or both (default: both)")
    p.add_argument("--description-model", default=None, metavar="MODEL",
                   help="model for the description task (default: --model)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes for making the Wild-Resize / canonical copies "
                        "(default: all cores)")
    add_discrimination_options(p)
    add_description_options(p)
    add_judge_args(p)
    add_bertscore_args(p)
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=256)


def _robustness(args: argparse.Namespace) -> int:
    folder = RunFolder(args.out)
    tasks = {t.strip() for t in args.tasks.split(",") if t.strip()}
    folders = prepare_conditions(args.data, folder.path("conditions"), args.canonical,
                                 args.workers)
    ds = load_data(args)
    engines = {"discrimination": engine_from_args(args, folder)}
    if "description" in tasks:
        desc_args = argparse.Namespace(**{**vars(args),
                                          "model": args.description_model or args.model})
        engines["description"] = engine_from_args(desc_args, folder)
    scorer, why = scorer_from_args(args) if "description" in tasks else (None, None)
    disc = discrimination_config(args) if "discrimination" in tasks else None
    desc = description_config(args) if "description" in tasks else None
    password = args.zip_password or os.environ.get(args.zip_password_env) or None
    rows, records = robustness(folders, disc, desc, engines, scorer, why,
                               judge_from_args(args, folder), args.limit, password)
    md = "## HCSU robustness (Table 4)\n\n" + robustness_table(rows)
    spec = {"discrimination": disc.spec() if disc else None,
            "description": desc.spec() if desc else None}
    write_run(folder, "hcsu-robustness", rows, records,
              run_provenance(args, engines["discrimination"], ds, spec,
                             conditions={k: str(v) for k, v in folders.items()}),
              md, ds.problems)
    print_summary(md, folder)
    return 0


# ------------------------------------------------------------------ others
def _write_args(p: argparse.ArgumentParser) -> None:
    add_data_args(p, per_class=False)
    p.add_argument("--max-words", type=int, default=50, help="word limit (default: 50)")
    add_model_args(p, temperature=PAPER_TEMPERATURE, max_tokens=256)


def _write(args: argparse.Namespace) -> int:
    folder = RunFolder(args.out)
    ds = load_data(args)
    engine = engine_from_args(args, folder)
    good, errors = write_descriptions(ds, engine, args.max_words)
    path = folder.write_json("generated_descriptions.json", good)
    for key, err in errors.items():
        print(f"error: {key}: {err}", file=sys.stderr)
    print(f"{len(good)} descriptions written to {path}")
    return 1 if errors else 0


def _report_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", type=Path, help="run folders (or summary.json files) "
                   "of the same HCSU command, e.g. one per model")
    p.add_argument("--out", type=Path, default=None, help="write the table to this Markdown "
                   "file as well as printing it")


_TABLES = {"hcsu-discrimination": discrimination_table, "hcsu-description": description_table,
           "hcsu-k-sweep": k_sweep_table, "hcsu-shot-sweep": shot_sweep_table,
           "hcsu-robustness": robustness_table,
           "hcsu-description-ablation": lambda rs: discrimination_table(
               rs, label="Descriptions", label_key="descriptions")}


def _report(args: argparse.Namespace) -> int:
    summaries = [read_summary(p) for p in args.runs]
    kinds = {s.get("benchmark") for s in summaries}
    if len(kinds) != 1 or next(iter(kinds)) not in _TABLES:
        print(f"error: runs must all come from one HCSU command, got {sorted(map(str, kinds))}",
              file=sys.stderr)
        return 2
    kind = str(next(iter(kinds)))
    md = f"## {kind}\n\n" + _TABLES[kind]([r for s in summaries for r in s["results"]])
    if args.out:
        atomic_write_text(args.out, md)
    print(md)
    return 0


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
          _report_args, _report)

