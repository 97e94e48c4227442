"""The summary body and ``summary.md``: the paper-style tables, computed as the official
``summarize.py`` computes them (:mod:`chronicles_ocr.official_summary`).

Body keys: ``protocol`` (name and rules), ``results`` (per model: record counts per task
and state), ``official_summary`` (model -> sheet -> its rows, exactly the workbook's
cells: ×100, 1 decimal, its column names), ``official_columns`` (sheet -> columns:
``key``, ``group`` and ``name``, the workbook's two header rows), ``other_protocol``
(the same tables under the other protocol), ``protocol_differences`` (every cell where
the two differ) and ``notes``. The values with 95 %
intervals are the platform's envelope (``models.<model>.groups.script`` …), appended to
``summary.md`` by the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from chronicles_ocr.names import SCRIPTS, TASKS
from chronicles_ocr.official_summary import (
    AVERAGE,
    CLASSIFICATION,
    DETECTION,
    PARSING,
    RECOGNITION,
    SHEET_GROUPS,
    SHEET_SCRIPTS,
    SPOTTING,
    Score,
    Workbook,
    workbook,
)
from chronicles_ocr.protocol import Protocol
from heritage_eval.plugin import SampleRecord

OFFICIAL_KEY = {"classification": CLASSIFICATION, "parsing": PARSING,
                "recognition": RECOGNITION}
STATES = ("scored", "unparsed", "unscored", "error")
SHOWN_NAMES = ("Spotting", "Recognition", "Parsing", "Classification")


def _counted(r: SampleRecord, other: bool) -> tuple[float | None, float | None]:
    """``(score, detection)`` of a record as the summary counts it under the run's
    protocol, or (``other``) under the other one; ``(None, None)`` when left out."""
    if other:
        alt = r.details.get("other_protocol")
        if not isinstance(alt, dict) or alt.get("state") not in ("scored", "unparsed"):
            return None, None
        return alt.get("score"), alt.get("detection")
    if r.state.value not in ("scored", "unparsed"):
        return None, None
    return r.details.get("official_score"), r.scores.get("detection")


def record_scores(r: SampleRecord, other: bool = False) -> list[Score]:
    """``(font_type, key, value)`` of one record as the official summary counts it (a
    spotting record gives Detection, then Spotting; ``[]`` when left out); ``other``: as
    judged under the other protocol."""
    value, detection = _counted(r, other)
    if value is None:
        return []
    script = str(r.details.get("script_zh", ""))
    task = r.groups.get("task", "")
    if task == "spotting":
        out: list[Score] = []
        if detection is not None:
            out.append((script, DETECTION, float(detection)))
        return [*out, (script, SPOTTING, float(value))]
    if task in OFFICIAL_KEY:
        return [(script, OFFICIAL_KEY[task], float(value))]
    return []


def official_scores(records: Iterable[SampleRecord], other: bool = False) -> list[Score]:
    """:func:`record_scores` of every record, in record order."""
    return [s for r in records for s in record_scores(r, other)]


def count_state(row: dict[str, dict[str, int]], r: SampleRecord) -> None:
    """Count ``r`` into ``row`` (task -> state -> records), as :func:`counts` does."""
    task_row = row.setdefault(r.groups.get("task", ""), dict.fromkeys(STATES, 0))
    task_row[r.state.value] = task_row.get(r.state.value, 0) + 1


def counts(records: Iterable[SampleRecord]) -> dict[str, dict[str, int]]:
    """Task -> records per state (``scored``, ``unparsed``, ``unscored``, ``error``)."""
    out: dict[str, dict[str, int]] = {}
    for r in records:
        count_state(out, r)
    return out


def columns_json(book: Workbook) -> dict[str, list[dict[str, str]]]:
    """``official_columns``: sheet -> ``[{"key", "group", "name"}, …]``."""
    return {sheet: [{"key": c.key, "group": c.group, "name": c.name} for c in cols]
            for sheet, cols in book.columns.items()}


def aggregate_body(records: Sequence[SampleRecord], protocol: Protocol,
                   notes: Sequence[str] = ()) -> dict[str, Any]:
    """The summary body (module docstring) of the records of every model in them
    (``record.model``: the model spec of a run, the model tag of ``score``), the models
    scored together as the official summary scores its folder; ``notes``: remarks for
    ``summary.md`` (e.g. recorded rows outside the release). The streamed form is
    :class:`chronicles_ocr.summary_sink.SummarySink`."""
    by_model: dict[str, list[SampleRecord]] = {}
    for r in records:
        by_model.setdefault(r.model, []).append(r)
    book = workbook({m: official_scores(rs) for m, rs in by_model.items()})
    alt = workbook({m: official_scores(rs, other=True) for m, rs in by_model.items()})
    return assemble_body(protocol, {m: counts(rs) for m, rs in by_model.items()},
                         book, alt, notes)


def assemble_body(protocol: Protocol, model_counts: Mapping[str, dict[str, dict[str, int]]],
                  book: Workbook, alt: Workbook, notes: Sequence[str]) -> dict[str, Any]:
    """The body's dict from its parts: ``model_counts`` (model -> :func:`counts`, in order
    of the models' first record), the workbooks under the run's protocol (``book``) and
    the other one (``alt``), and ``notes``."""
    other = "corrected" if protocol.name == "official" else "official"
    models = sorted(model_counts)
    return {"protocol": protocol.as_dict(),
            "results": [{"model": m, "counts": c} for m, c in model_counts.items()],
            "official_summary": {m: book.for_model(m) for m in models},
            "official_columns": columns_json(book),
            "other_protocol": {"name": other,
                               "official_summary": {m: alt.for_model(m) for m in models}},
            "protocol_differences": differences(book, alt, protocol.name, other),
            "notes": list(notes)}


def unscored_count(summary: Mapping[str, Any]) -> int:
    """Records left out of the scores for an unreadable answer (state ``unscored``: the
    spotting answers without a box list, under the official protocol), summed over the
    body's ``results[].counts`` (0 when absent)."""
    return sum(int(row.get("unscored", 0))
               for entry in summary.get("results") or []
               for row in (entry.get("counts") or {}).values())


def differences(book: Workbook, alt: Workbook, name: str, other: str
                ) -> list[dict[str, Any]]:
    """Every cell of the two sheets whose value differs between the protocols:
    ``{"model", "sheet", "column", NAME: value, OTHER: value}``."""
    out = []
    for sheet, rows in book.rows.items():
        others = {r["模型名称"]: r for r in alt.rows.get(sheet, [])}
        for row in rows:
            there = others.get(row["模型名称"], {})
            for column, value in row.items():
                if column != "模型名称" and there.get(column) != value:
                    out.append({"model": row["模型名称"], "sheet": sheet, "column": column,
                                name: value, other: there.get(column)})
    return out


def differences_table(summary: Mapping[str, Any]) -> list[str]:
    """``summary.md``'s table of the cells where the protocols differ."""
    name = (summary.get("protocol") or {}).get("name", "official")
    other = (summary.get("other_protocol") or {}).get("name", "")
    rows = [d for d in summary.get("protocol_differences") or []
            if d.get("sheet") == SHEET_GROUPS or "/Average" not in str(d.get("column"))]
    if not other:
        return []
    head = [f"\n## Where `{name}` and `{other}` differ\n"]
    if not rows:
        return [*head, "No cell of the official tables differs.\n"]
    lines = [f"| Model | Sheet | Column | {name} | {other} |", "|---|---|---|---:|---:|"]
    lines += [f"| `{d['model']}` | {d['sheet']} | {d['column']} | {_v(d.get(name))} | "
              f"{_v(d.get(other))} |" for d in rows]
    return [*head, "Cells of the official tables (×100) that the other protocol changes "
            "(docs/chronicles-ocr.md lists the rules).\n", *lines]


def _v(value: Any) -> str:
    return "—" if value is None else f"{float(value):.1f}"


def group_table(rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """The per-group table (sheet 评分分析): a row per model."""
    head = ("| Model | Ancient Avg | Spotting | Recognition | Parsing | Classification "
            "| Modern Avg | Parsing | Classification |")
    keys = [f"平均分_古代/{n}" for n in (AVERAGE, *SHOWN_NAMES)] + \
        [f"平均分_近代/{n}" for n in (AVERAGE, *SHOWN_NAMES[2:])]
    lines = [head, "|---|" + "---:|" * 8]
    for model, sheet in rows.items():
        for row in sheet:
            lines.append(f"| `{model}` | " + " | ".join(_v(row.get(k)) for k in keys) + " |")
    return lines


def script_table(model: str, row: Mapping[str, Any]) -> list[str]:
    """The per-script table (sheet 按字体分析) of one model: a row per script."""
    lines = [f"Model `{model}`:\n", "| Script | Avg | Spotting | Recognition | Parsing "
             "| Classification |", "|---|---:|---:|---:|---:|---:|"]
    names = (AVERAGE, *SHOWN_NAMES)
    for script in SCRIPTS:
        if f"{script.zh}/{AVERAGE}" not in row:
            continue
        lines.append(f"| {script.label} ({script.zh}) | "
                     + " | ".join(_v(row.get(f"{script.zh}/{n}")) for n in names) + " |")
    lines.append("| **Mean over scripts** | "
                 + " | ".join(_v(row.get(f"平均分/{n}")) for n in names) + " |")
    return lines


def counts_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Records per task and state, per model."""
    lines = ["| Model | Task | Scored | Unparsed (0) | Left out (unscored) | Errors |",
             "|---|---|---:|---:|---:|---:|"]
    for entry in results:
        for task in (*(t.id for t in TASKS), "(none)"):
            row = entry.get("counts", {}).get(task)
            if row:
                lines.append(f"| `{entry['model']}` | {task} | {row['scored']} | "
                             f"{row['unparsed']} | {row['unscored']} | {row['error']} |")
    return lines


def excluded_section(summary: Mapping[str, Any]) -> list[str]:
    """``summary.md``'s list of the records left out of the scores (data errors, failed
    requests, images without a recorded answer …) per model and reason, with the model
    failures (summary keys ``excluded`` and ``model_failures``, which the platform
    counts); empty when nothing was left out and nothing failed."""
    excluded: Mapping[str, Any] = summary.get("excluded") or {}
    failures: Mapping[str, Any] = summary.get("model_failures") or {}
    lines: list[str] = []
    for model in dict.fromkeys([*excluded, *failures]):
        block = excluded.get(model) or {}
        failed = failures.get(model) or {}
        kinds = ", ".join(f"{k} {n}" for k, n in (failed.get("kinds") or {}).items())
        if not block.get("n") and not kinds:
            continue
        lines.append(f"\nModel `{model}`: {block.get('n', 0)} record(s) left out for data, "
                     "network or server errors" + (f"; model failures: {kinds} (policy "
                                                  f"{failed.get('policy', 'wrong')})"
                                                  if kinds else "") + ".\n")
        lines += [f"- {n} × {reason}" for reason, n in block.get("reasons") or []]
    if not lines:
        return []
    return ["\n## Left out of the scores\n", "Errors are never scored; each names "
            "`file:line` and the field for a data error (docs/chronicles-ocr.md, \"Errors "
            "and exit statuses\"). Every record is in `samples.jsonl`.", *lines]


def render_markdown(summary: Mapping[str, Any]) -> str:
    """``summary.md``'s body: the two official tables and the record counts."""
    protocol = (summary.get("protocol") or {}).get("name", "official")
    official: Mapping[str, Any] = summary.get("official_summary") or {}
    parts = ["# Chronicles-OCR\n",
             f"Protocol `{protocol}` (docs/chronicles-ocr.md). Scores ×100 as the "
             "official summary prints them: per-script means over images, then the "
             "mean over the scripts of a group.\n",
             "## Per group (official sheet 评分分析)\n",
             *group_table({m: s.get(SHEET_GROUPS, []) for m, s in official.items()}),
             "\n## Per script (official sheet 按字体分析)\n"]
    for model, sheets in official.items():
        for row in sheets.get(SHEET_SCRIPTS, []):
            parts += [*script_table(model, row), ""]
    parts += ["## Records\n", "Unparsed answers count 0; *left out* are spotting answers "
              "without a readable box list, which the official summary does not count "
              "(protocol official).\n", *counts_table(summary.get("results") or [])]
    parts += differences_table(summary)
    parts += excluded_section(summary)
    notes = summary.get("notes") or []
    if notes:
        parts += ["", "## Notes\n", *(f"- {n}" for n in notes)]
    return "\n".join(parts) + "\n"
