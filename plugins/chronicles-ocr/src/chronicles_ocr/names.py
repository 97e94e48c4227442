"""The benchmark's vocabulary: the seven scripts, their two groups, the four tasks.

The official release names scripts by their Chinese names (``font_type`` in
``Chronicles_OCR.jsonl``, the folders under ``images/``) and tasks by Chinese keys (the
keys of ``infer_results`` / ``judge_results`` in its ``results.jsonl`` files). Records
here use short English ids; both spellings are accepted wherever a user names one.

Which tasks an image gets follows the official ``infer.py`` / ``judge.py``
(``tasks_for_row``): the three ancient scripts get all four tasks, the four modern ones
only parsing and classification.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Script:
    """One script: ``id`` (records, options), ``zh`` (the release's ``font_type``),
    ``label`` (tables), ``group`` (``"ancient"`` or ``"modern"``)."""

    id: str
    zh: str
    label: str
    group: str


#: The seven scripts in the paper's (chronological) order.
SCRIPTS: tuple[Script, ...] = (
    Script("oracle_bone", "甲骨文", "Oracle Bone", "ancient"),
    Script("bronze", "金文", "Bronze", "ancient"),
    Script("seal", "篆书", "Seal", "ancient"),
    Script("clerical", "隶书", "Clerical", "modern"),
    Script("regular", "楷书", "Regular", "modern"),
    Script("running", "行书", "Running", "modern"),
    Script("cursive", "草书", "Cursive", "modern"),
)
BY_ZH = {s.zh: s for s in SCRIPTS}
BY_ID = {s.id: s for s in SCRIPTS}
SCRIPT_IDS = tuple(s.id for s in SCRIPTS)
#: every spelling a user may give for a script (id or Chinese name)
SCRIPT_CHOICES = SCRIPT_IDS + tuple(s.zh for s in SCRIPTS)
GROUPS = ("ancient", "modern")


@dataclass(frozen=True)
class Task:
    """One task: ``id`` (records, options), ``zh`` (the official results key), ``label``
    (tables, as the official summary names it), ``metric`` (the score's name in
    records), ``metric_label`` (its column header)."""

    id: str
    zh: str
    label: str
    metric: str
    metric_label: str


#: The tasks in the order the paper and the official summary show them.
TASKS: tuple[Task, ...] = (
    Task("spotting", "字符检测", "Spotting", "spotting", "Spotting F1"),
    Task("recognition", "单字识别", "Recognition", "recognition", "Recognition Acc"),
    Task("parsing", "字符提取", "Parsing", "parsing", "Parsing 1-NED"),
    Task("classification", "字体分类", "Classification", "classification",
         "Classification Acc"),
)
TASK_BY_ID = {t.id: t for t in TASKS}
TASK_BY_ZH = {t.zh: t for t in TASKS}
TASK_IDS = tuple(t.id for t in TASKS)
TASK_CHOICES = TASK_IDS + tuple(t.zh for t in TASKS)
#: the spotting judge's diagnostic (boxes only), a second score of spotting records
DETECTION_METRIC = "detection"
#: the tasks of an ancient / a modern image, in the official pipeline's order (infer.py
#: ``ALL_TASKS``: classification, parsing, spotting, recognition)
ANCIENT_TASKS = ("classification", "parsing", "spotting", "recognition")
MODERN_TASKS = ("classification", "parsing")


def script_of(name: str) -> Script | None:
    """The script a user or the release names (id or Chinese name, surrounding space
    ignored, as the official ``font_type`` is stripped), or ``None``."""
    key = name.strip()
    return BY_ID.get(key) or BY_ZH.get(key)


def task_of(name: str) -> Task | None:
    """The task of an id or an official Chinese key, or ``None``."""
    key = name.strip()
    return TASK_BY_ID.get(key) or TASK_BY_ZH.get(key)


def tasks_for(script: Script) -> tuple[str, ...]:
    """Task ids an image of ``script`` gets, in the official order (``tasks_for_row``)."""
    return ANCIENT_TASKS if script.group == "ancient" else MODERN_TASKS
