"""The tables of a run comparison (:mod:`heritage_eval.report.compare`): models with
intervals, per-group (the paper's Table 3 layout), paired differences, disagreements.

Study folders (:mod:`heritage_eval.report.compare_conditions`) get one row block per
condition (``k = 2``, ``k = 3`` …) in the models, per-group and paired tables, ranked
within the block; CSV names the block in its leading ``group`` column."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.run_tables import (
    NO_INTERVAL_NOTE,
    empty_row_note,
    mark_notes,
    row_has_value,
)
from heritage_eval.core.summary import FLAG_NOTES
from heritage_eval.core.tables import Cell, Column, Table
from heritage_eval.report.comparability import HEADLINE_MARK, ROW_MARK, unranked_headline
from heritage_eval.report.runs import ModelRun

if TYPE_CHECKING:
    from heritage_eval.report.compare import Comparison, PairedRow

MD_DISAGREEMENTS = 50

# --- tables ------------------------------------------------------------------------------

def _rank(spec: MetricSpec) -> Any:
    return "higher" if spec.higher_is_better else "lower"


def _cell(est: Any, with_ci: bool = True) -> Cell | None:
    """The cell of a summary estimate (``None`` when it has no value). ``with_ci``: the
    interval is shown, and a value without one is marked " —" as in the run's own tables
    (:data:`~heritage_eval.core.run_tables.NO_INTERVAL_NOTE`); a table that shows no
    interval marks nothing. The run tables' "†" (a flagged estimate) is not set here:
    "†" already means :data:`~heritage_eval.report.comparability.HEADLINE_MARK` in
    these tables; each estimate's flags are in ``Comparison.to_pandas()``."""
    if not isinstance(est, dict) or est.get("value") is None:
        return None
    lo, hi = est.get("ci_low"), est.get("ci_high")
    ok = with_ci and lo is not None and hi is not None
    return Cell(float(est["value"]), float(lo) if ok and lo is not None else None,
                float(hi) if ok and hi is not None else None,
                mark=" —" if with_ci and not ok else "")


def estimate_notes(rows: list[dict[str, Cell | float | str | None]],
                   metric_keys: list[str], names: list[str]) -> list[str]:
    """The footnotes of the estimates a table shows, by the run tables' rule: the "—"
    note only when a shown value carries it
    (:func:`~heritage_eval.core.run_tables.mark_notes`; "†" is left out, see
    :func:`_cell`), and one line per row (``names``: model, with its condition block in
    a study) none of whose ``metric_keys`` cells has a value
    (:func:`~heritage_eval.core.run_tables.empty_row_note`, with the row's ``records``
    count when it has one)."""
    notes = [n for n in mark_notes(rows) if n == NO_INTERVAL_NOTE]
    for row, name in zip(rows, names, strict=True):
        if not row_has_value({k: row.get(k) for k in metric_keys}):
            n = row.get("records")
            notes.append(empty_row_note(name, n if isinstance(n, int | float) else None))
    return notes


def _unranked(cell: Cell | None, row: str | None, headline: list[str] | None
              ) -> Cell | None:
    """``cell`` left out of the ranking and marked when its row is not ranked (``row``:
    why) or its headline covers other groups (``headline``: the groups it lacks)."""
    if cell is None or (row is None and headline is None):
        return cell
    mark = (ROW_MARK if row is not None else "") + (HEADLINE_MARK if headline is not None
                                                    else "")
    return replace(cell, unranked=True, mark=cell.mark + mark)


def ranking_notes(comp: Comparison, headline: dict[str, dict[str, list[str]]],
                  rows: list[dict[str, Cell | float | str | None]]) -> list[str]:
    """Footnotes for the unranked cells: ``ROW_MARK`` rows and ``HEADLINE_MARK`` headline
    cells (``headline``: metric label -> model -> groups lacked), with the models and
    why (:mod:`heritage_eval.report.comparability`) — each only when a cell of ``rows``
    with a value shows its mark (a model with no value there is marked nowhere)."""
    shown = "".join(c.mark for row in rows for c in row.values()
                    if isinstance(c, Cell) and c.value is not None)
    notes = []
    if comp.not_ranked and ROW_MARK in shown:
        notes.append(f"{ROW_MARK} not ranked (not comparable with the other rows): "
                     + "; ".join(f"{m} ({why})" for m, why in comp.not_ranked.items()) + ".")
    parts = [f"{label}: " + ", ".join(f"{m} (without {', '.join(g) or 'nothing'})"
                                      for m, g in lacks.items())
             for label, lacks in headline.items() if lacks]
    if parts and HEADLINE_MARK in shown:
        notes.append(f"{HEADLINE_MARK} headline not ranked: a mean over other groups than "
                     "the other models' (" + "; ".join(parts) + ").")
    return notes


def condition_label(comp: Comparison, value: str) -> str:
    """The row-block label of one condition: ``"k = 3"``."""
    return f"{comp.condition_key} = {value}"


def blocks(comp: Comparison) -> list[tuple[str | None, list[ModelRun]]]:
    """The row blocks of the tables: one per condition of a study comparison (label,
    that condition's models), else one unlabelled block of every model."""
    if comp.condition_key is None:
        return [(None, comp.models)]
    return [(condition_label(comp, v), ms) for v, ms in comp.conditions.items()]


def _row_groups(comp: Comparison) -> list[tuple[str, int]] | None:
    return None if comp.condition_key is None else [
        (label or "", len(ms)) for label, ms in blocks(comp)]


def _headline_lacks(comp: Comparison) -> dict[str, dict[str, list[str]]]:
    """Metric label -> row (model, with its condition in a study) -> the groups its
    headline lacks (:func:`~heritage_eval.report.comparability.unranked_headline`,
    within each block)."""
    out: dict[str, dict[str, list[str]]] = {s.label: {} for s in comp.metrics}
    for label, ms in blocks(comp):
        for s in comp.metrics:
            out[s.label] |= {f"{name} ({label})" if label else name: groups
                             for name, groups in unranked_headline(ms, s).items()}
    return out


def _lacked(lacks: dict[str, dict[str, list[str]]], spec: MetricSpec, name: str,
            label: str | None) -> list[str] | None:
    return lacks[spec.label].get(f"{name} ({label})" if label else name)


def models_table(comp: Comparison) -> Table:
    """Models as rows: each metric (value, 95 % interval) and its n, the invalid rate
    (percent), unparsed / error / unscored counts and the number of records. A study
    comparison has one block of rows per condition, ranked within it.

    Marks and footnotes follow the run tables' rule (:func:`estimate_notes`): a value
    without an interval is "… —" and the "—" note appears only then; a row none of
    whose metrics has a value is named in a footnote (its invalid rate and counts still
    show)."""
    cols = [Column("model", "Model", kind="text")]
    for s in comp.metrics:
        cols += [Column(s.name, s.label, decimals=s.decimals, scale=s.scale, rank=_rank(s)),
                 Column(f"{s.name}:n", f"n ({s.label})", decimals=0)]
    cols += [Column("invalid", "Invalid %", scale=100.0),
             Column("failures", "Model failures %", scale=100.0)]
    cols += [Column(k, k.capitalize() if k != "error" else "Errors", decimals=0)
             for k in ("unparsed", "error", "unscored", "records")]
    rows: list[dict[str, Cell | float | str | None]] = []
    names: list[str] = []
    lacks = _headline_lacks(comp)
    for label, ms in blocks(comp):
        for m in ms:
            names.append(f"{m.name} ({label})" if label else m.name)
            row: dict[str, Cell | float | str | None] = {
                "model": m.name, "invalid": _cell(m.block.get("invalid_rate")),
                "failures": _cell(m.block.get("model_failure_rate")),
                "records": len(m.records),
                **{k: m.block.get("states", {}).get(k)
                   for k in ("unparsed", "error", "unscored")}}
            for s in comp.metrics:
                est = m.block.get("metrics", {}).get(s.name)
                row[s.name] = _unranked(_cell(est), comp.not_ranked.get(m.name),
                                        _lacked(lacks, s, m.name, label))
                row[f"{s.name}:n"] = est.get("n") if isinstance(est, dict) else None
            rows.append(row)
    ss = comp.sample_set
    where = ("as the runs' summary.json state them" if ss is None or ss.same
             else "recomputed on the samples all models counted" if ss.rule == "common"
             else "each on its own samples: NOT COMPARABLE (different sample sets)")
    notes = [f"Values with 95 % intervals in brackets, {where}; best bold, second "
             "underlined. Invalid % = unparsed / (scored + unparsed); Model failures % = the "
             "model's own failures (refusal, content filter, no final answer, empty answer) "
             "/ records not left out for network, server or data errors."]
    if comp.partial_runs:
        notes.append("PARTIAL runs (--limit): " + ", ".join(map(str, comp.partial_runs)))
    notes += estimate_notes(rows, [s.name for s in comp.metrics], names)
    notes += ranking_notes(comp, lacks, rows)
    if comp.condition_key is not None:
        notes.append(CONDITION_NOTE.format(key=comp.condition_key))
    return Table(cols, rows, title=f"{comp.benchmark}: models" + _per(comp), footnotes=notes,
                 intervals="brackets", row_groups=_row_groups(comp),
                 rank_within_groups=comp.condition_key is not None)


#: footnote of a study comparison's tables; ``{key}`` is the condition tag, named as the
#: block labels name it (``k = 3``), so no tag doubles a word ("condition condition")
CONDITION_NOTE = ("Each block of rows is one condition, labelled \"{key} = …\": best and "
                  "second are marked within a block, paired differences use that "
                  "condition's records only, and no value is pooled over conditions (it "
                  "would measure no setting).")


def _per(comp: Comparison) -> str:
    return "" if comp.condition_key is None else f", by {comp.condition_key}"


def _group_values(models: list[ModelRun], key: str) -> list[str]:
    values: dict[str, None] = {}
    for m in models:
        values.update(dict.fromkeys(m.block.get("groups", {}).get(key, {})))
    return list(values)


def group_table(comp: Comparison, key: str) -> Table:
    """Models as rows; for every value of group ``key`` a column per metric (those with
    a value for some model), then Overall (the headline values). Best bold, second
    underlined, per column. The paper's Table 3 layout for Ancient-Bench media. A
    study comparison has one block of rows per condition (Overall: that condition's
    value), ranked within it."""
    cols = [Column("model", "Model", kind="text")]
    placed = [(label, m) for label, ms in blocks(comp) for m in ms]
    models = [m for _, m in placed]
    rows: list[dict[str, Cell | float | str | None]] = [{"model": m.name} for m in models]
    for value in _group_values(models, key):
        for s in comp.metrics:
            cells = [_cell(m.block.get("groups", {}).get(key, {}).get(value, {}).get(s.name),
                           False) for m in models]
            if all(c is None for c in cells):
                continue
            cols.append(Column(f"{value}\x1f{s.name}", s.label, decimals=s.decimals,
                               scale=s.scale, rank=_rank(s), group=value))
            for row, c, m in zip(rows, cells, models, strict=True):
                row[f"{value}\x1f{s.name}"] = _unranked(c, comp.not_ranked.get(m.name), None)
    lacks = _headline_lacks(comp)
    for s in comp.metrics:
        cols.append(Column(f"\x1foverall\x1f{s.name}", s.label, decimals=s.decimals,
                           scale=s.scale, rank=_rank(s), group="Overall"))
        for row, (label, m) in zip(rows, placed, strict=True):
            row[f"\x1foverall\x1f{s.name}"] = _unranked(
                _cell(m.block.get("metrics", {}).get(s.name), False),
                comp.not_ranked.get(m.name), _lacked(lacks, s, m.name, label))
    notes = ["Best bold, second underlined (per column), among the rows comparable in "
             "that column.", *ranking_notes(comp, lacks, rows)]
    if comp.condition_key is not None:
        notes.append(CONDITION_NOTE.format(key=comp.condition_key))
    return Table(cols, rows, title=f"{comp.benchmark}: per {key}" + _per(comp),
                 footnotes=notes, row_groups=_row_groups(comp),
                 rank_within_groups=comp.condition_key is not None)


#: Paired flags the table does not mark: "—" already says there is no interval.
_UNMARKED = ("n_0", "n_1", "one_cluster")
#: What a paired comparison's own flag means (the interval flags: FLAG_NOTES).
P_FLOOR_NOTE = ("the sign-flip test cannot give a p-value below {value} (2/2^U with U the "
                "pairs or clusters that differ: too few for a small p)")


def _flag_note(flag: str) -> str:
    """``flag: meaning`` for the paired table's footnote (docs/intervals.md)."""
    key, _, value = flag.partition(":")
    notes = {k.split(":", 1)[0]: v for k, v in FLAG_NOTES.items()}
    meaning = (P_FLOOR_NOTE.format(value=value) if key == "p_floor"
               else notes.get(key, "see docs/intervals.md"))
    return f"{flag}: {meaning}"


def paired_marks(p: PairedRow) -> tuple[str, str, list[str]]:
    """The marks of one paired difference, the same in ``compare.md`` and on the
    console: ``(difference mark, p-value mark, flags shown)``. The difference gets "†"
    when its interval is flagged (``constant_fallback``, ``few_clusters`` …), the
    p-value "†" for ``p_floor:<value>``; the flags that only say there is no interval
    (:data:`_UNMARKED`) are not shown ("—" says it)."""
    shown = [f for f in p.flags if f not in _UNMARKED]
    ci = "†" if any(not f.startswith("p_floor:") for f in shown) else ""
    floor = "†" if p.p_value is not None and any(f.startswith("p_floor:") for f in shown) \
        else ""
    return ci, floor, shown


def flags_note(present: Sequence[str], *, where: str = " (per row in paired.csv, column "
               "flags)") -> str:
    """The one-line explanation of "†" for the flags ``present`` (in order), e.g.
    ``"† flagged (…): constant_fallback: all values equal: …"``."""
    return f"† flagged{where}: " + "; ".join(_flag_note(f) for f in present) + "."


def paired_table(comp: Comparison) -> Table:
    """One row per compared model: per metric the difference ``model - reference`` with
    its 95 % interval, the p-value and the number of pairs. A difference whose interval
    is flagged gets "†" (without an interval " —"), a p-value with ``p_floor`` "†"; a
    footnote says what each flag present means (PairedRow.flags; paired.csv lists
    them per row)."""
    cols = [Column("model", "Model", kind="text")]
    for s in comp.metrics:
        cols += [Column(f"{s.name}:d", "Δ", decimals=s.decimals, scale=s.scale, group=s.label),
                 Column(f"{s.name}:p", "p", decimals=4, group=s.label),
                 Column(f"{s.name}:n", "n", decimals=0, group=s.label)]
    rows: dict[tuple[str | None, str], dict[str, Cell | float | str | None]] = {}
    present: dict[str, None] = {}
    for p in comp.paired:
        row = rows.setdefault((p.condition, p.model), {"model": p.model})
        ci_mark, p_mark, shown = paired_marks(p)
        present.update(dict.fromkeys(shown))
        no_ci = p.ci_low is None or p.ci_high is None
        row[f"{p.metric}:d"] = None if p.difference is None else Cell(
            p.difference, p.ci_low, p.ci_high, mark=(" —" if no_ci else "") + ci_mark)
        row[f"{p.metric}:p"] = Cell(p.p_value, mark=p_mark) if p_mark else p.p_value
        row[f"{p.metric}:n"] = p.n
    method = comp.paired[0].method if comp.paired else ""
    notes = [f"Records both models scored (same id); 95 % intervals in "
             f"brackets; two-sided p-values ({method}); macro metrics take "
             "the mean over groups of the per-group mean differences."]
    if present:
        notes.append(flags_note(list(present)))
    groups = None
    if comp.condition_key is not None:  # rows come condition by condition
        notes.append(CONDITION_NOTE.format(key=comp.condition_key))
        count: dict[str | None, int] = {}
        for condition, _ in rows:
            count[condition] = count.get(condition, 0) + 1
        groups = [(condition_label(comp, str(c)), n) for c, n in count.items()]
    return Table(cols, list(rows.values()), intervals="brackets", row_groups=groups,
                 title=f"Paired differences: model − {comp.reference}" + _per(comp),
                 footnotes=notes)


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


