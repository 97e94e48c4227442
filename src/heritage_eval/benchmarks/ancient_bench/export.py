"""Export a run's answers in the official Ancient-Bench predictions layout.

The official evaluator reads ``<root>/<model>/<category>/results/<image stem>.json``
holding ``{"answer": "<raw model answer>"}`` (see ``predictions.py``); writing these
files from a run's records lets the official script check our numbers, and
``score ancient-bench`` re-scores them to the same values.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from heritage_eval.core.record import SampleRecord

#: Characters that cannot stand in a folder name (the rule of ``heritage-eval export
#: predictions``, ``report.export_predictions.model_folder``).
_UNSAFE = re.compile(r'[/\\:*?"<>|\x00-\x1f\s]')


def model_folder(model: str) -> str:
    """A model spec as one folder name: ``/ \\ : * ? " < > |``, control characters and
    whitespace become ``_`` (``openai:org/m`` -> ``openai_org_m``); ``.``, ``..`` and the
    empty name become ``_``."""
    name = _UNSAFE.sub("_", model)
    return "_" if name in ("", ".", "..") else name


def official_predictions(records: Iterable[SampleRecord]
                         ) -> Iterator[tuple[str, str | None]]:
    """``(relative path, raw answer)`` for each Ancient-Bench record that has an answer
    file to write: ``<model>/<category>/results/<image stem>.json`` (POSIX path; the
    model folder is :func:`model_folder` of the spec) and the raw response text of the scored turn
    (``None`` = an empty answer, written as JSON ``null``).

    Left out: records of other benchmarks, ``error`` records (nothing was answered or the
    ground truth could not be loaded) and predictions that were missing when the
    records were scored (``details.missing_prediction``), so that re-scoring reports
    them missing again.
    """
    for r in records:
        if r.benchmark != "ancient-bench" or r.state.value == "error":
            continue
        if r.details.get("missing_prediction"):
            continue
        image = r.details.get("image_name")
        category = r.groups.get("category")
        if not image or not category:
            continue
        stem = os.path.splitext(str(image))[0]
        yield f"{model_folder(r.model)}/{category}/results/{stem}.json", r.response_text


def write_official_predictions(records: Iterable[SampleRecord], root: str | Path) -> int:
    """Write :func:`official_predictions` under ``root`` (``{"answer": …}``, UTF-8, no
    ASCII escaping); returns how many files were written. Raises ``OSError`` when a file
    cannot be written."""
    base = Path(root)
    n = 0
    for rel, answer in official_predictions(records):
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"answer": answer}, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        n += 1
    return n
