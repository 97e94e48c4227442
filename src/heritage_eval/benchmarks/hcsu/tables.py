"""Markdown tables laid out like the paper's Tables 2–5 and the K / shot calibration.

Inputs are ``results`` entries of ``summary.json`` files (plain dicts). Fractions are
shown as percentages with two decimals; 0–10 scales with two decimals; a missing value
is shown as ``–``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from heritage_eval.benchmarks.hcsu.schema import DOMAINS
from heritage_eval.metrics.classification import weighted_mean

DASH = "–"
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


def _markdown(rows: list[dict[str, str]]) -> str:
    return str(pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True)) + "\n"


def _domain_cls(per: Mapping[str, Any], domain: str) -> dict[str, str]:
    d = per.get(domain) or {}
    return {f"{domain} {name}": pct(d.get(key)) for name, key in _CLS}


def discrimination_table(results: Sequence[Mapping[str, Any]], label: str = "Model",
                         label_key: str = "model") -> str:
    """Table 2 (or Table 5 with ``label="Descriptions"``, ``label_key="descriptions"``):
    per domain Acc, F1, Recall, Precision, then Avg. Acc; in percent."""
    rows = []
    for r in results:
        row = {label: str(r.get(label_key, ""))}
        for domain in DOMAINS:
            row |= _domain_cls(r.get("per_domain", {}), domain)
        row["Avg. Acc"] = pct(r.get("avg_accuracy"))
        rows.append(row)
    return _markdown(rows)


def _with_delta(value: float | None, delta: float | None) -> str:
    return num(value) if delta is None else f"{num(value)} ({num(delta, signed=True)})"


def description_table(results: Sequence[Mapping[str, Any]]) -> str:
    """Table 3: per domain BERTScore (x10), Term. (Δ) and Rich. (Δ); an expert-reference
    row (the references scored against themselves, 10.00, and their judged scores) when a
    judge was used."""
    rows = []
    experts: dict[str, dict[str, Any]] = {}
    self_score = next((r["expert_reference"].get("bertscore_x10") for r in results
                       if (r.get("expert_reference") or {}).get("bertscore_x10") is not None),
                      None)
    for r in results:
        row = {"Model": str(r.get("model", ""))}
        for domain in DOMAINS:
            d = r.get("per_domain", {}).get(domain) or {}
            row[f"{domain} BERTScore"] = num(d.get("bertscore_x10"))
            row[f"{domain} Term. (Δ)"] = _with_delta(d.get("terminology"),
                                                     d.get("terminology_delta"))
            row[f"{domain} Rich. (Δ)"] = _with_delta(d.get("richness"), d.get("richness_delta"))
            if d.get("expert_terminology") is not None and domain not in experts:
                experts[domain] = d
        rows.append(row)
    if experts:
        row = {"Model": "Expert reference"}
        for domain in DOMAINS:
            d = experts.get(domain, {})
            row |= {f"{domain} BERTScore": num(self_score) if d else DASH,
                    f"{domain} Term. (Δ)": num(d.get("expert_terminology")),
                    f"{domain} Rich. (Δ)": num(d.get("expert_richness"))}
        rows.insert(0, row)
    return _markdown(rows)


def pooled(per_domain: Mapping[str, Mapping[str, Any]], key: str) -> float | None:
    """Mean of ``key`` over domains weighted by ``n`` (Table 4 pools Bei and Tie so)."""
    return weighted_mean(per_domain, key)


def robustness_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Table 4: per condition the pooled discrimination Acc/F1/Recall/Precision (percent)
    and description BERTScore / Term. / Rich. Each row: ``condition``,
    ``discrimination`` and ``description`` per-domain dicts (either may be absent)."""
    out = []
    for r in rows:
        disc = r.get("discrimination") or {}
        desc = r.get("description") or {}
        row = {"Condition": str(r["condition"])}
        row |= {name: pct(pooled(disc, key)) if disc else DASH for name, key in _CLS}
        row |= {"BERTScore": num(pooled(desc, "bertscore_x10")) if desc else DASH,
                "Term.": num(pooled(desc, "terminology")) if desc else DASH,
                "Rich.": num(pooled(desc, "richness")) if desc else DASH}
        out.append(row)
    return _markdown(out)


def k_sweep_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Calibration: per K the chance level 1/K, accuracy per domain, Avg. Acc and the
    margin Avg. Acc - 1/K (percent)."""
    out = []
    for r in rows:
        per = r.get("per_domain", {})
        avg = r.get("avg_accuracy")
        chance = 1.0 / int(r["k"])
        row = {"K": str(r["k"]), "Chance (1/K)": pct(chance)}
        row |= {f"{d} Acc": pct((per.get(d) or {}).get("accuracy")) for d in DOMAINS}
        row |= {"Avg. Acc": pct(avg), "Margin": pct(None if avg is None else avg - chance)}
        out.append(row)
    return _markdown(out)


def shot_sweep_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Calibration: per shot count the pooled BERTScore, Term. and Rich."""
    out = []
    for r in rows:
        per = r.get("per_domain", {})
        out.append({"Shots": str(r["shots"]), "BERTScore": num(pooled(per, "bertscore_x10")),
                    "Term.": num(pooled(per, "terminology")),
                    "Rich.": num(pooled(per, "richness"))})
    return _markdown(out)
