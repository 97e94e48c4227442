"""Check the probe predictions against the official code (run by make_reference.sh).

For every record whose manifest ``source`` is ``infer`` and that is not an API-error
record, the official extraction of its ``answer`` (``Opensource.prompts.EXTRACT_FUNCS``)
must give exactly the stored ``extract`` (or fail when the record has none). For every
recognition record, the official target sampling (``prepare_referring_sample``'s
``_pick_target``) for the record's ``seed`` must give its ``gt_char``,
``target_bbox_xyxy``, ``target_index`` and ``sample_key`` (or no target for a
``no_referring_target`` record). ``ambiguous`` records are only reported.

Usage: ``python tests/chronicles/check_probes.py OFFICIAL_CHECKOUT`` with a Python that
has the official requirements (Pillow at least). Exit status 1 on any mismatch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo" / \
    "Chronicles_OCR.jsonl"


def main(argv: list[str]) -> int:
    official = Path(argv[0]).resolve()
    sys.path.insert(0, str(official))
    from Opensource.prompts import EXTRACT_FUNCS
    from Opensource.prompts.referring import _pick_target

    gt = {}
    for line in DEMO.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            gt[row["image_path"]] = row
    manifest = {(m["model"], m["image_path"], m["task"]): m for m in map(
        json.loads, (HERE / "fixtures" / "probe_manifest.jsonl").read_text(
            encoding="utf-8").splitlines())}
    bad = checked = 0
    for path in sorted((HERE / "fixtures" / "predictions").glob("*/results.jsonl")):
        tag = path.parent.name
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for task, rec in (row.get("infer_results") or {}).items():
                m = manifest[(tag, row["image_path"], task)]
                problems = _check(rec, m, task, gt.get(row["image_path"], row),
                                  EXTRACT_FUNCS, _pick_target)
                checked += 1
                for p in problems:
                    bad += 1
                    print(f"{tag} {row['image_path']} {task} [{m['rule']}]: {p}")
    print(f"checked {checked} records, {bad} problems")
    return 1 if bad else 0


def _check(rec: dict[str, Any], m: dict[str, Any], task: str, row: dict[str, Any],
           extract_funcs: dict[str, Any], pick: Any) -> list[str]:
    problems: list[str] = []
    if task == "单字识别":
        picked = pick(row, seed=rec.get("seed", 42))
        if rec.get("error") == "no_referring_target":
            if picked is not None:
                problems.append(f"official picks a target: {picked}")
        elif picked is None:
            problems.append("official finds no target")
        else:
            want = {"gt_char": picked["char"], "target_index": picked["index"],
                    "sample_key": picked["sample_key"],
                    "target_bbox_xyxy": [float(v) for v in picked["bbox_xyxy"]]}
            for k, v in want.items():
                if k in rec and rec[k] != v:
                    problems.append(f"{k}: stored {rec[k]!r}, official {v!r}")
    if "error" in rec or m["source"] not in ("infer", "ambiguous"):
        return problems
    ok, data = extract_funcs[task](rec["answer"])
    stored = rec.get("extract")
    official = data if ok else None
    if stored != official:
        note = "(ambiguous: PYTHONHASHSEED decides) " if m["source"] == "ambiguous" else ""
        if m["source"] == "ambiguous":
            print(f"note: {m['model']} {m['image_path']} {task}: {note}official {official!r}")
        else:
            problems.append(f"extract: stored {stored!r}, official {official!r}")
    return problems


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
