"""``heritage-eval paper ab-table3 RUN... --out DIR``: Ancient-Bench Table 3.

Layout of the paper's Table 3 (Ancient-Bench, §5.1): one row per model, for each of the
nine media (paper order: Oracle, Bronze, Slip, Silk, Seal, Stele, Cliff, Edition,
Calligraphy) the NED score and character F1 in percent, then *Overall*; rows in two
blocks, general VLMs and OCR specialists, by the model type the user gives
(``--type MODEL=vlm|ocr`` or ``--types FILE.yaml``). Best bold, second underlined, per
column over the whole table (the paper marks the best of all models). Values are the
run summaries' own estimates (``summary.json`` ``models.<model>``), so Overall is the
headline: the mean over media of the per-medium means (the official evaluator's
Overall). An Overall over fewer than the paper's nine media (the run's
``overall_media_missing``) is marked ``†`` and footnoted as not comparable with the
paper's; it is not ranked when another row's Overall covers more (or other) media. Rows
of PARTIAL runs and of runs over other data are not ranked at all, marked ``‡``
(:mod:`heritage_eval.report.comparability`); runs over other data are named in a
warning. 95 % intervals: ``--intervals pm`` (default), ``brackets`` or
``none`` (the paper's layout).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.datapath import read_regular_text
from heritage_eval.core.tables import Cell, Column, Table, write_table
from heritage_eval.report.comparability import (
    ROW_MARK,
    different_data_warning,
    unranked_headline,
    unranked_rows,
)
from heritage_eval.report.paper_io import (
    PaperInputError,
    add_common_args,
    add_intervals_arg,
    check_models,
    estimate_cell,
    formats_of,
    guarded,
    prepare_out,
    print_written,
    read_runs,
)
from heritage_eval.report.runs import ModelRun, RunData, metric_specs, model_runs
from heritage_eval.report.sample_sets import SampleSet, align

TYPES = {"vlm": "General VLMs", "ocr": "OCR Specialist Models"}
UNTYPED = "Models without a --type"
MEDIUM_KEY = "medium"


def parse_types(pairs: list[str], yaml_file: Path | None) -> dict[str, str]:
    """Model -> ``"vlm"`` / ``"ocr"`` from ``MODEL=TYPE`` pairs and a YAML mapping file
    (pairs win). Raises :class:`PaperInputError` for a malformed pair, an unreadable
    file or an unknown type (naming the file)."""
    types: dict[str, str] = {}
    if yaml_file is not None:
        import yaml

        try:
            data = yaml.safe_load(read_regular_text(yaml_file))  # a FIFO is refused
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise PaperInputError(f"--types {yaml_file}: cannot read ({exc})") from None
        if not isinstance(data, dict):
            raise PaperInputError(f"--types {yaml_file}: expected a mapping MODEL: vlm|ocr")
        for model, kind in data.items():
            if str(kind).lower() not in TYPES:
                raise PaperInputError(f"--types {yaml_file}: model {model!r} has type "
                                      f"{kind!r}; use vlm or ocr")
            types[str(model)] = str(kind).lower()
    for pair in pairs:
        model, sep, kind = pair.rpartition("=")
        if not sep or not model or kind.lower() not in TYPES:
            raise PaperInputError(f"--type {pair!r}: write MODEL=vlm or MODEL=ocr")
        types[model] = kind.lower()
    return types


def collect_models(runs: list[RunData], samples: str = "common"
                   ) -> tuple[list[ModelRun], list[Any], SampleSet]:
    """The models of the runs (:func:`~heritage_eval.report.runs.model_runs`), the
    metric specs of the first run and the sample set: under ``samples="common"`` every
    model is re-scored on the samples all models counted
    (:func:`heritage_eval.report.sample_sets.align`); notes are printed as warnings."""
    specs = metric_specs(runs[0].summary)
    notes: list[str] = []
    models = model_runs(runs, specs, [MEDIUM_KEY], notes)
    sample_set = align(models, specs, [MEDIUM_KEY], samples)
    data_note = different_data_warning(runs)
    for note in [*notes, *sample_set.notes(), *([data_note] if data_note else [])]:
        print(f"warning: {note}", file=sys.stderr)
    return models, specs, sample_set


def _media(models: list[ModelRun]) -> list[str]:
    seen: dict[str, None] = {}
    for m in models:
        seen.update(dict.fromkeys(m.block.get("groups", {}).get(MEDIUM_KEY, {})))
    from heritage_eval.benchmarks.ancient_bench.categories import MEDIA

    order = [v for v in MEDIA.values() if v in seen]
    return order + [v for v in seen if v not in order]


def _cell(est: Any, with_ci: bool, mark: str = "", unranked: bool = False) -> Cell | None:
    value, lo, hi = estimate_cell(est)
    if value is None:
        return None
    return Cell(value, lo if with_ci else None, hi if with_ci else None, mark, unranked)


def missing_media(runs: list[RunData], m: ModelRun, rescored: bool = False
                  ) -> list[str] | None:
    """Paper media left out of the Overall of ``m``: the run's
    ``results[].overall_media_missing`` (``report.paper_comparability``); counted from the
    medium groups of ``m.block`` when the run predates that field or when ``rescored``
    (the block was re-scored on the samples all models counted, so its Overall may cover
    fewer media than the run's); ``None`` when all 9 count."""
    from heritage_eval.benchmarks.ancient_bench.categories import MEDIA

    run = next(r for r in runs if r.path == m.run_dir)
    entry: dict[str, Any] = next(
        (e for e in run.summary.get("results") or [] if e.get("model") == m.model), {})
    if "overall_media_missing" in entry and not rescored:
        return list(entry["overall_media_missing"]) or None
    groups = m.block.get("groups", {}).get(MEDIUM_KEY, {})
    have = {g for g, ests in groups.items() if any(
        isinstance(e, dict) and e.get("value") is not None for e in ests.values())}
    return [v for v in MEDIA.values() if v not in have] or None


def table3(runs: list[RunData], types: dict[str, str], intervals: str = "none",
           named: Sequence[str] = (), samples: str = "common") -> Table:
    """Table 3 of the Ancient-Bench runs (see the module docstring). ``types``: model
    name (or record model spec) -> ``"vlm"`` / ``"ocr"``; others form a third block.
    ``intervals``: ``"none"``, ``"pm"`` or ``"brackets"``. ``named``: the models given
    with ``--type``; :class:`PaperInputError` listing the runs' models when one of them
    is in no run (a typo). ``samples``: ``common`` (default: every model on the samples
    all models counted) or ``all`` (each run's own; marked when they differ)."""
    models, specs, sample_set = collect_models(runs, samples)
    check_models("--type", named, list(dict.fromkeys(
        [*(m.model for m in models), *(m.name for m in models)])))
    media = _media(models)
    cols = [Column("model", "Model", kind="text")]
    for medium in [*media, "Overall"]:
        cols += [Column(f"{medium}\x1f{s.name}", s.label, decimals=s.decimals, scale=s.scale,
                        rank="higher" if s.higher_is_better else "lower", group=medium)
                 for s in specs]
    with_ci = intervals != "none"
    blocks: dict[str, list[dict[str, Cell | float | str | None]]] = {}
    short: list[str] = []
    not_ranked = unranked_rows(models, runs)  # PARTIAL runs, runs over other data
    lacks = {s.name: unranked_headline(models, s) for s in specs}
    fewer = list(dict.fromkeys(n for by in lacks.values() for n in by))
    for m in models:
        groups = m.block.get("groups", {}).get(MEDIUM_KEY, {})
        row: dict[str, Cell | float | str | None] = {"model": m.name}
        row_mark = ROW_MARK if m.name in not_ranked else ""
        for medium in media:
            for s in specs:
                row[f"{medium}\x1f{s.name}"] = _cell(groups.get(medium, {}).get(s.name),
                                                     with_ci, row_mark, bool(row_mark))
        missing = missing_media(runs, m, rescored=samples == "common" and not sample_set.same)
        for s in specs:
            fewer_here = m.name in lacks[s.name]
            mark = row_mark + ("†" if missing or fewer_here else "")
            row[f"Overall\x1f{s.name}"] = _cell(m.block.get("metrics", {}).get(s.name),
                                                with_ci, mark, bool(row_mark) or fewer_here)
        if missing:
            short.append(f"{m.name} (without {', '.join(missing)})")
        kind = types.get(m.name) or types.get(m.model)
        blocks.setdefault(TYPES[kind] if kind else UNTYPED, []).append(row)
    order = [*TYPES.values(), UNTYPED]
    rows = [r for label in order for r in blocks.get(label, [])]
    notes = ["NED = 1 − normalised edit distance, F1 = character F1 (multiset overlap of "
             "tokens), both in percent over the official normalisation of ground truth and "
             "prediction; "
             "per medium: the mean over its scored samples; Overall: the mean of the "
             "per-medium means (each medium weighs the same, the official evaluator's "
             "Overall). Best bold, second underlined, per column over the models comparable "
             "in that column."]
    if with_ci:
        notes.append("Intervals: 95 % (the run summaries': adjusted Student t; "
                     "Overall combines the media's standard errors, Welch-Satterthwaite).")
    if short:
        notes.append("† Overall over fewer than the paper's 9 media, so not comparable "
                     "with the paper's Overall: " + "; ".join(short) + ".")
    if fewer:
        notes.append("Not ranked: an Overall over fewer (or other) media than another "
                     "row's: " + ", ".join(fewer) + ".")
    if not_ranked:
        notes.append(f"{ROW_MARK} not ranked (not comparable with the other rows): "
                     + "; ".join(f"{n} ({why})" for n, why in not_ranked.items()) + ".")
    if not sample_set.same:
        notes.append(f"Every model on the {sample_set.n_common} sample(s) all models "
                     "counted (others dropped; see the warnings)." if samples == "common"
                     else "NOT COMPARABLE: the models are scored on different samples "
                          "(--samples all).")
    if UNTYPED in blocks:
        notes.append("Give each model a type with --type MODEL=vlm|ocr to split the rows "
                     "as the paper does.")
    partial = [str(r.path) for r in runs if r.summary.get("partial")]
    if partial:
        notes.append("PARTIAL runs (--limit): " + ", ".join(partial))
    return Table(cols, rows, title="Ancient-Bench Table 3: recognition per medium",
                 footnotes=notes, intervals=intervals,  # type: ignore[arg-type]
                 row_groups=[(label, len(blocks[label])) for label in order if label in blocks])


def _add_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "Ancient-Bench run folders ('run ancient-bench' or 'score "
                       "ancient-bench'; a folder may hold several models)")
    p.add_argument("--type", action="append", default=[], metavar="MODEL=vlm|ocr",
                   help="model type: vlm (general VLM) or ocr (OCR specialist); repeat per "
                        "model; the table's two row blocks")
    p.add_argument("--types", type=Path, metavar="FILE.yaml",
                   help="YAML mapping MODEL: vlm|ocr (--type pairs override it)")
    add_intervals_arg(p, "the NED / F1 cells")
    p.add_argument("--samples", choices=("common", "all"), default="common",
                   help="'common': every model on the samples all models counted (a sample "
                        "some model left out as an error is dropped for all, and named); "
                        "'all': each run's own numbers, marked NOT COMPARABLE when the "
                        "sample sets differ (default: common)")


def _handler(args: argparse.Namespace) -> int:
    types = parse_types(args.type, args.types)
    fmts = formats_of(args)
    runs = read_runs(args.runs, ["ancient-bench"])
    named = [pair.rpartition("=")[0] for pair in args.type]
    table = table3(runs, types, args.intervals, named, args.samples)
    out = prepare_out(args.out)
    print_written(write_table(table, out / "ab_table3", fmts))
    return 0


AB_TABLE3 = Command(
    name="ab-table3", help="Ancient-Bench Table 3: NED / F1 per medium, VLMs vs OCR models",
    add_args=_add_args, handler=guarded(_handler),
    description=(
        "Ancient-Bench Table 3 from run folders: models x 9 media (NED and F1, percent)\n"
        "and Overall, rows grouped as general VLMs and OCR specialists by --type, best\n"
        "bold and second underlined per column. Writes OUT/ab_table3.{md,csv,tex}.\n\n"
        "Example:\n  heritage-eval paper ab-table3 runs/ab --type demo-model-a=vlm "
        "--type demo-model-b=ocr --out paper/"))
