"""Export an Ancient-Bench run's answers in the official predictions layout
(``heritage-eval export predictions RUN --out DIR``).

Layout: ``<out>/<model folder>/<category>/results/<image stem>.json`` holding
``{"answer": <raw response text>}`` (UTF-8, no ASCII escaping), which the official
evaluator and ``heritage-eval score ancient-bench --predictions OUT`` read: from each
record ``groups["category"]`` (release folder), ``details["image_name"]`` and the scored
turn's response text; the model folder is the model spec with characters unsafe in a
folder name replaced by ``_`` (:func:`model_folder`, the same rule as
``ancient_bench.export``).

Every ground-truth line gets its file: the official evaluator opens one file per line
and model and stops at the first one absent. A record with no answer to write — an
``error`` record (the request failed; the run left it out of its means) or a prediction
that was missing when the run was scored (``details["missing_prediction"]``) — is written
as ``{"answer": ""}`` (an empty answer, scored 0 by the official evaluator, so its means
count it where the run's did not) and listed in :data:`ERRORS_FILE` at the root of the
export (one JSON line each: model, id, category, image, file, reason; an empty file when
there is none) and in :attr:`ExportResult.blanks`. Only records without a category or
image name (not Ancient-Bench records) get no file: :attr:`ExportResult.skipped`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from heritage_eval.core.record import SampleRecord
from heritage_eval.core.store import atomic_write_text
from heritage_eval.report.runs import read_run, unfinished_note

log = logging.getLogger(__name__)

__all__ = ["ERRORS_FILE", "Blank", "ExportError", "ExportResult", "export_official_predictions",
           "export_predictions", "model_folder"]
BENCHMARK = "ancient-bench"
#: the list of records written as an empty answer, at the root of the export
ERRORS_FILE = "export_errors.jsonl"
_UNSAFE = re.compile(r'[/\\:*?"<>|\x00-\x1f\s]')


class ExportError(ValueError):
    """The run cannot be exported (not Ancient-Bench; two models share a folder name)."""


@dataclass(frozen=True)
class Blank:
    """A record written as ``{"answer": ""}``: ``model``, record ``id``, the prediction
    ``file`` (relative to the export root, POSIX) and the ``reason``."""

    model: str
    id: str
    category: str
    image: str
    file: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"model": self.model, "id": self.id, "category": self.category,
                "image": self.image, "file": self.file, "reason": self.reason}


@dataclass
class ExportResult:
    """What :func:`export_predictions` wrote: the prediction ``paths`` (sorted), the
    ``blanks`` among them (records with no answer, written as ``""``), the ``skipped``
    records (no file: not mappable) as ``(model, record id, reason)``, and the
    ``errors_file`` listing the blanks."""

    paths: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)
    blanks: list[Blank] = field(default_factory=list)
    errors_file: Path | None = None


def model_folder(model: str) -> str:
    """A model spec as one folder name: ``/ \\ : * ? " < > |``, control characters and
    whitespace become ``_`` (``openai:org/m 1`` -> ``openai_org_m_1``); ``.``/``..``/empty
    become ``_``."""
    name = _UNSAFE.sub("_", model)
    return "_" if name in ("", ".", "..") else name


def skip_reason(record: SampleRecord) -> str | None:
    """Why ``record`` gets no prediction file (no category or image name to build its
    path from), or ``None`` when it gets one."""
    if not record.groups.get("category") or not record.details.get("image_name"):
        return "no groups.category / details.image_name (not an Ancient-Bench record)"
    return None


def blank_reason(record: SampleRecord) -> str | None:
    """Why ``record``'s file holds ``{"answer": ""}`` rather than its response, or
    ``None`` when the response is written."""
    if record.state.value == "error":
        return f"error: {record.error or 'no answer'}"
    if record.details.get("missing_prediction"):
        return "missing: the prediction was missing when the run was scored"
    if record.details.get("prediction_error"):  # score: a file that gave no answer
        return f"unusable: {record.details['prediction_error']}"
    return None


def _relative(record: SampleRecord) -> str:
    stem = os.path.splitext(str(record.details["image_name"]))[0]
    return f"{model_folder(record.model)}/{record.groups['category']}/results/{stem}.json"


def export_predictions(run_dir: str | Path, out_dir: str | Path) -> ExportResult:
    """Write the prediction files of the Ancient-Bench run ``run_dir`` under ``out_dir``
    (see the module docstring); each file is replaced atomically, other files in
    ``out_dir`` are left alone.

    Raises :class:`~heritage_eval.report.runs.RunReadError` (not a run folder),
    :class:`ExportError` (another benchmark; two models mapping to one folder; a path
    outside ``out_dir``) and ``OSError`` (unwritable ``out_dir``)."""
    run = read_run(run_dir)
    unfinished = unfinished_note(run.path)
    for note in [*run.warnings, *([unfinished] if unfinished else [])]:
        log.warning(note)  # a skipped line's sample is not exported
    benches = {run.benchmark} | {r.benchmark for r in run.records}
    if benches != {BENCHMARK}:
        found = ", ".join(sorted(b for b in benches if b)) or "unknown"
        raise ExportError(f"{run.path} is a {found} run; only Ancient-Bench runs can be "
                          "exported to the official predictions layout")
    folders: dict[str, str] = {}
    for model in dict.fromkeys(r.model for r in run.records):
        other = folders.setdefault(model_folder(model), model)
        if other != model:
            raise ExportError(f"models {other!r} and {model!r} would share the folder "
                              f"{model_folder(model)!r}; export them from separate runs")
    result = ExportResult(skipped=[(r.model, r.id, why) for r in run.records
                                   if (why := skip_reason(r)) is not None])
    out = Path(out_dir)
    root = out.resolve()
    files: dict[Path, str] = {}
    for r in run.records:
        if skip_reason(r) is not None:
            continue
        rel = _relative(r)
        path = out / rel
        if not path.resolve().is_relative_to(root):
            raise ExportError(f"prediction path {rel!r} lies outside {out}")
        if path in files:
            raise ExportError(f"two records map to {path}; the run has a repeated image")
        why = blank_reason(r)
        answer = "" if why is not None else r.response_text
        if why is not None:
            result.blanks.append(Blank(r.model, r.id, str(r.groups["category"]),
                                       str(r.details["image_name"]), rel, why))
        files[path] = json.dumps({"answer": answer}, ensure_ascii=False) + "\n"
    for path, text in files.items():
        atomic_write_text(path, text)
    result.paths = sorted(files)
    result.errors_file = out / ERRORS_FILE
    atomic_write_text(result.errors_file, "".join(
        json.dumps(b.as_dict(), ensure_ascii=False) + "\n" for b in result.blanks))
    return result


def export_official_predictions(run_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """:func:`export_predictions`, returning the prediction paths written (sorted); each
    record written as an empty answer or not exported is reported by one ``UserWarning``
    (``model``, id, reason). Raises what :func:`export_predictions` raises."""
    result = export_predictions(run_dir, out_dir)
    for b in result.blanks:
        warnings.warn(f"{b.model} / {b.id}: written as an empty answer ({b.reason})",
                      UserWarning, stacklevel=2)
    for model, rid, why in result.skipped:
        warnings.warn(f"{model} / {rid}: not exported ({why})", UserWarning, stacklevel=2)
    return result.paths
