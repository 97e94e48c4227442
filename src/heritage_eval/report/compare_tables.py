"""The tables of a run comparison (:mod:`heritage_eval.report.compare`): models with
intervals, per-group (the paper's Table 3 layout), paired differences, disagreements."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.report.tables import Cell, Column, Table

if TYPE_CHECKING:
    from heritage_eval.report.compare import Comparison

MD_DISAGREEMENTS = 50

# --- tables ------------------------------------------------------------------------------

def _rank(spec: MetricSpec) -> Any:
    return "higher" if spec.higher_is_better else "lower"


def _cell(est: Any, with_ci: bool = True) -> Cell | None:
    if not isinstance(est, dict) or est.get("value") is None:
        return None
    lo, hi = est.get("ci_low"), est.get("ci_high")
    ok = with_ci and lo is not None and hi is not None
    return Cell(float(est["value"]), float(lo) if ok and lo is not None else None,
                float(hi) if ok and hi is not None else None)


def models_table(comp: Comparison) -> Table:
    """Models as rows: each metric (value, 95 % interval) and its n, the invalid rate
    (percent), unparsed / error / unscored counts and the number of records."""
    cols = [Column("model", "Model", kind="text")]
    for s in comp.metrics:
        cols += [Column(s.name, s.label, decimals=s.decimals, scale=s.scale, rank=_rank(s)),
                 Column(f"{s.name}:n", f"n ({s.label})", decimals=0)]
    cols += [Column("invalid", "Invalid %", scale=100.0)]
    cols += [Column(k, k.capitalize() if k != "error" else "Errors", decimals=0)
             for k in ("unparsed", "error", "unscored", "records")]
    rows: list[dict[str, Cell | float | str | None]] = []
    for m in comp.models:
        row: dict[str, Cell | float | str | None] = {
            "model": m.name, "invalid": _cell(m.block.get("invalid_rate")),
            "records": len(m.records),
            **{k: m.block.get("states", {}).get(k) for k in ("unparsed", "error", "unscored")}}
        for s in comp.metrics:
            est = m.block.get("metrics", {}).get(s.name)
            row[s.name] = _cell(est)
            row[f"{s.name}:n"] = est.get("n") if isinstance(est, dict) else None
        rows.append(row)
    ss = comp.sample_set
    where = ("as the runs' summary.json state them" if ss is None or ss.same
             else "recomputed on the samples all models counted" if ss.rule == "common"
             else "each on its own samples: NOT COMPARABLE (different sample sets)")
    notes = [f"Values with 95 % intervals in brackets, {where}; best bold, second "
             "underlined. Invalid % = unparsed / (scored + unparsed)."]
    if comp.partial_runs:
        notes.append("PARTIAL runs (--limit): " + ", ".join(map(str, comp.partial_runs)))
    return Table(cols, rows, title=f"{comp.benchmark}: models", footnotes=notes,
                 intervals="brackets")


def _group_values(comp: Comparison, key: str) -> list[str]:
    values: dict[str, None] = {}
    for m in comp.models:
        values.update(dict.fromkeys(m.block.get("groups", {}).get(key, {})))
    return list(values)


def group_table(comp: Comparison, key: str) -> Table:
    """Models as rows; for every value of group ``key`` a column per metric (those with
    a value for some model), then Overall (the headline values). Best bold, second
    underlined, per column. The paper's Table 3 layout for Ancient-Bench media."""
    cols = [Column("model", "Model", kind="text")]
    rows: list[dict[str, Cell | float | str | None]] = [{"model": m.name} for m in comp.models]
    for value in _group_values(comp, key):
        for s in comp.metrics:
            cells = [_cell(m.block.get("groups", {}).get(key, {}).get(value, {}).get(s.name),
                           False) for m in comp.models]
            if all(c is None for c in cells):
                continue
            cols.append(Column(f"{value}\x1f{s.name}", s.label, decimals=s.decimals,
                               scale=s.scale, rank=_rank(s), group=value))
            for row, c in zip(rows, cells, strict=True):
                row[f"{value}\x1f{s.name}"] = c
    for s in comp.metrics:
        cols.append(Column(f"\x1foverall\x1f{s.name}", s.label, decimals=s.decimals,
                           scale=s.scale, rank=_rank(s), group="Overall"))
        for row, m in zip(rows, comp.models, strict=True):
            row[f"\x1foverall\x1f{s.name}"] = _cell(m.block.get("metrics", {}).get(s.name),
                                                    False)
    return Table(cols, rows, title=f"{comp.benchmark}: per {key}",
                 footnotes=["Best bold, second underlined (per column)."])


def paired_table(comp: Comparison) -> Table:
    """One row per compared model: per metric the difference ``model - reference`` with
    its 95 % interval, the p-value and the number of pairs."""
    cols = [Column("model", "Model", kind="text")]
    for s in comp.metrics:
        cols += [Column(f"{s.name}:d", "Δ", decimals=s.decimals, scale=s.scale, group=s.label),
                 Column(f"{s.name}:p", "p", decimals=4, group=s.label),
                 Column(f"{s.name}:n", "n", decimals=0, group=s.label)]
    rows: dict[str, dict[str, Cell | float | str | None]] = {}
    for p in comp.paired:
        row = rows.setdefault(p.model, {"model": p.model})
        row[f"{p.metric}:d"] = None if p.difference is None else Cell(
            p.difference, p.ci_low, p.ci_high)
        row[f"{p.metric}:p"] = p.p_value
        row[f"{p.metric}:n"] = p.n
    method = comp.paired[0].method if comp.paired else ""
    return Table(cols, list(rows.values()), intervals="brackets",
                 title=f"Paired differences: model − {comp.reference}",
                 footnotes=[f"Records both models answered (same id); 95 % intervals in "
                            f"brackets; two-sided p-values ({method}); macro metrics take "
                            "the mean over groups of the per-group mean differences."])


def _short(value: Any, width: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def disagreements_table(comp: Comparison, limit: int = MD_DISAGREEMENTS) -> Table:
    """The first ``limit`` disagreements: id, groups, reference, each model's answer and
    scores (display scale)."""
    specs = {s.name: s for s in comp.metrics}
    cols = [Column("id", "ID", kind="text"), Column("groups", "Groups", kind="text"),
            Column("metrics", "Differs on", kind="text"),
            Column("reference", "Reference", kind="text")]
    cols += [Column(f"m{i}", m.name, kind="text") for i, m in enumerate(comp.models)]
    rows: list[dict[str, Cell | float | str | None]] = []
    for d in comp.disagreements[:limit]:
        row: dict[str, Cell | float | str | None] = {
            "id": d.id, "groups": ", ".join(f"{k}={v}" for k, v in d.groups.items()),
            "metrics": ", ".join(specs[n].label for n in d.metrics),
            "reference": _short(d.reference)}
        for i, m in enumerate(comp.models):
            e = d.models.get(m.name)
            if e is None:
                continue
            ans = e["answer"] if e["answer"] is not None else e["response"]
            scores = "; ".join(
                f"{specs[n].label} {e['scores'][n] * specs[n].scale:.{specs[n].decimals}f}"
                for n in d.metrics if e["scores"].get(n) is not None)
            row[f"m{i}"] = f"{_short(ans, 60)} [{e['state']}{'; ' + scores if scores else ''}]"
        rows.append(row)
    return Table(cols, rows)


