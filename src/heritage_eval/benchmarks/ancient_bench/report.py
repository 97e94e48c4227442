"""``summary.json`` content, ``summary.md`` and the console tables (percent, 2 decimals).

``summary.json`` body (fractions in [0, 1]; the platform merges in its envelope:
``schema``, ``partial``, ``models`` with intervals, ``statistics``)::

    {"benchmark": "ancient-bench", "protocol": {...},
     "results": [{"model": str,
                  "per_category": {<folder>: {"n": int, "ned_score": float, "f1": float,
                                              "medium": str, "n_error": int, ...}},
                  "overall": {"ned_score": float, "f1": float},
                  "overall_covers": [<folder>, ...],
                  "overall_comparable_with_paper": bool,
                  "overall_media_missing": [<paper medium name>, ...],
                  "states": {...}, "errors": [{"id", "reason", "kind"}, ...],
                  "errors_by_kind": {"data": int, "api": int, "model": int},
                  "missing_predictions": [...],
                  "analysis": {...}}],
     "warnings": [...], "provenance": {...}}

Two kinds of average meet in an "Overall" row, on purpose, and the tables say so in a
footnote (:data:`OVERALL_FOOTNOTE`): NED and F1 are the unweighted mean of the per-medium
means (the paper's and the official evaluator's definition, kept for parity), while the
hallucination rate and the s/t-only share are pooled over tokens of all scored samples
(our analysis definitions, ``analysis.py``) and n / errors / edit operations are totals.
A medium without any scored sample is left out of Overall and named in a note; category
folders that are not among the paper's nine media are included in Overall and named too
(:func:`overall_notes`). ``results[i]["overall_covers"]`` lists the media averaged;
``overall_comparable_with_paper`` is true only when they are exactly the paper's 9, and
``overall_media_missing`` names the paper's media left out (an Overall over fewer media
is flagged in ``summary.md`` and on the console as not comparable with the paper's).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from heritage_eval.benchmarks.ancient_bench.analysis import analyse
from heritage_eval.benchmarks.ancient_bench.categories import MEDIA, medium_name
from heritage_eval.benchmarks.ancient_bench.fact_table import FactTable
from heritage_eval.benchmarks.ancient_bench.records import RowLike
from heritage_eval.benchmarks.ancient_bench.scoring import category_means, overall_mean

BENCHMARK = "ancient-bench"

#: Label of the Overall row and its footnote (the row mixes two kinds of average). Its
#: mark is "§", not "†", which marks a flagged interval in the same summary.md.
OVERALL_LABEL = "Overall §"
OVERALL_FOOTNOTE = (
    "§ Overall row: NED and F1 are the unweighted mean of the per-medium means (as in the "
    "paper and the official evaluator); n, errors, ins, del and sub are totals; halluc. "
    "and s/t-only sub are pooled over the tokens of all scored samples (total insertions "
    "÷ total predicted tokens; total s/t-only ÷ total substitutions), not means of the "
    "rows above.")


def model_result(model: str, records: Sequence[RowLike], categories: list[str],
                 missing: Sequence[dict[str, str]] = ()) -> dict[str, Any]:
    """The ``results`` entry of one model (see module doc). ``records`` are that model's
    rows (or their :class:`~.records.RowFacts`) in release order; ``categories`` the
    folder names in table order."""
    means = category_means(((r.category, r.ned_score or 0.0, r.f1 or 0.0) for r in records
                            if r.state.value == "scored"), categories)
    errors = Counter(r.category for r in records if r.state.value == "error")
    skipped = Counter(m["id"].split("/", 1)[0] for m in missing
                      if m.get("model") == model)
    per_cat: dict[str, Any] = {}
    for cat, stats in means.items():
        per_cat[cat] = {"n": stats.n, "ned_score": stats.ned_score, "f1": stats.f1,
                        "medium": medium_name(cat), "n_error": errors.get(cat, 0),
                        "n_missing": skipped.get(cat, 0)}
    overall = overall_mean(means)
    states = Counter(r.state.value for r in records)
    return {
        "model": model,
        "per_category": per_cat,
        "overall": {"ned_score": overall[0] if overall else None,
                    "f1": overall[1] if overall else None},
        "states": {s: states.get(s, 0) for s in ("scored", "unparsed", "error", "unscored")},
        "categories_without_scores": [c for c, s in means.items() if s.n == 0],
        "overall_covers": [c for c, s in means.items() if s.n > 0],
        **paper_comparability([c for c, s in means.items() if s.n > 0]),
        "errors": [{"id": r.id, "reason": r.error, "kind": r.error_kind or "api"}
                   for r in records if r.state.value == "error"],
        "errors_by_kind": error_kinds(records),
        "missing_predictions": [m for m in missing if m.get("model") == model],
        "analysis": analyse(records, categories),
    }


def paper_comparability(covered: Sequence[str]) -> dict[str, Any]:
    """Whether an Overall over the media ``covered`` (folder names with scored samples)
    can be set beside the paper's Overall, which is the mean of all 9 media (Table 3):
    ``overall_comparable_with_paper`` (True only for exactly the 9 media) and
    ``overall_media_missing`` (paper names of the 9 media not covered, in paper order)."""
    missing = [name for folder, name in MEDIA.items() if folder not in covered]
    extra = [c for c in covered if c not in MEDIA]
    return {"overall_comparable_with_paper": bool(covered) and not missing and not extra,
            "overall_media_missing": missing}


#: Kinds of ``error`` rows, counted apart (see ``records.SampleRecord.error_kind``).
ERROR_KINDS = ("data", "api", "model")


def error_kinds(records: Sequence[RowLike]) -> dict[str, int]:
    """Error rows per kind: ``data`` (bad input: unloadable line, missing image, a
    ground truth empty after normalisation, an unreadable prediction file), ``api`` (the
    request failed after its retries) and ``model`` (a model failure under
    ``--model-failures exclude``: refusal, content filter, no final answer); every kind
    present, 0 when none."""
    counts = Counter(r.error_kind or "api" for r in records if r.state.value == "error")
    return {k: counts.get(k, 0) for k in ERROR_KINDS}


def states_line(result: dict[str, Any]) -> str:
    """``States: scored 3, error 2 (data 1, API 1, model failures left out 0); missing
    predictions 0.`` The error kinds name model failures "left out": only those of
    ``--model-failures exclude`` are errors; under the default (``wrong``) a model
    failure is a scored wrong answer, counted in its own section."""
    st = result["states"]
    kinds = result.get("errors_by_kind") or {}
    split = (f" (data {kinds.get('data', 0)}, API {kinds.get('api', 0)}, model failures "
             f"left out {kinds.get('model', 0)})" if kinds else "")
    return (f"States: scored {st['scored']}, error {st['error']}{split}; missing "
            f"predictions {len(result['missing_predictions'])}.")


def build_summary(records: Sequence[RowLike], models: list[str], categories: list[str],
                  protocol: dict[str, Any], provenance: dict[str, Any],
                  missing: Sequence[dict[str, str]] = (),
                  warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The whole ``summary.json`` object, one ``results`` entry per model."""
    return {
        "benchmark": BENCHMARK,
        "protocol": protocol,
        "results": [model_result(m, _rows_of(records, m), categories, missing)
                    for m in models],
        "warnings": list(warnings),
        "provenance": provenance,
    }


def _rows_of(records: Sequence[RowLike], model: str) -> Sequence[RowLike]:
    """``model``'s rows in order: a view of a :class:`FactTable` (a streamed run's
    270,000 rows are not copied into a list), else a list."""
    if isinstance(records, FactTable):
        return records.rows_of(model)
    return [r for r in records if r.model == model]


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.2f}"


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return format(value, "g")
    return str(value).strip()


def _markdown(rows: list[dict[str, Any]]) -> str:
    """Markdown pipe table (tabulate's ``pipe`` format, as pandas' ``to_markdown`` writes
    it); numbers are pre-formatted strings, kept as written, first column left-aligned,
    the others right-aligned. Columns: every key in first-seen order; a row without a key
    shows ``nan``."""
    from tabulate import tabulate

    headers = list(dict.fromkeys(k for row in rows for k in row))
    if not headers:
        return ""
    cells = [[_cell_text(row[h]) if h in row else "nan" for h in headers] for row in rows]
    return str(tabulate(cells, headers=headers, tablefmt="pipe", disable_numparse=True,
                        colalign=("left", *["right"] * (len(headers) - 1))))


def models_table(summary: dict[str, Any]) -> str:
    """One row per model, one column per medium (paper names) plus Overall; cells
    ``NED / F1`` in percent with two decimals (the paper's Table 3 layout)."""
    rows = []
    for res in summary["results"]:
        row = {"Model": res["model"]}
        for cat, st in res["per_category"].items():
            row[medium_name(cat)] = f"{_pct(st['ned_score'])} / {_pct(st['f1'])}"
        ov = res["overall"]
        row["Overall (mean of media)"] = f"{_pct(ov['ned_score'])} / {_pct(ov['f1'])}"
        rows.append(row)
    return _markdown(rows)


def medium_table(result: dict[str, Any]) -> str:
    """One row per medium plus Overall for one model: n, errors, NED %, F1 %,
    hallucination %, edit operations and the s/t-only share of substitutions."""
    analysis = result["analysis"]["per_category"]
    rows = []
    for cat, st in result["per_category"].items():
        an = analysis[cat]
        rows.append({"Medium": medium_name(cat), "n": st["n"], "errors": st["n_error"],
                     "NED (%)": _pct(st["ned_score"]), "F1 (%)": _pct(st["f1"]),
                     "halluc. (%)": _pct(an["hallucination_rate"]),
                     "ins": an["insertions"], "del": an["deletions"],
                     "sub": an["substitutions"], "s/t-only sub (%)": _pct(an["st_only_share"])})
    an = result["analysis"]["overall"]
    rows.append({"Medium": OVERALL_LABEL, "n": an["n"], "errors": result["states"]["error"],
                 "NED (%)": _pct(result["overall"]["ned_score"]),
                 "F1 (%)": _pct(result["overall"]["f1"]),
                 "halluc. (%)": _pct(an["hallucination_rate"]), "ins": an["insertions"],
                 "del": an["deletions"], "sub": an["substitutions"],
                 "s/t-only sub (%)": _pct(an["st_only_share"])})
    return _markdown(rows)


def overall_notes(result: dict[str, Any]) -> list[str]:
    """Plain-language notes on what one model's Overall covers: media left out (no scored
    sample) and category folders outside the paper's nine that are included."""
    present = list(result["per_category"])
    covered = result.get("overall_covers",
                         [c for c in present if result["per_category"][c]["n"] > 0])
    notes: list[str] = []
    if not covered:
        notes.append("Overall: no medium has a scored sample, so there is no Overall.")
    elif len(covered) < len(present):
        empty = [medium_name(c) for c in present if c not in covered]
        verb = "has" if len(empty) == 1 else "have"
        notes.append(f"Overall = mean over {len(covered)} of {len(present)} media; "
                     f"{', '.join(empty)} {verb} no scored samples.")
    unknown = [c for c in covered if c not in MEDIA]
    if unknown:
        notes.append(f"Overall includes {', '.join(unknown)} (category folder(s) not among "
                     "the paper's 9 media), so it is not comparable with the paper's.")
    missing = result.get("overall_media_missing",
                         paper_comparability(covered)["overall_media_missing"])
    if covered and missing:
        notes.append(f"Overall covers {len(MEDIA) - len(missing)} of the paper's "
                     f"{len(MEDIA)} media (not: {', '.join(missing)}): NOT comparable with "
                     "the paper's Overall, the mean of all 9.")
    return notes


def _breakdown_table(table: dict[str, dict[str, Any]], label: str) -> str:
    rows = [{label: k, "n": v["n"], "NED (%)": _pct(v["ned_score"]), "F1 (%)": _pct(v["f1"]),
             "halluc. (%)": _pct(v["hallucination_rate"])} for k, v in table.items()]
    return _markdown(rows)


def render_markdown(summary: dict[str, Any], max_errors: int = 50) -> str:
    """``summary.md``: the models x media table, per-model detail, breakdowns, errors."""
    prov = summary["provenance"]
    flags = summary["protocol"].get("flags", {})
    out = ["# Ancient-Bench results", "",
           f"Protocol: **{summary['protocol'].get('name')}** — "
           + ", ".join(f"{k}={v}" for k, v in flags.items()), "",
           "Scores are percent (NED score = 1 − normalized edit distance; F1 = character "
           "F1), mean per medium; Overall NED / F1 = unweighted mean of the media. "
           "Hallucination rate = inserted tokens ÷ predicted tokens (our definition), "
           "pooled over tokens.", "",
           models_table(summary), ""]
    out += [f"- {res['model']}: {n}" for res in summary["results"] for n in overall_notes(res)]
    if out[-1] != "":
        out.append("")
    for res in summary["results"]:
        out += [f"## {res['model']}", "", states_line(res), "", medium_table(res), "",
                OVERALL_FOOTNOTE, ""]
        out += [f"- {n}" for n in overall_notes(res)]
        if out[-1] != "":
            out.append("")
        for field in ("script", "period"):
            if f"by_{field}" in res["analysis"]:
                out += [f"### By {field}", "",
                        _breakdown_table(res["analysis"][f"by_{field}"], field.title()), ""]
        if res["errors"]:
            out += ["### Errors", ""]
            out += [f"- `{e['id']}`: {e['reason']}" for e in res["errors"][:max_errors]]
            if len(res["errors"]) > max_errors:
                out.append(f"- … and {len(res['errors']) - max_errors} more (samples.jsonl)")
            out.append("")
        if res["missing_predictions"]:
            out += ["### Missing predictions", ""]
            out += [f"- `{m['path']}`" for m in res["missing_predictions"][:max_errors]]
            out.append("")
        if res.get("unusable_predictions"):  # score: files that gave no answer
            out += ["### Unusable prediction files", ""]
            out += [f"- {u['reason']}" for u in res["unusable_predictions"][:max_errors]]
            out.append("")
    if summary.get("warnings"):
        out += ["## Warnings", ""] + [f"- {w}" for w in summary["warnings"]] + [""]
    out += ["## Provenance", ""]
    out += [f"- {k}: `{prov[k]}`" for k in ("package_version", "git_commit", "model",
                                             "prompt_used", "prompt_templates_hash",
                                             "prompt_source", "data", "created_utc")
            if k in prov]
    return "\n".join(out) + "\n"
