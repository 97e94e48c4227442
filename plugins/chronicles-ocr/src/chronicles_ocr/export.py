"""Write a run's answers back in the official layout: ``OUT/<model_tag>/results.jsonl``
as the official ``infer.py`` writes it, so that the official ``judge.py`` and
``summarize.py`` (or ``heritage-eval score chronicles-ocr``) can score them.

One line per image and model: the release row (all its fields, when ``data`` is given;
else ``image_path`` and ``font_type``), then ``infer_results``: task key (``字体分类``,
``字符提取``, ``字符检测``, ``单字识别``, in the official order) -> ``{"thinking",
"answer", "extract"?}`` — ``extract`` only where an answer was read (a failed reading
has none, as in ``infer.py``); recognition adds ``gt_char``, ``target_bbox_xyxy``,
``target_index``, ``seed``; an image without a recognition target gets the official
skipped entry; a request that failed gets ``{"thinking": "", "answer": "", "error"}``.
Images that could not be used (data errors) are left out, as ``infer.py`` leaves out a
missing image, and so are those a scored model had no answer for.

``heritage-eval export chronicles-ocr RUN_DIR OUT_DIR [--data DATA] [--tag MODEL=TAG …]``
(also ``python -m chronicles_ocr.export …``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from chronicles_ocr.loader import image_key, locate
from heritage_eval.plugin import SampleRecord, read_regular_text

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_tag(model: str) -> str:
    """A folder name for a model spec: the part after the first ``:`` (the model's own
    name), characters other than letters, digits, ``.``, ``_``, ``-`` replaced by ``_``."""
    name = model.split(":", 1)[1] if ":" in model else model
    return _UNSAFE.sub("_", name).strip("._") or "model"


def read_records(run_dir: Path) -> list[SampleRecord]:
    """The records of ``run_dir/samples.jsonl``. Raises ``OSError`` / ``ValueError``."""
    text = read_regular_text(Path(run_dir) / "samples.jsonl")
    return [SampleRecord.model_validate_json(line) for line in text.splitlines()
            if line.strip()]


def release_rows(data: Path) -> dict[str, dict[str, Any]]:
    """Image path -> release row of ``data`` (folder or JSONL file)."""
    _, path = locate(data)
    rows: dict[str, dict[str, Any]] = {}
    for line in read_regular_text(path).splitlines():
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and image_key(row):
                rows.setdefault(image_key(row), row)
    return rows


def task_entry(record: SampleRecord) -> dict[str, Any] | None:
    """The ``infer_results`` entry of one record, or ``None`` for a data error."""
    d = record.details
    if (d.get("error_kind") == "data" and not d.get("no_target")) or \
            d.get("official_absent"):
        return None
    if d.get("no_target"):
        return {"thinking": "", "answer": "", "error": "no_referring_target",
                "skipped": True}
    turn = record.scored_turn
    resp = turn.response if turn is not None else None
    if resp is None or resp.text is None:
        entry: dict[str, Any] = {"thinking": "", "answer": "",
                                 "error": record.error or "no answer"}
    else:
        entry = {"thinking": resp.reasoning or "", "answer": resp.text}
        if d.get("extract") is not None:
            entry["extract"] = d["extract"]
    target = d.get("target")
    if record.groups.get("task") == "recognition" and isinstance(target, dict):
        entry.update(gt_char=target.get("char"), target_bbox_xyxy=target.get("bbox_xyxy"),
                     target_index=target.get("index"), seed=target.get("seed"))
    return entry


def results_lines(records: Iterable[SampleRecord],
                  rows: Mapping[str, dict[str, Any]] | None = None
                  ) -> dict[str, list[dict[str, Any]]]:
    """Model -> its ``results.jsonl`` objects, images in order of first record."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for record in records:
        image = record.details.get("image_path")
        task = record.details.get("task_zh")
        entry = task_entry(record)
        lines = out.setdefault(record.model, {})  # a model without a line: an empty file
        if not image or not task or entry is None:
            continue
        if image not in lines:
            base = dict((rows or {}).get(image) or {
                "image_path": image, "font_type": record.details.get("script_zh", "")})
            lines[image] = {**base, "infer_results": {}, "image_path": image}
        lines[image]["infer_results"][task] = entry
    return {model: list(lines.values()) for model, lines in out.items()}


def export_results(run_dir: Path, out_dir: Path, *, data: Path | None = None,
                   tags: Mapping[str, str] | None = None) -> dict[str, Path]:
    """Write ``out_dir/<tag>/results.jsonl`` for every model of the run in ``run_dir``
    (module docstring); ``tags``: model spec -> folder name (default
    :func:`default_tag`). Returns tag -> file written. Raises ``OSError`` /
    ``ValueError`` for an unreadable run or release, and ``ValueError`` when two models
    would share a folder."""
    lines = results_lines(read_records(run_dir), release_rows(data) if data else None)
    names = {m: (tags or {}).get(m) or default_tag(m) for m in lines}
    if len(set(names.values())) != len(names):
        raise ValueError(f"two models would share a folder: {names}; give --tag")
    written = {}
    for model, objects in lines.items():
        path = Path(out_dir) / names[model] / "results.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects),
                        encoding="utf-8")
        written[names[model]] = path
    return written


def add_args(p: argparse.ArgumentParser) -> None:
    """The options of ``heritage-eval export chronicles-ocr`` (and of ``python -m
    chronicles_ocr.export``)."""
    p.add_argument("run", type=Path, help="run folder of chronicles-ocr (run or score)")
    p.add_argument("out", type=Path, help="folder to write <model_tag>/results.jsonl in")
    p.add_argument("--data", type=Path, help="the release, to copy its rows' fields")
    p.add_argument("--tag", action="append", default=[], metavar="MODEL=TAG",
                   help="folder name of a model (default: its name, made safe)")


def handle(args: argparse.Namespace) -> int:
    """Export as the parsed ``args`` say; exit status 0, or 2 on an error."""
    tags = dict(t.split("=", 1) for t in args.tag if "=" in t)
    try:
        written = export_results(args.run, args.out, data=args.data, tags=tags)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for tag, path in written.items():
        print(f"{tag}: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line of the module docstring; exit status 0, or 2 on an error."""
    p = argparse.ArgumentParser(prog="python -m chronicles_ocr.export",
                                description=__doc__.split("\n\n")[0])
    add_args(p)
    return handle(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
