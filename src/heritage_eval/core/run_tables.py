"""Tables of one run folder's summary envelope: models × (metric per group + headline),
with 95 % intervals, written beside ``summary.md`` as Markdown, CSV and LaTeX.

The envelope (``core/summary.py``) holds every metric's estimate per model and group, so
these tables look the same for every benchmark: for Ancient-Bench the columns are the
media (NED and F1 each) and *Overall*, as in the paper's Table 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heritage_eval.core.tables import Cell, Column, Table, write_table

#: Footnotes of the marks :func:`_cell` sets (docs/intervals.md explains the flags).
NO_INTERVAL_NOTE = "— no interval (one observation, or one cluster)."
FLAG_NOTE = ("† flagged (few clusters, a one-sample group, constant data, …): see the "
             "estimate's flags in summary.json.")


def _cell(est: Mapping[str, Any] | None) -> Cell:
    """The table cell of a summary estimate: its value and interval; a value without an
    interval is marked "—", a flagged estimate "†" (besides n_1, which "—" says)."""
    if not est or est.get("value") is None:
        return Cell(None)
    lo, hi = est.get("ci_low"), est.get("ci_high")
    flags = [f for f in est.get("flags") or () if f not in ("n_1", "one_cluster")]
    mark = (" —" if lo is None or hi is None else "") + ("†" if flags else "")
    return Cell(float(est["value"]), lo, hi, mark=mark)


def mark_notes(rows: list[dict[str, Cell | float | str | None]]) -> list[str]:
    """The footnotes for the marks that ``rows`` show: "—" (:data:`NO_INTERVAL_NOTE`) and
    "†" (:data:`FLAG_NOTE`), each only where a cell with a value carries it — so a table
    whose estimates are all empty, or a table whose flagged row was left out, says
    nothing about flags."""
    shown = [c for row in rows for c in row.values()
             if isinstance(c, Cell) and c.value is not None and c.mark]
    notes = []
    if any("—" in c.mark for c in shown):
        notes.append(NO_INTERVAL_NOTE)
    if any("†" in c.mark for c in shown):
        notes.append(FLAG_NOTE)
    return notes


#: Why a model may have no estimate at all, when the run turned no metric off (said by
#: :func:`nothing_scored` and :func:`empty_row_note`; no warning is promised).
NOTHING_SCORED_WHY = "(no answer was scored: every sample ended as error or unscored)"

#: What stands for a model's interval table when no metric has a value and the run's
#: summary is not at hand (:func:`nothing_scored` names the run's own causes).
NOTHING_SCORED = f"no metric scored any sample {NOTHING_SCORED_WHY}: no interval to show."


def nothing_scored_why(summary: Mapping[str, Any] | None = None) -> str:
    """Why no metric has a value, naming only causes that exist for the run: the metrics
    its benchmark recorded as turned off (the body's ``metrics_off``, e.g. HCSU
    description's ``"BERTScore (--no-bertscore)"``), then that no answer was scored;
    :data:`NOTHING_SCORED_WHY` when the run turned none off (or ``summary`` is None)."""
    off = [str(m) for m in (summary or {}).get("metrics_off") or ()]
    if not off:
        return NOTHING_SCORED_WHY
    return f"(turned off in this run: {'; '.join(off)}; or no answer was scored)"


def nothing_scored(summary: Mapping[str, Any] | None = None) -> str:
    """The line that stands for a model's interval table when no metric has a value
    (console headline, ``summary.md``, the HCSU study headline), with
    :func:`nothing_scored_why`."""
    return f"no metric scored any sample {nothing_scored_why(summary)}: no interval to show."


#: The first footnote of :func:`group_table` when some cell shows a value.
VALUES_NOTE = "Values with 95 % intervals (± half-width; docs/intervals.md)."


def has_values(table: Table) -> bool:
    """Whether any estimate cell of ``table`` holds a value (an all-empty interval table
    is replaced by :data:`NOTHING_SCORED` where it is printed)."""
    return any(row_has_value(row) for row in table.rows)


def row_has_value(row: Mapping[str, Cell | float | str | None]) -> bool:
    """Whether any estimate cell (a :class:`Cell`) of ``row`` holds a value; plain
    numbers such as the ``n`` column do not count."""
    return any(isinstance(c, Cell) and c.value is not None for c in row.values())


def empty_row_note(name: str, n_records: int | float | None = None,
                   why: str = NOTHING_SCORED_WHY) -> str:
    """The footnote of a table row whose estimates are all empty ("—" in every cell):
    ``name`` (a model) and, when given, its record count, so that the row's ``n`` and
    its dashes agree; ``why``: :func:`nothing_scored_why` of the run."""
    of = "any sample" if n_records is None else f"any of its {int(n_records)} record(s)"
    return f"{name}: no metric scored {of} {why}: no metric value to show."


def metric_specs(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The metric specs recorded in the envelope (``statistics.metric_specs``)."""
    return list(summary.get("statistics", {}).get("metric_specs", []))


def group_table(summary: Mapping[str, Any], group_key: str | None = None,
                intervals: str = "pm") -> Table:
    """Models (rows) × for each group value of ``group_key`` each metric, then the
    headline value of each metric (columns); ``group_key=None``: headline only.

    Column headers are grouped by group value (LaTeX ``\\multicolumn``). Values print in
    each metric's display scale and decimals; best bold, second underlined; ``n`` is the
    model's record count (``n_records``).

    Footnotes, in order: "PARTIAL" for a ``--limit`` run; :data:`VALUES_NOTE` only when
    some cell shows a value; the marks the rows show (:func:`mark_notes`); and one line
    per model whose row has no value (:func:`empty_row_note`: its n records, none
    scored). Such a row is still written (every model keeps its row in ``.md`` / ``.csv``
    / ``.tex``, so a script reading the files finds it), but no note promises intervals
    that no cell shows."""
    specs = metric_specs(summary)
    models: Mapping[str, Any] = summary.get("models", {})
    values: list[str] = []
    if group_key is not None:
        for block in models.values():
            for v in block.get("groups", {}).get(group_key, {}):
                if v not in values:
                    values.append(v)
    columns = [Column("model", "Model", kind="text")]
    for v in values:
        columns += [Column(f"{v}:{s['name']}", s["label"], decimals=int(s["decimals"]),
                           scale=float(s["scale"]), group=v,
                           rank="higher" if s["higher_is_better"] else "lower")
                    for s in specs]
    overall = "Overall" if values else None
    columns += [Column(f"overall:{s['name']}", s["label"], decimals=int(s["decimals"]),
                       scale=float(s["scale"]), group=overall,
                       rank="higher" if s["higher_is_better"] else "lower") for s in specs]
    columns.append(Column("n", "n", decimals=0))
    rows: list[dict[str, Cell | float | str | None]] = []
    for model, block in models.items():
        row: dict[str, Cell | float | str | None] = {"model": model,
                                                     "n": float(block.get("n_records", 0))}
        groups = block.get("groups", {}).get(group_key, {}) if group_key else {}
        for v in values:
            for s in specs:
                row[f"{v}:{s['name']}"] = _cell(groups.get(v, {}).get(s["name"]))
        for s in specs:
            row[f"overall:{s['name']}"] = _cell(block.get("metrics", {}).get(s["name"]))
        rows.append(row)
    title = f"{summary.get('benchmark', '')} by {group_key}" if group_key else \
        str(summary.get("benchmark", ""))
    notes = [VALUES_NOTE] if any(row_has_value(r) for r in rows) else []
    notes += mark_notes(rows)
    notes += [empty_row_note(str(r["model"]), r["n"] if isinstance(r["n"], float) else None,
                             nothing_scored_why(summary))
              for r in rows if not row_has_value(r)]
    if summary.get("partial"):
        notes.insert(0, "PARTIAL run (--limit): not comparable with a full run.")
    return Table(columns=columns, rows=rows, title=title, footnotes=notes,
                 intervals="pm" if intervals == "pm" else "brackets")


def model_table(summary: Mapping[str, Any], model: str, group_key: str | None) -> Table:
    """One model: group values of ``group_key`` (rows, then *Overall*) × each metric with
    its 95 % interval in brackets, and n: the samples the estimates count (the largest
    ``n`` of the row's metrics; error rows are not counted, in *Overall* as in the groups,
    so the groups' n add up to Overall's)."""
    specs = metric_specs(summary)
    block = summary.get("models", {}).get(model, {})
    groups = block.get("groups", {}).get(group_key, {}) if group_key else {}
    columns = [Column("group", group_key or "", kind="text")]
    columns += [Column(s["name"], s["label"], decimals=int(s["decimals"]),
                       scale=float(s["scale"])) for s in specs]
    columns.append(Column("n", "n", decimals=0))
    rows: list[dict[str, Cell | float | str | None]] = []
    for value, ests in groups.items():
        row: dict[str, Cell | float | str | None] = {"group": value}
        row.update({s["name"]: _cell(ests.get(s["name"])) for s in specs})
        row["n"] = float(max((e.get("n", 0) for e in ests.values()), default=0))
        rows.append(row)
    overall: dict[str, Cell | float | str | None] = {"group": "Overall"}
    overall.update({s["name"]: _cell(block.get("metrics", {}).get(s["name"])) for s in specs})
    overall["n"] = float(max((e.get("n", 0) for e in block.get("metrics", {}).values()),
                             default=0))
    rows.append(overall)
    return Table(columns=columns, rows=rows, title=f"{model}", intervals="brackets",
                 footnotes=mark_notes(rows))


def overall_note(summary: Mapping[str, Any], model: str) -> str | None:
    """What each column of ``model``'s *Overall* row is, from the recorded metric specs
    (``macro_over``) and estimates, for the footnote of :func:`model_table` where it is
    printed: a macro metric's Overall is the unweighted mean of its groups' values, its
    interval combining the groups' standard errors (Welch-Satterthwaite); any other is
    pooled over the answered records, its interval over those records (cluster-robust
    when the metric is clustered). ``None`` when the Overall row shows no value."""
    block = summary.get("models", {}).get(model, {})
    metrics = block.get("metrics", {})
    macro: dict[str, list[str]] = {}  # description -> the labels it describes
    pooled: list[tuple[str, str | None]] = []
    for s in metric_specs(summary):
        est = metrics.get(s["name"]) or {}
        if est.get("value") is None:
            continue
        key = s.get("macro_over")
        if key:
            n_groups = sum(1 for ests in block.get("groups", {}).get(key, {}).values()
                           if (ests.get(s["name"]) or {}).get("value") is not None)
            macro.setdefault(f"unweighted mean of the {n_groups} {key} values (macro; "
                             f"the interval combines the {key} groups' standard errors, "
                             "Welch-Satterthwaite)", []).append(str(s["label"]))
        else:
            pooled.append((f"{s['label']} ({est.get('n')} records)", s.get("cluster")))
    parts = [f"{', '.join(labels)} = {what}" for what, labels in macro.items()]
    if pooled:
        labels = ", ".join(label for label, _ in pooled)
        clusters = sorted({c for _, c in pooled if c})
        by = f", cluster-robust by {', '.join(clusters)}" if clusters else ""
        parts.append(f"{labels} = pooled over the answered records, each record weighing "
                     f"the same (its interval is over those records{by})")
    return ("Overall: " + "; ".join(parts) + ".") if parts else None


def write_run_tables(summary: Mapping[str, Any], folder: Path) -> list[Path]:
    """Write ``tables/<group key>.{md,csv,tex}`` (and ``tables/overall.*``) for the
    envelope's group keys; returns the paths written. Every file is written even when no
    model has a value (its footnotes then say so: :func:`group_table`)."""
    out: list[Path] = []
    keys: list[str | None] = [None, *summary.get("group_keys", [])]
    for key in keys:
        table = group_table(summary, key)
        out += write_table(table, folder / "tables" / (key or "overall"))
    return out
