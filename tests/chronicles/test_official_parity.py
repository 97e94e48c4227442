"""Parity of ``heritage-eval score chronicles-ocr`` with the official judge and summary.

Reference: the official ``judge.py`` and ``summarize.py`` (github.com/VirtualLUOUCAS/
Chronicles-OCR @ 23a37c6, unmodified) run on the bundled demo set and the probe
predictions; outputs stored in ``fixtures/official`` by ``make_reference.sh`` (see
``fixtures/README.md`` for the commands, versions and the probe rules).

Contract assumed of the plug-in (installed with ``pip install -e plugins/chronicles-ocr``):

1. ``heritage-eval score chronicles-ocr --data DEMO --predictions PRED --out OUT``
   exits 0, where ``DEMO`` is the folder holding ``Chronicles_OCR.jsonl`` (image paths
   relative to it) and ``PRED`` is the official infer layout
   ``PRED/<model_tag>/results.jsonl`` with several model tags (one of them an empty file).
   Every ``<model_tag>`` folder is scored, as ``judge.py`` / ``summarize.py`` do when given
   no ``--models``; each prediction's stored ``extract`` is scored (a record without one
   scores 0 with error ``no_extract``), and 单字识别's target is the record's ``gt_char``.
2. ``OUT/summary.json`` has a key ``"official_summary"`` holding what ``summarize.py``'s
   workbook holds, in the structure of ``fixtures/official/summary.json``:
   ``{sheet name: [one row dict per model tag, sorted by tag]}`` with the sheets
   ``"评分分析"`` and ``"按字体分析"`` (the per-model shape ``{model tag: {sheet name: row
   dict}}`` is accepted too). A row's keys are ``"<header row 1>/<header row 2>"``
   (``"平均分_古代/Spotting"``, ``"甲骨文/Recognition"`` …; first key ``"模型名称"``, whose
   value is the tag) in the sheet's column order; values are ``round(score * 100, 1)`` or
   ``None`` where the official sheet has an empty cell. Every tag's rows must be equal to
   the official ones, keys in order, and the tags scored must be exactly the probe tags.
3. ``OUT/samples.jsonl`` has one record per (model tag, judged image, task), i.e. per
   entry of ``judge_results`` in the official judge output, with ``record["model"]`` the
   model tag, ``record["details"]["image_path"]`` the ground truth's ``image_path`` and
   ``record["groups"]["task"]`` the official task name (字体分类 字符提取 字符检测 单字识别;
   the English names Classification / Parsing / Spotting / Recognition are accepted
   too), and ``record["details"]["official_score"]``: the judge's ``score`` (its
   ``score.score``, or the bare ``0.0`` the judge writes when it raises) within 1e-9.
   Records of images the judge does not score (absent from a model's predictions) may
   exist but must not carry a non-null ``official_score``. Optional:
   ``details["official_detection_f1"]`` (字符检测 only), when present, equals the judge's
   ``detection_f1`` (``None`` when the judge gives none).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEMO = REPO / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"
PRED = HERE / "fixtures" / "predictions"
OFFICIAL = HERE / "fixtures" / "official"
TAGS = sorted(p.name for p in PRED.iterdir() if p.is_dir())
TASK_NAMES = {"字体分类": "classification", "字符提取": "parsing", "字符检测": "spotting",
              "单字识别": "recognition"}
CLI = [str(Path(sys.executable).with_name("heritage-eval"))]


def _plugin_available() -> bool:
    if not Path(CLI[0]).exists():
        return False
    done = subprocess.run([*CLI, "score", "chronicles-ocr", "--help"], capture_output=True,
                          text=True, check=False)
    return done.returncode == 0


pytestmark = pytest.mark.skipif(
    not _plugin_available(),
    reason="`heritage-eval score chronicles-ocr` is not available "
           "(install the plug-in: .venv/bin/pip install -e plugins/chronicles-ocr)")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plug-in's run folder for the demo set and every probe tag."""
    out = tmp_path_factory.mktemp("chronicles") / "run"
    done = subprocess.run([*CLI, "score", "chronicles-ocr", "--data", str(DEMO),
                           "--predictions", str(PRED), "--out", str(out)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _official_judgements() -> dict[tuple[str, str, str], dict[str, Any]]:
    """(model tag, image_path, task) -> the judge's entry (``judge_results[task]``)."""
    out = {}
    for tag in TAGS:
        path = OFFICIAL / "judge_results" / tag / "results.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for task, entry in row["judge_results"].items():
                out[(tag, row["image_path"], task)] = entry
    return out


def _task_key(group: str) -> str | None:
    """The official task name of a record's ``groups["task"]``."""
    if group in TASK_NAMES:
        return group
    return next((k for k, v in TASK_NAMES.items() if v == str(group).lower()), None)


def _score_of(entry: dict[str, Any]) -> float:
    score = entry["score"]
    return float(score["score"] if isinstance(score, dict) else score)


def _rows_by_tag(summary: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """tag -> sheet -> row, from the workbook shape ``{sheet: [rows]}`` or the per-model
    shape ``{tag: {sheet: row | [row]}}``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if all(isinstance(v, list) for v in summary.values()):
        for sheet, rows in summary.items():
            for row in rows:
                out.setdefault(str(row.get("模型名称")), {})[sheet] = row
        return out
    for tag, sheets in summary.items():
        for sheet, row in sheets.items():
            if isinstance(row, list):
                assert len(row) == 1, f"{tag} {sheet}: {len(row)} rows"
                row = row[0]
            out.setdefault(tag, {})[sheet] = row
    return out


@pytest.mark.parametrize("tag", TAGS)
def test_official_summary_rows(scored: Path, tag: str) -> None:
    expected = json.loads((OFFICIAL / "summary.json").read_text(encoding="utf-8"))
    got = json.loads((scored / "summary.json").read_text(encoding="utf-8"))
    assert "official_summary" in got, sorted(got)
    ours = _rows_by_tag(got["official_summary"])
    assert sorted(ours) == TAGS, "model tags differ"
    for sheet, want in _rows_by_tag(expected)[tag].items():
        assert sheet in ours[tag], f"no sheet {sheet}"
        have = ours[tag][sheet]
        assert list(have) == list(want), f"{sheet}: columns differ"
        diffs = {k: (have[k], v) for k, v in want.items() if have[k] != v
                 or (v is None) != (have[k] is None)}
        assert not diffs, f"{sheet} {tag}: (plug-in, official) {diffs}"
    assert sorted(ours[tag]) == sorted(expected), "sheets differ"


def test_per_sample_scores(scored: Path) -> None:
    official = _official_judgements()
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for line in (scored / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        details = rec.get("details") or {}
        if details.get("official_score") is None:
            continue
        key = (rec["model"], details.get("image_path"), _task_key(rec["groups"].get("task")))
        assert key not in seen, f"two records for {key}"
        seen[key] = details
    assert set(seen) == set(official), (
        f"missing: {sorted(set(official) - set(seen))[:5]} "
        f"extra: {sorted(set(seen) - set(official))[:5]}")
    wrong: list[tuple[Any, ...]] = []
    for key, entry in official.items():
        details = seen[key]
        if abs(details["official_score"] - _score_of(entry)) > 1e-9:
            wrong.append((key, details["official_score"], _score_of(entry)))
        if "official_detection_f1" in details:
            score = entry["score"]
            want = score.get("detection_f1") if isinstance(score, dict) else None
            have = details["official_detection_f1"]
            if (want is None) != (have is None) or (want is not None
                                                     and abs(have - want) > 1e-9):
                wrong.append((key, "detection_f1", have, want))
    assert not wrong, f"{len(wrong)} scores differ, e.g. {wrong[:5]}"
