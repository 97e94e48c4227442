"""Write the Chronicles-OCR probe predictions in the official ``infer.py`` layout.

``fixtures/predictions/<model_tag>/results.jsonl``: one line per image, the ground-truth
row's fields followed by ``infer_results`` (task name -> the record infer.py writes:
``thinking``, ``answer``, ``extract`` when its extraction succeeded, plus for 单字识别 the
sampled target ``gt_char`` / ``target_bbox_xyxy`` / ``target_index`` / ``sample_key`` /
``seed``; or an ``error`` record), serialised with ``json.dumps(ensure_ascii=False)``.

Tags: ``perfect`` (every answer right, in the prompts' formats), ``probe-a`` /
``probe-b`` / ``probe-c`` (one rule per image and task: probe_spotting.py,
probe_text.py), ``empty`` (every answer empty), ``partial`` (missing rows, tasks and
records, rows outside the ground truth, stale row fields) and ``blank`` (an empty file).

``fixtures/probe_manifest.jsonl`` names the rule of every (tag, image, task) and where its
``extract`` comes from (``infer``: exactly the official extraction of ``answer``, checked by
check_probes.py; ``hand``: written directly; ``ambiguous``; ``absent``: no record;
``not_in_gt``: the image is not in the ground truth).

Deterministic. Usage (from the repository root): ``python -m tests.chronicles.make_probes``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.chronicles import probe_spotting
from tests.chronicles.probe_kit import (
    ANCIENT,
    API_ERROR,
    CLASSIFY,
    PARSE,
    RECOG,
    SPOT,
    TASK_ORDER,
    Answer,
    exact_items,
    load_demo,
    spot_answer,
    task_record,
)
from tests.chronicles.probe_text import classification, parsing, recognition

HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures" / "predictions"
MANIFEST = HERE / "fixtures" / "probe_manifest.jsonl"
TAGS = ("perfect", "probe-a", "probe-b", "probe-c", "empty", "partial", "blank")

Rows = dict[str, dict[str, Any]]
Answers = dict[str, dict[str, Answer]]  # task -> image stem -> answer


def tasks_of(row: dict[str, Any]) -> tuple[str, ...]:
    """The tasks infer.py runs for a row: four for the ancient scripts, else two."""
    return TASK_ORDER if row["font_type"] in ANCIENT else (CLASSIFY, PARSE)


def answers_of(rows: Rows, tag: str) -> Answers:
    """Every task's answers of one full tag (all images)."""
    spotting = {"perfect": probe_spotting.perfect, "probe-a": probe_spotting.probe_a,
                "probe-b": probe_spotting.probe_b, "probe-c": probe_spotting.probe_c}
    spot = (spotting[tag](rows) if tag in spotting else
            {s: Answer("empty_answer") for s, r in rows.items() if "spotting" in r})
    return {CLASSIFY: classification(rows, tag), PARSE: parsing(rows, tag), SPOT: spot,
            RECOG: recognition(rows, tag)}


def infer_row(row: dict[str, Any], answers: dict[str, Answer]) -> dict[str, Any]:
    """The line infer.py writes: the ground-truth row, then ``infer_results``."""
    out = dict(row)
    out["infer_results"] = {task: task_record(task, answers[task], row)
                            for task in tasks_of(row)
                            if task in answers and answers[task].source != "absent"}
    return out


def full_tag(rows: Rows, tag: str) -> list[tuple[dict[str, Any], dict[str, Answer]]]:
    by_task = answers_of(rows, tag)
    return [(row, {t: by_task[t][stem] for t in tasks_of(row)}) for stem, row in rows.items()]


def partial_tag(rows: Rows) -> list[tuple[dict[str, Any], dict[str, Answer] | None]]:
    """Eight of the 21 images (the rest are simply absent), two rows outside the ground
    truth, the odd records an interrupted or stale run leaves, and two 行书 answers whose
    mean lands on a rounding tie."""
    perfect = answers_of(rows, "perfect")

    def right(stem: str) -> dict[str, Answer]:
        return {t: perfect[t][stem] for t in tasks_of(rows[stem])}

    absent = Answer("task_missing", source="absent")
    interrupted = right("jiaguwen-02") | {SPOT: absent, RECOG: absent}
    stale = dict(rows["zhuanshu-02"], font_type="金文", annotation="旧版标注", spotting=[])
    errors = {t: Answer("api_error", error=API_ERROR) for t in tasks_of(rows["caoshu-03"])}
    outside = dict(rows["jiaguwen-01"], image_path="images/甲骨文/jiaguwen-99.png")
    dotted = dict(rows["kaishu-02"], image_path="./images/楷书/kaishu-02.png")
    a1, a2 = rows["xingshu-01"]["annotation"], rows["xingshu-02"]["annotation"]
    one = a1[:3] + "口" + a1[4:]  # 1 - 1/8 = 0.875
    two = a2[:1] + "口" + a2[2:5] + "口" + a2[6:]  # 1 - 2/8 = 0.75
    rounding = {  # 行书 Parsing mean 13/16: 81.25 -> 81.2 (round half to even), Average
        # (13/16 + 1) / 2 = 90.625 -> 90.6
        "xingshu-01": {CLASSIFY: perfect[CLASSIFY]["xingshu-01"], PARSE: Answer(
            "one_substitution_of_8", f"提取文本：{one}", {"extracted_text": one})},
        "xingshu-02": {CLASSIFY: perfect[CLASSIFY]["xingshu-02"], PARSE: Answer(
            "two_substitutions_of_8", f"提取文本：{two}", {"extracted_text": two})},
    }
    return [
        (rows["kaishu-01"], right("kaishu-01")),
        (rows["xingshu-01"], rounding["xingshu-01"]),
        (rows["xingshu-02"], rounding["xingshu-02"]),
        (rows["jiaguwen-02"], interrupted),  # 字符检测 and 单字识别 never answered
        (rows["jinwen-01"], {}),  # infer_results == {}
        (stale, right("zhuanshu-02") | {SPOT: spot_answer(
            "exact_boxes_stale_row", exact_items(rows["zhuanshu-02"]))}),
        (rows["caoshu-03"], errors),
        (rows["lishu-02"], None),  # infer_results == null
        (outside, right("jiaguwen-01")),  # not in the ground truth
        (dotted, right("kaishu-02")),  # "./" prefix: not the ground truth's key
    ]


def manifest_lines(tag: str, row: dict[str, Any], answers: dict[str, Answer] | None,
                   in_gt: bool) -> list[dict[str, Any]]:
    lines = []
    for task in tasks_of(row):
        ans = (answers or {}).get(task)
        source = "not_in_gt" if not in_gt else "absent" if ans is None else ans.source
        rule = "row_without_infer_results" if answers is None else \
            "task_missing" if ans is None else ans.rule
        lines.append({"model": tag, "image_path": row["image_path"], "task": task,
                      "rule": rule, "source": source})
    return lines


def build(rows: Rows) -> tuple[dict[str, list[str]], list[dict[str, Any]]]:
    """Every tag's results.jsonl lines and the manifest."""
    gt_paths = {r["image_path"] for r in rows.values()}
    files: dict[str, list[str]] = {}
    manifest: list[dict[str, Any]] = []
    for tag in TAGS:
        if tag == "blank":
            pairs: list[tuple[dict[str, Any], dict[str, Answer] | None]] = []
        elif tag == "partial":
            pairs = partial_tag(rows)
        else:
            pairs = list(full_tag(rows, tag))
        lines = []
        for row, answers in pairs:
            gt_row = next((r for r in rows.values() if r["image_path"] == row["image_path"]),
                          row)
            if answers is None:
                line = dict(row, infer_results=None)
            else:
                line = infer_row(row, answers)
                if gt_row is not row:  # stale fields: records built from the real row
                    line["infer_results"] = infer_row(gt_row, answers)["infer_results"]
            lines.append(json.dumps(line, ensure_ascii=False))
            manifest += manifest_lines(tag, row, answers, row["image_path"] in gt_paths)
        files[tag] = lines
    return files, manifest


def main() -> int:
    files, manifest = build(load_demo())
    for tag, lines in files.items():
        path = OUT / tag / "results.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    MANIFEST.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in manifest),
                        encoding="utf-8")
    answered = sum(1 for m in manifest if m["source"] not in ("absent",))
    print(f"wrote {len(files)} tags, {sum(map(len, files.values()))} rows, "
          f"{answered} task answers to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
