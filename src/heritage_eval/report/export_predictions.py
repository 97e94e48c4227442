"""Export an Ancient-Bench run's answers in the official predictions layout
(``heritage-eval export predictions RUN --out DIR``).

Layout: ``<out>/<model folder>/<category>/results/<image stem>.json`` holding
``{"answer": <raw response text>}`` (UTF-8, no ASCII escaping), which the official
evaluator and ``heritage-eval score ancient-bench --predictions OUT`` read. The files
come from :func:`heritage_eval.benchmarks.ancient_bench.export.official_predictions`
when that module is installed (model folder renamed by :func:`model_folder`), else from
the same mapping here: ``groups["category"]``
(release folder), ``details["image_name"]`` and the scored turn's response text; the
model folder is the model spec with characters unsafe in a folder name replaced by
``_``.

Not exported: ``error`` records (nothing was answered), predictions that were missing
when the run was scored (``details["missing_prediction"]``, so that re-scoring reports
them missing again) and records without a category or image name; they are returned in
:attr:`ExportResult.skipped` and warned about.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from heritage_eval.core.record import SampleRecord
from heritage_eval.core.store import atomic_write_text
from heritage_eval.report.runs import read_run

__all__ = ["ExportError", "ExportResult", "export_official_predictions", "export_predictions",
           "model_folder"]
BENCHMARK = "ancient-bench"
_UNSAFE = re.compile(r'[/\\:*?"<>|\x00-\x1f\s]')


class ExportError(ValueError):
    """The run cannot be exported (not Ancient-Bench; two models share a folder name)."""


@dataclass
class ExportResult:
    """What :func:`export_predictions` wrote: the ``paths`` (sorted) and the
    ``skipped`` records as ``(model, record id, reason)``."""

    paths: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)


def model_folder(model: str) -> str:
    """A model spec as one folder name: ``/ \\ : * ? " < > |``, control characters and
    whitespace become ``_`` (``openai:org/m 1`` -> ``openai_org_m_1``); ``.``/``..``/empty
    become ``_``."""
    name = _UNSAFE.sub("_", model)
    return "_" if name in ("", ".", "..") else name


def skip_reason(record: SampleRecord) -> str | None:
    """Why ``record`` has no prediction file, or ``None`` when it has one."""
    if record.state.value == "error":
        return f"error: {record.error or 'no answer'}"
    if record.details.get("missing_prediction"):
        return "the prediction was missing when the run was scored"
    if not record.groups.get("category") or not record.details.get("image_name"):
        return "no groups.category / details.image_name (not an Ancient-Bench record)"
    return None


def _own_mapping(records: Iterable[SampleRecord]) -> Iterator[tuple[str, str | None]]:
    for r in records:
        if skip_reason(r) is None:
            stem = os.path.splitext(str(r.details["image_name"]))[0]
            yield (f"{model_folder(r.model)}/{r.groups['category']}/results/{stem}.json",
                   r.response_text)


def _mapping(records: list[SampleRecord]) -> Iterator[tuple[str, str | None]]:
    """The benchmark's own mapping when installed (one model at a time, its model folder
    replaced by :func:`model_folder` so that the folder rule is the same either way),
    else :func:`_own_mapping`."""
    try:
        from heritage_eval.benchmarks.ancient_bench.export import official_predictions
    except ImportError:
        yield from _own_mapping(records)
        return
    for model in dict.fromkeys(r.model for r in records):
        for rel, answer in official_predictions(r for r in records if r.model == model):
            tail = rel.split("/", 1)[1]  # <model>/<category>/results/<stem>.json
            yield f"{model_folder(model)}/{tail}", answer


def export_predictions(run_dir: str | Path, out_dir: str | Path) -> ExportResult:
    """Write the prediction files of the Ancient-Bench run ``run_dir`` under ``out_dir``
    (see the module docstring); each file is replaced atomically, other files in
    ``out_dir`` are left alone.

    Raises :class:`~heritage_eval.report.runs.RunReadError` (not a run folder),
    :class:`ExportError` (another benchmark; two models mapping to one folder; a path
    outside ``out_dir``) and ``OSError`` (unwritable ``out_dir``)."""
    run = read_run(run_dir)
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
    for rel, answer in _mapping(run.records):
        path = out / rel
        if not path.resolve().is_relative_to(root):
            raise ExportError(f"prediction path {rel!r} lies outside {out}")
        if path in files:
            raise ExportError(f"two records map to {path}; the run has a repeated image")
        files[path] = json.dumps({"answer": answer}, ensure_ascii=False) + "\n"
    for path, text in files.items():
        atomic_write_text(path, text)
    result.paths = sorted(files)
    return result


def export_official_predictions(run_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """:func:`export_predictions`, returning the paths written (sorted); each record not
    exported is reported by one ``UserWarning`` (``model``, id, reason). Raises what
    :func:`export_predictions` raises."""
    result = export_predictions(run_dir, out_dir)
    for model, rid, why in result.skipped:
        warnings.warn(f"{model} / {rid}: not exported ({why})", UserWarning, stacklevel=2)
    return result.paths
