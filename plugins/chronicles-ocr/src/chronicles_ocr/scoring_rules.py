"""From one answer to one judged result: which extract is used, which judge, which
state — for either protocol.

The extract: for an answer replayed from an official ``results.jsonl`` (``recorded``),
the ``extract`` stored there, exactly what ``judge.py`` reads — under both protocols,
whose reading rules agree except for spotting; where none is stored (or, under
``corrected``, one the judge cannot read), ``official`` has none (``no_extract``) and
``corrected`` reads the answer again (recovering the valid boxes of a partly valid
spotting answer). For a live answer, the readers of
:mod:`chronicles_ocr.extract` (under ``corrected`` a partly valid spotting answer keeps
its valid boxes).

No extract (the answer could not be read, or the task was never answered) is the
official ``no_extract`` / ``no_infer``: score 0 — except spotting under ``official``,
which has no F1 then and is left out (``unscored``), as ``summarize.py`` leaves it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chronicles_ocr.extract import (
    read_classification,
    read_parsing,
    read_recognition,
    read_spotting,
)
from chronicles_ocr.judges import (
    judge_classification,
    judge_parsing,
    judge_recognition,
    judge_spotting,
)
from chronicles_ocr.names import BY_ID
from chronicles_ocr.protocol import Protocol

#: what an unscored spotting record says
UNREAD_SPOTTING = ("no valid box list could be read from the answer: the official summary "
                   "leaves such an image out of Spotting and Detection (--protocol "
                   "corrected scores it 0)")


@dataclass
class Judged:
    """One judged answer: ``state`` (``scored`` / ``unparsed`` / ``unscored``),
    ``scores`` (metric -> value or ``None``), ``judge`` (the official judge's dict, or
    its ``no_extract`` form), ``extract`` (the extract used, ``None`` without one),
    ``extract_source`` (``"recorded"`` or ``"read"``), ``error`` (for ``unscored``)."""

    state: str
    scores: dict[str, float | None]
    judge: dict[str, Any]
    extract: dict[str, Any] | None
    extract_source: str
    error: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)


def read_answer(task: str, text: str, protocol: Protocol) -> dict[str, Any] | None:
    """The extract of ``text`` for ``task`` under ``protocol`` (module docstring)."""
    if task == "classification":
        return read_classification(text)
    if task == "parsing":
        return read_parsing(text)
    if task == "recognition":
        return read_recognition(text)
    spotting = read_spotting(text)
    if protocol.keep_valid_boxes and spotting.items:
        return {"items": spotting.items}
    return spotting.official()


def metric_names(task: str) -> tuple[str, ...]:
    """The score names a record of ``task`` carries."""
    return ("spotting", "detection") if task == "spotting" else (task,)


def judge_one(task: str, extract: Any, row: Mapping[str, Any],
              protocol: Protocol, reference_char: str | None) -> dict[str, Any]:
    """The official judge's dict for ``task``. Raises ``TypeError`` / ``ValueError`` as
    :func:`~chronicles_ocr.judges.judge_spotting` does."""
    if task == "classification":
        return judge_classification(extract, str(row.get("font_type", "") or ""))
    if task == "parsing":
        return judge_parsing(extract, row.get("annotation") or "", protocol)
    if task == "recognition":
        return judge_recognition(extract, reference_char)
    return judge_spotting(extract, row, protocol)


def _judgeable(task: str, extract: Any, row: Mapping[str, Any], protocol: Protocol
               ) -> bool:
    """Whether the judge of ``task`` accepts ``extract`` (a stored one may have another
    shape)."""
    try:
        judge_one(task, extract, row, protocol, "")
    except Exception:
        return False
    return True


def judge_answer(task: str, text: str, row: Mapping[str, Any], protocol: Protocol, *,
                 recorded: Mapping[str, Any] | None = None,
                 reference_char: str | None = None) -> Judged:
    """Judge one answer (module docstring). ``recorded``: the official results entry of
    this task (``{"extract": …}`` or without it) when the answer was replayed from one.
    A judge that fails on a stored extract of the wrong shape scores as ``judge.py``
    records the failure: 0, and a spotting image left out."""
    extract: Any
    stored = recorded.get("extract") if recorded is not None else None
    if recorded is not None and (stored is not None or protocol.name == "official"):
        extract, source = stored, "recorded"
        if protocol.name != "official" and not _judgeable(task, stored, row, protocol):
            extract, source = read_answer(task, text, protocol), "read"
    else:
        extract, source = read_answer(task, text, protocol), "read"
    names = metric_names(task)
    if extract is None:
        why = "no_infer" if recorded is not None and recorded.get("missing") else \
            "no_extract"
        if task == "spotting" and not protocol.score_unread_spotting:
            return Judged("unscored", dict.fromkeys(names), {"score": {"score": 0.0},
                          "error": why}, None, source, UNREAD_SPOTTING)
        return Judged("unparsed", dict.fromkeys(names, 0.0),
                      {"score": {"score": 0.0}, "error": why}, None, source)
    shown = extract if isinstance(extract, dict) else None
    try:
        result = judge_one(task, extract, row, protocol, reference_char)
    except Exception as exc:  # a stored extract of another shape: judge.py's except
        failed = {"score": 0.0, "error": f"{type(exc).__name__}: {exc}"}
        if task == "spotting":
            return Judged("unscored", dict.fromkeys(names), failed, shown, source,
                          f"the judge failed on the recorded extract ({failed['error']}); "
                          "the official summary leaves the image out")
        return Judged("unparsed", dict.fromkeys(names, 0.0), failed, shown, source)
    scores: dict[str, float | None] = {task: float(result["score"])}
    if task == "spotting":
        scores = {"spotting": float(result["spotting_f1"]),
                  "detection": float(result["detection_f1"])}
    return Judged("scored", scores, {"score": result}, shown, source)


def official_score(judged: Judged) -> float | None:
    """The judge's unrounded ``score`` as ``judge.py`` writes it (``score.score``, or the
    bare 0.0 of a judge that failed; the Spotting F1 for spotting). It is also written
    for a spotting image that ``summarize.py`` then leaves out (``no_extract``: 0.0):
    the record's state (``unscored``) says that."""
    inner = judged.judge.get("score")
    if isinstance(inner, Mapping):
        return float(inner["score"])
    return float(inner) if isinstance(inner, int | float) else None


def script_zh(script_id: str) -> str:
    """The release's Chinese name of a script id (the id itself when unknown)."""
    found = BY_ID.get(script_id)
    return found.zh if found else script_id
