"""``heritage-eval run ancient-bench`` and ``heritage-eval score ancient-bench``."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.loader import Release, load_release
from heritage_eval.benchmarks.ancient_bench.normalize import PROTOCOLS, NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.pipeline import run_model, score_prediction_folder
from heritage_eval.benchmarks.ancient_bench.predictions import (
    MISSING_POLICIES,
    MissingPredictionsError,
    check_model_folders,
    discover_models,
)
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet, load_prompts
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord
from heritage_eval.benchmarks.ancient_bench.report import (
    OVERALL_FOOTNOTE,
    build_summary,
    medium_table,
    models_table,
    overall_notes,
    render_markdown,
)
from heritage_eval.benchmarks.registry import Command, register_run, register_score
from heritage_eval.cli.common import (
    add_model_args,
    backend_from_args,
    cache_from_args,
    model_provenance,
    settings_from_args,
)
from heritage_eval.core.provenance import provenance
from heritage_eval.core.store import RunFolder
from heritage_eval.models.base import ModelBackend

_FLAG_HELP = {
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
    for name, text in _FLAG_HELP.items():
        g.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None,
                       action=argparse.BooleanOptionalAction,
                       help=f"{text} (default: from --protocol)")


def add_categories_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--categories", nargs="+", default=None, metavar="NAME",
                   help="only these media: folder names or paper names "
                        f"({', '.join(MEDIA.values())}) (default: all found)")


def flags_from_args(args: argparse.Namespace) -> tuple[dict[str, Any], NormalizationFlags]:
    """The protocol block for provenance and the effective flags."""
    preset = PROTOCOLS[args.protocol]
    overrides = {k: getattr(args, k) for k in _FLAG_HELP if getattr(args, k) is not None}
    flags = preset.model_copy(update=overrides)
    name = args.protocol if not overrides else f"{args.protocol}+overrides"
    return {"name": name, "flags": flags.model_dump()}, flags


def _data_counts(release: Release) -> dict[str, Any]:
    return {"samples": len(release.samples), "load_errors": release.n_load_errors,
            "per_category": dict(Counter(s.category for s in release.samples))}


def _write(out: Path, records: list[SampleRecord], summary: dict[str, Any]) -> RunFolder:
    run = RunFolder(out)
    run.write_samples(records)
    run.write_json("summary.json", summary)
    run.write_text("summary.md", render_markdown(summary))
    return run


def _report_errors(summary: dict[str, Any], run: RunFolder) -> None:
    for res in summary["results"]:
        n_err = res["states"]["error"]
        if n_err:
            print(f"{res['model']}: {n_err} sample(s) ended as error (first: "
                  f"{res['errors'][0]['reason']}); see {run.path('summary.md')}",
                  file=sys.stderr)
        if res["missing_predictions"]:
            print(f"{res['model']}: {len(res['missing_predictions'])} missing prediction(s) "
                  "listed in summary.json", file=sys.stderr)


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, type=Path,
                   help="release root in the official layout: <category>/conv.jsonl + images")
    p.add_argument("--prompts", type=Path, default=None, metavar="FILE",
                   help="JSON object replacing prompt templates: keys 'base' and medium "
                        "names (e.g. 'seals' or 'Seal') -> text (default: built-in prompts)")
    add_categories_arg(p)
    add_protocol_args(p)
    add_model_args(p, default_model="rapidocr")


def refuse_model(spec: str) -> str | None:
    """Why ``spec`` cannot run Ancient-Bench, or ``None``. The ``baseline:*`` backends
    (``baseline:random`` and the HCSU / MUSE ones) pick among offered options; a
    transcription task offers none, so every answer would be empty and score 0."""
    if spec.startswith("baseline:"):
        return (f"--model {spec!r} is a multiple-choice baseline (it picks one of the "
                "offered options) and cannot transcribe; on Ancient-Bench every answer "
                "would be empty and score 0. Use 'rapidocr' (bundled offline OCR) or "
                "'openai:NAME' (a vision-language model endpoint)")
    return None


def prompt_provenance(prompts: PromptSet, backend: ModelBackend) -> dict[str, Any]:
    """``prompt_used``, ``prompt_templates_hash`` (whole template set; per-sample rows
    carry ``prompt_hash`` of the full prompt sent) and ``prompt_source``; a backend that
    reads only the image (``reads_prompt`` False) gets ``prompt_used: false`` and null
    hashes."""
    if backend.reads_prompt:
        return {"prompt_used": True, "prompt_templates_hash": prompts.hash(),
                "prompt_source": prompts.source}
    return {"prompt_used": False, "prompt_templates_hash": None,
            "prompt_source": f"not used: {backend.spec} reads only the image"}


def _print_notes(results: list[dict[str, Any]], footnote: bool) -> None:
    if footnote:
        print(f"\n{OVERALL_FOOTNOTE}")
    for res in results:
        for note in overall_notes(res):
            print(f"{res['model']}: {note}" if len(results) > 1 else note)


def _run(args: argparse.Namespace) -> int:
    refusal = refuse_model(args.model)
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    protocol, flags = flags_from_args(args)
    try:
        release = load_release(args.data, args.categories, args.limit)
        prompts = load_prompts(args.prompts)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    backend = backend_from_args(args)
    if args.prompts is not None and not backend.reads_prompt:
        print(f"note: {backend.spec} reads only the image; --prompts is not used",
              file=sys.stderr)
    settings = settings_from_args(args)
    run = RunFolder(args.out)
    cache = cache_from_args(args, run)
    try:
        records = run_model(release, backend, settings, cache, prompts, flags,
                            args.concurrency)
    finally:
        if cache is not None:
            cache.close()
    prov = provenance(benchmark="ancient-bench", **model_provenance(args, backend, settings),
                      **prompt_provenance(prompts, backend),
                      protocol=protocol, data=str(release.root.resolve()),
                      data_counts=_data_counts(release), limit=args.limit)
    summary = build_summary(records, [backend.spec], release.categories, protocol, prov,
                            warnings=release.warnings)
    _write(args.out, records, summary)
    result = summary["results"][0]
    print(medium_table(result))
    _print_notes([result], footnote=True)
    _report_errors(summary, run)
    print(f"run folder: {args.out}", file=sys.stderr)
    if result["states"]["scored"] == 0:
        what = (f"none of the {len(records)} sample(s) was scored: every one ended as "
                "error (reasons in summary.md)" if records else
                "no sample to evaluate: every conv.jsonl is empty")
        print(f"error: {what}; run folder written to {args.out}", file=sys.stderr)
        return 1
    return 0


def _score_args(p: argparse.ArgumentParser) -> None:
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


def _score(args: argparse.Namespace) -> int:
    protocol, flags = flags_from_args(args)
    try:
        release = load_release(args.data, args.categories, check_images=False)
        models = args.models or discover_models(args.predictions)
        absent = [m for m in models if not (args.predictions / m).is_dir()]
        if absent:
            raise FileNotFoundError(f"no folder for model(s) {', '.join(absent)} under "
                                    f"{args.predictions}")
        check_model_folders(args.predictions, models, release.categories)
        scored = score_prediction_folder(release, args.predictions, models, flags,
                                         args.missing)
    except MissingPredictionsError as exc:
        print(f"error: {exc}\n(use --missing empty or --missing skip to score anyway)",
              file=sys.stderr)
        return 1
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    prov = provenance(benchmark="ancient-bench", models=models, protocol=protocol,
                      missing_policy=args.missing, data=str(release.root.resolve()),
                      predictions=str(args.predictions.resolve()),
                      data_counts=_data_counts(release))
    for warning in scored.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    summary = build_summary(scored.records, models, release.categories, protocol, prov,
                            missing=scored.missing,
                            warnings=[*release.warnings, *scored.warnings])
    run = _write(args.out, scored.records, summary)
    print(models_table(summary))
    _print_notes(summary["results"], footnote=False)
    _report_errors(summary, run)
    return 0


register_run(Command(
    name="ancient-bench", help="transcribe ancient Chinese artifacts (9 media; NED, char F1)",
    add_args=_run_args, handler=_run,
    description="Run a model on Ancient-Bench (official release layout) and score it with "
                "the official evaluator's normalisation. Writes samples.jsonl, summary.json "
                "and summary.md to --out and prints the per-medium table (percent)."))
register_score(Command(
    name="ancient-bench", help="score Ancient-Bench predictions in the official layout",
    add_args=_score_args, handler=_score,
    description="Score predictions made elsewhere (<root>/<model>/<category>/results/"
                "<stem>.json) against the ground truth, exactly as the official evaluator "
                "does; one table row per model."))
