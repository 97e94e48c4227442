"""``--model chronicles-replay:TAG --model-option results=FILE``: answers recorded by the
official ``infer.py`` (``infer_results/<TAG>/results.jsonl``), replayed.

``FILE`` holds one JSON object per image: the release row plus ``infer_results``, task
key (``字体分类``, ``字符提取``, ``字符检测``, ``单字识别``) -> ``{"answer", "thinking",
"extract"?, "error"?, "gt_char"?, "target_bbox_xyxy"?, …}``. Rows are found by image path
(``image_path``, else ``img_path`` / ``image``; a later row replaces an earlier one, as
the official reader does). For each conversation (``payload``: ``image_path``, ``task``):

- no row for the image (or a row whose ``infer_results`` is not an object): a failed
  request with ``meta["official"]["absent"]`` (an ``error`` record, left out — the
  official judge never scores that image either);
- a row without the task: an empty answer marked ``no_infer``;
- otherwise the recorded ``answer`` (``""`` when it is not text), with
  ``meta["official"]`` = ``{"extract", "error", "skipped", "target"}`` so that the
  benchmark can judge it as ``judge.py`` does (the stored ``extract``; the recorded
  recognition target ``{"char": gt_char, "bbox_xyxy", "index", "seed"}``).

Registered when the plug-in loads (``BenchmarkPlugin(backends=("chronicles_ocr.replay",))``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from chronicles_ocr.loader import image_key
from heritage_eval.plugin import (
    BackendOptions,
    GenerationSettings,
    Message,
    ModelBackend,
    Response,
    read_regular_text,
    register_backend,
)

PREFIX = "chronicles-replay"
#: the model of ``score chronicles-ocr`` runs: nothing is sent, records come from files
RECORDED_SPEC = "chronicles-recorded"
#: repeated rows named in the note of :func:`read_results` (the rest are counted)
MAX_SHOWN = 5


def read_results(path: str) -> tuple[dict[str, dict[str, Any]], str, list[str]]:
    """``(image path -> row, SHA-256 of the file (16 hex), notes)`` of an official
    ``results.jsonl``; a line that is not a JSON object with an image path is skipped
    with a note (the official reader skips it silently); rows repeating an image are
    counted in one note (the later row is used). Raises ``OSError`` /
    ``UnicodeDecodeError`` when the file cannot be read."""
    text = read_regular_text(path)
    rows: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    repeats: list[str] = []
    notes: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError):
            notes.append(f"{path}:{number}: not valid JSON, skipped")
            continue
        key = image_key(row) if isinstance(row, dict) else ""
        if not key:
            notes.append(f"{path}:{number}: no image path, skipped")
            continue
        if key in lines:
            repeats.append(f"line {number} repeats line {lines[key]}")
        rows[key] = row
        lines[key] = number
    if repeats:
        shown = "; ".join(repeats[:MAX_SHOWN]) + ("; …" if len(repeats) > MAX_SHOWN else "")
        notes.append(f"{path}: {len(repeats)} row(s) repeat an image of an earlier row; "
                     f"the later row is used, as the official reader does ({shown})")
    return rows, hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], notes


def recorded_target(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The recognition target an entry was asked about, or ``None``."""
    char = entry.get("gt_char")
    if not char:
        return None
    return {"char": str(char), "bbox_xyxy": entry.get("target_bbox_xyxy"),
            "index": entry.get("target_index"), "seed": entry.get("seed")}


def replayed(row: dict[str, Any] | None, task: str) -> Response:
    """The response replayed for ``task`` (an official key) of ``row`` (module
    docstring)."""
    absent = {"official": {"absent": True}}
    if row is None:
        return Response(text=None, error="no row for this image in results.jsonl",
                        meta=absent)
    tasks = row.get("infer_results") or {}
    if not isinstance(tasks, dict):  # judge.py fails on the row and writes nothing
        return Response(text=None, error="infer_results of this row is not an object",
                        meta=absent)
    entry = tasks.get(task)
    if not isinstance(entry, dict):
        return Response(text="", meta={"official": {"missing": True, "extract": None},
                                       "finish_reason": "stop"})
    answer = entry.get("answer")
    official = {"extract": entry.get("extract"), "error": entry.get("error"),
                "skipped": entry.get("skipped"), "target": recorded_target(entry)}
    meta: dict[str, Any] = {"official": official, "finish_reason": "stop"}
    if entry.get("thinking"):
        meta["reasoning"] = str(entry["thinking"])
    return Response(text=answer if isinstance(answer, str) else "", meta=meta)


class ReplayBackend(ModelBackend):
    """Answers each conversation from the recorded results (module docstring)."""

    backend = PREFIX
    max_concurrency = 64
    reads_payload = True  # the answer depends on the payload's image path and task

    def __init__(self, name: str, options: BackendOptions) -> None:
        path = options.extra.get("results")
        if not path:
            raise ValueError("needs --model-option results=FILE (an official "
                             "infer_results/<model_tag>/results.jsonl)")
        try:
            self.rows, self.digest, self.notes = read_results(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"results file {path}: {exc}") from None
        self.model_id = name or "replay"

    def identity(self) -> dict[str, Any]:
        """Backend, tag and the file's hash: another file never reuses cached answers."""
        return {"backend": self.backend, "model": self.model_id, "results": self.digest}

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        return replayed(self.rows.get(str(payload.get("image_path", ""))),
                        str(payload.get("task", "")))


register_backend(PREFIX, lambda name, options: ReplayBackend(name, options),
                 "replay answers recorded by the official Chronicles-OCR infer.py "
                 "(chronicles-ocr plug-in): --model chronicles-replay:TAG",
                 option_keys={"results": "the official infer_results/<TAG>/results.jsonl"})


class RecordedBackend(ModelBackend):
    """The model of a ``score chronicles-ocr`` run, which sends nothing (its records are
    made from ``--predictions``); a request reaching it fails."""

    backend = RECORDED_SPEC
    model_id = ""

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        return Response(text=None, error="chronicles-recorded answers nothing: use "
                        "'heritage-eval score chronicles-ocr --predictions DIR'")


register_backend(RECORDED_SPEC, lambda name, options: RecordedBackend(),
                 "(internal, not a model to choose) the model of 'score chronicles-ocr' "
                 "runs, which send nothing")
