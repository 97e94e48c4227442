"""Markdown tables laid out like the paper's Tables 2–5 and the K / shot calibration.

Inputs are ``results`` entries of ``summary.json`` files (plain dicts). Fractions are
shown as percentages with two decimals; 0–10 scales with two decimals; a missing value
is shown as ``–``. Every table carries the settings that make two runs different
(discrimination: K and distractor pool; description: shots and judge), so rows of
incompatible runs merged by ``hcsu report`` never look alike, the invalid rate per
domain (``Invalid``: unparsed ÷ answered, percent) and the counts behind each mean
(answered ``n``, errors, unscored), so a ``–`` always comes with its reason.

Layout rule (:func:`layout`): a column whose every cell is a number (or ``–``) is
right-aligned, any other column left-aligned; a column that says nothing is left out and
named in a line under the table: ``–`` in every row (nothing there), or, for the count
columns (``Err.``, ``Invalid``, ``Unscored``, ``X-dom.``), 0 in every row (nothing
happened). A metric that was computed but failed everywhere (all unscored) keeps its
``–`` column beside its unscored count. A metric that was not computed for a run (no
judge, BERTScore disabled or unavailable) shows ``–`` in its unscored count, never 0.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from heritage_eval.benchmarks.hcsu.coverage import MARK, coverage_footnote, marked
from heritage_eval.benchmarks.hcsu.schema import DOMAINS
from heritage_eval.metrics.classification import weighted_mean

DASH = "–"
#: Per-metric counts of the description summaries (their means also hold the unparsed).
_METRIC_COUNTS = ("n_bertscore", "n_judged")
_CLS = (("Acc", "accuracy"), ("F1", "macro_f1"), ("Recall", "macro_recall"),
        ("Precision", "macro_precision"))


def pct(value: float | None) -> str:
    """A fraction in [0, 1] as a percentage with two decimals (``–`` for ``None``)."""
    return DASH if value is None else f"{100 * value:.2f}"


def num(value: float | None, signed: bool = False) -> str:
    """A 0–10 score with two decimals (``+`` sign when ``signed``; ``–`` for ``None``)."""
    if value is None:
        return DASH
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _count(value: Any) -> str:
    return DASH if value is None else str(int(value))


def _setting(value: Any) -> str:
    return DASH if value is None or value == "" else str(value)


#: Count columns left out when every row is 0 (or ``–``): nothing of the kind happened.
ZERO_COLUMNS = (" Err.", " Invalid", " Unscored", " X-dom.")
#: A number cell: ``12``, ``-0.50``, ``4.00 (+1.25)`` (a value with its Δ), ``52.86 ‡``
#: (an average over fewer than the paper's domains, :mod:`.coverage`).
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?(?: \([+-]?\d+(?:\.\d+)?\))?(?: " + MARK + ")?")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _all_zero(cell: str) -> bool:
    """True when every number in ``cell`` is 0 (``"0"``, ``"0.00"``, ``"BERTScore 0 /
    judge –"``) or the cell is ``–``."""
    return all(float(x) == 0 for x in _DIGITS.findall(cell))


def layout(rows: Sequence[Mapping[str, str]], keep: Collection[str] = ()
           ) -> tuple[list[str], list[str], list[str], list[str]]:
    """The layout rule of the module docstring for the table of ``rows`` (all with the
    same keys, in column order): ``(columns kept, their alignment "right" / "left",
    columns left out as – in every row, columns left out as 0 in every row)``. Columns
    in ``keep`` (a metric that was computed) are never left out for their dashes."""
    names = list(rows[0]) if rows else []
    kept: list[str] = []
    align: list[str] = []
    empty: list[str] = []
    zero: list[str] = []
    for name in names:
        cells = [str(r.get(name, DASH)) for r in rows]
        if all(c == DASH for c in cells) and name != names[0] and name not in keep:
            empty.append(name)
        elif name.endswith(ZERO_COLUMNS) and all(_all_zero(c) for c in cells):
            zero.append(name)
        else:
            kept.append(name)
            numeric = all(c == DASH or _NUMBER.fullmatch(c) for c in cells)
            align.append("right" if numeric else "left")
    return kept, align, empty, zero


def _markdown(rows: list[dict[str, str]], keep: Collection[str] = (),
              footnote: str | None = None) -> str:
    """``rows`` as a Markdown table laid out by :func:`layout`, the left-out columns
    named under it, then ``footnote`` (the :mod:`.coverage` note of a marked average)."""
    import pandas as pd  # the 'hcsu' extra: imported here, so the benchmark loads without it

    kept, align, empty, zero = layout(rows, keep)
    frame = pd.DataFrame(rows, columns=kept)
    out = str(frame.to_markdown(index=False, disable_numparse=True, colalign=align)) + "\n"
    left_out = ([f"{', '.join(empty)} (– in every row)"] if empty else []) \
        + ([f"{', '.join(zero)} (0 in every row)"] if zero else [])
    out += f"\nNot shown: {'; '.join(left_out)}.\n" if left_out else ""
    return out + (f"\n{footnote}\n" if footnote else "")


def _shows_mark(row: Mapping[str, str]) -> bool:
    """Whether a cell of ``row`` carries the :mod:`.coverage` mark."""
    return any(str(c).endswith(f" {MARK}") for c in row.values())


def _marked_rows(rows: Sequence[Mapping[str, str]], pers: Sequence[Any]) -> list[Any]:
    """The per-domain dicts (``pers``, one per row) of the rows that show the mark: the
    footnote explains only a mark the table shows."""
    return [p for row, p in zip(rows, pers, strict=True) if _shows_mark(row)]


def _domains(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Domains that occur in any result (Bei, Tie order); both when none does."""
    seen = {d for r in results for d in (r.get("per_domain") or {})}
    return [d for d in DOMAINS if d in seen] or list(DOMAINS)


def discrimination_table(results: Sequence[Mapping[str, Any]], label: str = "Model",
                         label_key: str = "model") -> str:
    """Table 2 (or Table 5 with ``label="Descriptions"``, ``label_key="descriptions"``):
    the run's K and distractor pool, per domain Acc, F1, Recall, Precision and the
    invalid rate (answers with no valid label ÷ answered; percent), answered ``n`` and
    errors, then Avg. Acc. With a pool of ``all`` a per-domain
    cross-domain answer count (``X-dom.``) is added (see :mod:`.scoring`)."""
    domains = _domains(results)
    cross = any(r.get("distractor_pool") == "all" for r in results)
    rows = []
    for r in results:
        row = {label: str(r.get(label_key, ""))}
        if label_key != "model":
            row["Model"] = str(r.get("model", ""))
        row |= {"K": _setting(r.get("k")), "Pool": _setting(r.get("distractor_pool"))}
        for domain in domains:
            d = (r.get("per_domain") or {}).get(domain) or {}
            row |= {f"{domain} {name}": pct(d.get(key)) for name, key in _CLS}
            row[f"{domain} Invalid"] = pct(d.get("invalid_rate"))
            row |= {f"{domain} n": _count(d.get("n")), f"{domain} Err.": _count(d.get("n_error"))}
            if cross:
                row[f"{domain} X-dom."] = _count(d.get("n_cross_domain"))
        row["Avg. Acc"] = marked(pct(r.get("avg_accuracy")), r.get("per_domain"))
        rows.append(row)
    return _markdown(rows, footnote=coverage_footnote(
        _marked_rows(rows, [r.get("per_domain") for r in results]), "Avg. Acc"))


def _with_delta(value: float | None, delta: float | None) -> str:
    return num(value) if delta is None else f"{num(value)} ({num(delta, signed=True)})"


def _unscored(d: Mapping[str, Any], judged: bool, bertscore: bool) -> str:
    """``"BERTScore a / judge b"`` counts of answers a metric failed on; a metric not
    computed for the run (``bertscore`` / ``judged`` false) shows ``–``, never 0."""
    text = f"BERTScore {_count(d.get('n_bertscore_unscored')) if bertscore else DASH}"
    return text + (f" / judge {_count(d.get('n_judge_unscored'))}" if judged else "")


def _expert_rows(results: Sequence[Mapping[str, Any]], domains: list[str]
                 ) -> list[dict[str, str]]:
    """One expert-reference row per judge (the references scored against themselves,
    10.00, and as judged by that judge)."""
    rows = []
    judges = sorted({str(r["judge"]) for r in results if r.get("judge")})
    for judge in judges:
        mine = [r for r in results if r.get("judge") == judge]
        self_score = next((r["expert_reference"].get("bertscore_x10") for r in mine
                           if (r.get("expert_reference") or {}).get("bertscore_x10")
                           is not None), None)
        row = {"Model": "Expert reference", "Shots": DASH, "Judge": judge}
        for domain in domains:
            d = next(((r.get("per_domain") or {}).get(domain) or {} for r in mine
                      if ((r.get("per_domain") or {}).get(domain) or {})
                      .get("expert_terminology") is not None), {})
            row |= {f"{domain} BERTScore": num(self_score),
                    f"{domain} Term. (Δ)": num(d.get("expert_terminology")),
                    f"{domain} Rich. (Δ)": num(d.get("expert_richness")),
                    f"{domain} Invalid": DASH, f"{domain} n": DASH, f"{domain} Err.": DASH,
                    f"{domain} Unscored": DASH}
        rows.append(row)
    return rows


def description_table(results: Sequence[Mapping[str, Any]]) -> str:
    """Table 3: the run's shots and judge, per domain BERTScore (x10), Term. (Δ) and
    Rich. (Δ) (an empty description counts 0 in them, see :mod:`.description_scoring`),
    the invalid rate (empty descriptions ÷ answered; percent), answered ``n``, errors
    and unscored counts; an expert-reference row per
    judge (the references scored against themselves, 10.00, and their judged scores)."""
    domains = _domains(results)
    rows = []
    keep: set[str] = set()  # metrics computed for some run: their "–" is a failure
    for r in results:
        judged = bool(r.get("judge"))
        # BERTScore disabled or not loadable (no scorer recorded, or its reason): –
        bertscore = not r.get("bertscore_unavailable") and (
            "bertscore" not in r or r.get("bertscore") is not None)
        row = {"Model": str(r.get("model", "")), "Shots": _setting(r.get("shots")),
               "Judge": _setting(r.get("judge"))}
        for domain in domains:
            d = (r.get("per_domain") or {}).get(domain) or {}
            keep |= {f"{domain} BERTScore"} if bertscore else set()
            keep |= {f"{domain} Term. (Δ)", f"{domain} Rich. (Δ)"} if judged else set()
            row[f"{domain} BERTScore"] = num(d.get("bertscore_x10"))
            row[f"{domain} Term. (Δ)"] = _with_delta(d.get("terminology"),
                                                     d.get("terminology_delta"))
            row[f"{domain} Rich. (Δ)"] = _with_delta(d.get("richness"), d.get("richness_delta"))
            row[f"{domain} Invalid"] = pct(d.get("invalid_rate"))
            row |= {f"{domain} n": _count(d.get("n")), f"{domain} Err.": _count(d.get("n_error")),
                    f"{domain} Unscored": _unscored(d, judged, bertscore)}
        rows.append(row)
    return _markdown(_expert_rows(results, domains) + rows, keep)


def pooled(per_domain: Mapping[str, Mapping[str, Any]], key: str,
           weight: str = "n") -> float | None:
    """Mean of ``key`` over domains weighted by ``weight`` (default the answered count
    ``n``; Table 4 pools Bei and Tie so). A description metric's weight
    (``n_bertscore`` / ``n_judged``) also counts the domain's ``n_unparsed`` answers,
    which enter its mean as 0. Falls back to ``n`` for summaries without the weight
    key."""
    def count(v: Mapping[str, Any]) -> Any:
        if weight not in v:
            return v.get("n")
        return int(v.get(weight) or 0) + (int(v.get("n_unparsed") or 0)
                                           if weight in _METRIC_COUNTS else 0)
    groups = {d: {key: v.get(key), "n": count(v)} for d, v in per_domain.items()}
    return weighted_mean(groups, key)


def _model_of(row: Mapping[str, Any]) -> str:
    """The model of a study's result row: ``model``, or robustness's discrimination and
    description models (``A / B`` when they differ), so that the rows of several runs
    merged by ``hcsu report`` say whose they are."""
    if row.get("model"):
        return str(row["model"])
    names = [str(row[k]) for k in ("discrimination_model", "description_model")
             if row.get(k)]
    return " / ".join(dict.fromkeys(names)) or DASH


def robustness_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Table 4: per condition the pooled discrimination Acc/F1/Recall/Precision (percent)
    and description BERTScore / Term. / Rich. Each row: ``condition``,
    ``discrimination`` and ``description`` per-domain dicts (either may be absent).
    Description means are pooled by the number of answers each metric scored. A pooled
    value over fewer than the paper's two domains is marked (:mod:`.coverage`)."""
    out = []
    covers: list[list[Any]] = []
    for r in rows:
        disc = r.get("discrimination") or {}
        desc = r.get("description") or {}
        covers.append([disc, desc])
        row = {"Model": _model_of(r), "Condition": str(r["condition"])}
        if any(x.get("k") is not None for x in rows):  # runs merged by `hcsu report`
            row["K"] = DASH if r.get("k") is None else str(r["k"])
        row |= {name: marked(pct(pooled(disc, key)), disc) if disc else DASH
                for name, key in _CLS}
        row |= {"BERTScore": marked(num(pooled(desc, "bertscore_x10", "n_bertscore")), desc)
                if desc else DASH,
                "Term.": marked(num(pooled(desc, "terminology", "n_judged")), desc)
                if desc else DASH,
                "Rich.": marked(num(pooled(desc, "richness", "n_judged")), desc)
                if desc else DASH}
        out.append(row)
    marked_rows = [p for row, pair in zip(out, covers, strict=True) if _shows_mark(row)
                   for p in pair]
    return _markdown(out, footnote=coverage_footnote(marked_rows, "pooled value"))


def k_sweep_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Calibration: per K the chance level 1/K, accuracy per domain, Avg. Acc and the
    margin Avg. Acc - 1/K (percent)."""
    domains = _domains(rows)
    out = []
    for r in rows:
        per = r.get("per_domain", {})
        avg = r.get("avg_accuracy")
        chance = 1.0 / int(r["k"])
        row = {"Model": _model_of(r), "K": str(r["k"]),
               "Pool": _setting(r.get("distractor_pool")),
               "Chance (1/K)": pct(chance)}
        row |= {f"{d} Acc": pct((per.get(d) or {}).get("accuracy")) for d in domains}
        row |= {"Avg. Acc": marked(pct(avg), per),
                "Margin": marked(pct(None if avg is None else avg - chance), per)}
        out.append(row)
    return _markdown(out, footnote=coverage_footnote(
        _marked_rows(out, [r.get("per_domain") for r in rows]), "Avg. Acc"))


def shot_sweep_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Calibration: per shot count the pooled BERTScore, Term. and Rich. and the judge."""
    out = []
    for r in rows:
        per = r.get("per_domain", {})
        out.append({"Model": _model_of(r), "Shots": str(r["shots"]),
                    "Judge": _setting(r.get("judge")),
                    "BERTScore": marked(num(pooled(per, "bertscore_x10", "n_bertscore")),
                                        per),
                    "Term.": marked(num(pooled(per, "terminology", "n_judged")), per),
                    "Rich.": marked(num(pooled(per, "richness", "n_judged")), per)})
    return _markdown(out, footnote=coverage_footnote(
        _marked_rows(out, [r.get("per_domain") for r in rows]), "pooled value"))
