"""The two sheets of the official ``summarize.py`` workbook, computed from per-image
scores (the rules of ``Opensource/summarize.py``, written here from its behaviour).

Input, per model: the judged scores in file order as ``(font_type, key, value)``, where
``key`` is an official task key — ``字体分类``, ``字符提取``, ``单字识别``, or, for the
spotting judge, two keys ``字符检测_Detection`` and ``字符检测_Spotting`` (an image whose
spotting judge has no F1, ``no_extract``, gives neither). Then:

1. per script and key, the mean over images;
2. sheet ``评分分析`` (per group): for the ancient group (甲骨文 金文 篆书) and the modern
   group (every other script name), per shown task the mean of the per-script means of
   the group's scripts; ``Average`` = the mean of those task means;
3. sheet ``按字体分析`` (per script): ``平均分`` block — per shown task the mean of the
   per-script means over every script that has the task, ``Average`` = the mean of all
   (script, task) means; then per script its task means and their mean.

Shown tasks, in order: Spotting, Recognition, Parsing, Classification (Detection is
computed but not shown); the modern group and modern scripts show Parsing and
Classification only. Which tasks and scripts get columns is decided over *all* models
scored together (a task or script no model has gets no column). Values are ×100 rounded
to 1 decimal (Python ``round``); a cell without a value is empty (``None`` here). Models
are sorted by name.

Rows are keyed as the workbook reads back: ``"<header row 1>/<header row 2>"`` (e.g.
``"平均分_古代/Spotting"``, ``"甲骨文/Average"``), and ``"模型名称"`` for the model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SHEET_GROUPS = "评分分析"
SHEET_SCRIPTS = "按字体分析"
MODEL_COLUMN = "模型名称"
AVERAGE = "Average"
DETECTION, SPOTTING = "字符检测_Detection", "字符检测_Spotting"
RECOGNITION, PARSING, CLASSIFICATION = "单字识别", "字符提取", "字体分类"
DISPLAY = {CLASSIFICATION: "Classification", PARSING: "Parsing", DETECTION: "Detection",
           SPOTTING: "Spotting", RECOGNITION: "Recognition"}
SHOWN = (SPOTTING, RECOGNITION, PARSING, CLASSIFICATION)
ANCIENT_KEYS = (CLASSIFICATION, PARSING, DETECTION, SPOTTING, RECOGNITION)
MODERN_KEYS = (CLASSIFICATION, PARSING)
SCRIPT_ORDER = ("甲骨文", "金文", "篆书", "隶书", "楷书", "行书", "草书")
ANCIENT = frozenset(SCRIPT_ORDER[:3])

Score = tuple[str, str, float]


@dataclass(frozen=True)
class Column:
    """One column: ``key`` (the official table's internal column name), ``group`` (its
    first header row) and ``name`` (its second header row)."""

    key: str
    group: str
    name: str

    @property
    def label(self) -> str:
        """The column's key in the rows: ``group/name`` (``name`` when they are equal)."""
        return self.name if self.group == self.name else f"{self.group}/{self.name}"


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def cell(value: float | None) -> float | None:
    """A value as the workbook shows it: ×100, 1 decimal; ``None`` for an empty cell."""
    return None if value is None else round(float(value) * 100, 1)


def shown(keys: Iterable[str]) -> list[str]:
    """``keys`` that are shown, in the shown order."""
    present = set(keys)
    return [k for k in SHOWN if k in present]


def allowed(script: str, keys: Iterable[str]) -> list[str]:
    """The shown keys of ``script`` among ``keys``."""
    own = ANCIENT_KEYS if script in ANCIENT else MODERN_KEYS
    return shown(k for k in keys if k in own)


def per_script(scores: Iterable[Score]) -> dict[str, dict[str, float | None]]:
    """Script -> key -> mean over images (scripts and keys in order of first score)."""
    lists: dict[str, dict[str, list[float]]] = {}
    for script, key, value in scores:
        lists.setdefault(script, {}).setdefault(key, []).append(float(value))
    return {s: {k: _mean(v) for k, v in keys.items()} for s, keys in lists.items()}


def _group_row(tag: str, means: Mapping[str, Mapping[str, float | None]],
               scripts: Sequence[str]) -> dict[str, Any]:
    row: dict[str, Any] = {MODEL_COLUMN: tag}
    for label, ancient, keys in (("古代", True, shown(ANCIENT_KEYS)),
                                 ("近代", False, shown(MODERN_KEYS))):
        found: dict[str, list[float]] = {}
        for script in scripts:
            if (script in ANCIENT) != ancient:
                continue
            for key, value in means.get(script, {}).items():
                if key in keys and value is not None:
                    found.setdefault(key, []).append(value)
        task_means = {k: _mean(v) for k, v in found.items()}
        present = [v for k in keys if (v := task_means.get(k)) is not None]
        row[f"平均分{label}_avg"] = cell(_mean(present))
        for key in keys:
            row[f"平均分{label}_{key}"] = cell(task_means.get(key))
    return row


def group_columns() -> list[Column]:
    """The columns of sheet ``评分分析``."""
    cols = [Column(MODEL_COLUMN, MODEL_COLUMN, MODEL_COLUMN)]
    for label, keys in (("古代", shown(ANCIENT_KEYS)), ("近代", shown(MODERN_KEYS))):
        cols.append(Column(f"平均分{label}_avg", f"平均分_{label}", AVERAGE))
        cols += [Column(f"平均分{label}_{k}", f"平均分_{label}", DISPLAY[k]) for k in keys]
    return cols


def _script_row(tag: str, means: Mapping[str, Mapping[str, float | None]],
                scripts: Sequence[str], all_keys: Sequence[str]) -> dict[str, Any]:
    row: dict[str, Any] = {MODEL_COLUMN: tag}
    visible = shown(k for k in all_keys if k in ANCIENT_KEYS or k in MODERN_KEYS)
    by_task: dict[str, list[float]] = {}
    everything: list[float] = []
    for script, keys in means.items():
        ok = set(allowed(script, sorted(all_keys)))
        for key, value in keys.items():
            if key.startswith("_") or key not in ok or value is None:
                continue
            by_task.setdefault(key, []).append(value)
            everything.append(value)
    row["平均分_avg"] = cell(_mean(everything))
    for key in visible:
        row[f"平均分_{key}"] = cell(_mean(by_task.get(key, [])))
    for script in scripts:
        keys = means.get(script, {})
        own = allowed(script, sorted(all_keys))
        row[f"{script}_avg"] = cell(_mean([v for k, v in keys.items()
                                           if k in own and v is not None]))
        for key in own:
            value = keys.get(key)
            row[f"{script}_{key}"] = cell(value)
    return row


def script_columns(scripts: Sequence[str], all_keys: Sequence[str]) -> list[Column]:
    """The columns of sheet ``按字体分析``."""
    visible = shown(k for k in all_keys if k in ANCIENT_KEYS or k in MODERN_KEYS)
    cols = [Column(MODEL_COLUMN, MODEL_COLUMN, MODEL_COLUMN),
            Column("平均分_avg", "平均分", AVERAGE)]
    cols += [Column(f"平均分_{k}", "平均分", DISPLAY[k]) for k in visible]
    for script in scripts:
        cols.append(Column(f"{script}_avg", script, AVERAGE))
        cols += [Column(f"{script}_{k}", script, DISPLAY[k])
                 for k in allowed(script, sorted(all_keys))]
    return cols


@dataclass(frozen=True)
class Workbook:
    """Both sheets: ``rows[sheet]`` (one row per model, sorted by name; each row keyed
    by :attr:`Column.label`, every column present) and ``columns[sheet]``."""

    rows: dict[str, list[dict[str, Any]]]
    columns: dict[str, list[Column]]

    def for_model(self, tag: str) -> dict[str, list[dict[str, Any]]]:
        """``{sheet: [the model's row]}``."""
        return {sheet: [r for r in rows if r[MODEL_COLUMN] == tag]
                for sheet, rows in self.rows.items()}


def workbook(models: Mapping[str, Iterable[Score]]) -> Workbook:
    """Both sheets for ``models`` (tag -> scores) scored together (module docstring)."""
    return workbook_of_means({tag: per_script(scores) for tag, scores in models.items()})


def workbook_of_means(means: Mapping[str, Mapping[str, Mapping[str, float | None]]]
                      ) -> Workbook:
    """Both sheets from each model's :func:`per_script` means (tag -> script -> key ->
    mean, in order of first score): step 2 and 3 of the module docstring, for a caller
    that folded the means itself (:mod:`chronicles_ocr.summary_sink`)."""
    all_keys = sorted({k for m in means.values() for keys in m.values() for k in keys})
    fonts = {s for m in means.values() for s in m}
    scripts = [s for s in SCRIPT_ORDER if s in fonts] + sorted(fonts - set(SCRIPT_ORDER))
    tags = sorted(means)

    def complete(row: dict[str, Any], cols: list[Column]) -> dict[str, Any]:
        return {c.label: row.get(c.key) for c in cols}

    g_cols, s_cols = group_columns(), script_columns(scripts, all_keys)
    rows = {SHEET_GROUPS: [complete(_group_row(t, means[t], scripts), g_cols) for t in tags],
            SHEET_SCRIPTS: ([complete(_script_row(t, means[t], scripts, all_keys), s_cols)
                             for t in tags] if scripts else [])}
    return Workbook(rows=rows, columns={SHEET_GROUPS: g_cols, SHEET_SCRIPTS: s_cols})
