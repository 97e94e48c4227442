"""Generated Chronicles-OCR releases and recorded answers for the streaming tests.

:func:`write_release` copies the demo set ``copies`` times (each image under a new name
in its script's folder, the row's fields kept), so a release of ``21 × copies`` images
has the demo's scripts, tasks and geometry. :func:`write_predictions` gives each copied
image the recorded row of a tag of ``fixtures/predictions`` drawn with a seeded
generator (the probes exercise every scoring rule: boxes, fallbacks, API errors, the
skipped recognition entry, empty answers …; a tag without the image's row leaves the
row out, an image without a recorded answer), renamed to the copy's image path.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"
PREDICTIONS = HERE / "fixtures" / "predictions"
JSONL = "Chronicles_OCR.jsonl"
#: the tags whose rows are drawn (blank is an empty file: it has no row to draw)
TAGS = ("perfect", "probe-a", "probe-b", "probe-c", "partial", "empty")


def _demo_rows() -> list[dict[str, Any]]:
    lines = (DEMO / JSONL).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _copy_path(image_path: str, copy: int) -> str:
    stem, dot, ext = image_path.rpartition(".")
    return f"{stem}-c{copy}{dot}{ext}"


def write_release(root: Path, copies: int) -> Path:
    """A release folder under ``root`` holding the demo's rows ``copies`` times (copy by
    copy, rows in the demo's order) with their images; returns the folder."""
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for copy in range(copies):
        for row in _demo_rows():
            path = _copy_path(row["image_path"], copy)
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(DEMO / row["image_path"], target)
            lines.append(json.dumps({**row, "image_path": path}, ensure_ascii=False))
    (root / JSONL).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _tag_rows(tag: str) -> dict[str, dict[str, Any]]:
    text = (PREDICTIONS / tag / "results.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return {str(r.get("image_path")): r for r in rows if isinstance(r, dict)}


def write_predictions(root: Path, copies: int, tags: dict[str, int]) -> Path:
    """``root/<tag>/results.jsonl`` for each ``tags`` entry (tag name -> seed): per copied
    image the row of a probe tag drawn with ``random.Random(seed)``; returns ``root``."""
    sources = {t: _tag_rows(t) for t in TAGS}
    for tag, seed in tags.items():
        rng = random.Random(seed)
        lines = []
        for copy in range(copies):
            for row in _demo_rows():
                picked = sources[rng.choice(TAGS)].get(row["image_path"])
                if picked is None:
                    continue
                path = _copy_path(row["image_path"], copy)
                lines.append(json.dumps({**picked, "image_path": path}, ensure_ascii=False))
        (root / tag).mkdir(parents=True, exist_ok=True)
        (root / tag / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root
