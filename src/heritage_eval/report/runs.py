"""Reading run folders back: ``samples.jsonl`` record by record and ``summary.json``.

A run folder (written by :mod:`heritage_eval.core.engine`) holds ``samples.jsonl`` (one
:class:`~heritage_eval.core.record.SampleRecord` per line, schema
``heritage-eval/sample/1``) and ``summary.json`` (the envelope of
:mod:`heritage_eval.core.summary`, schema ``heritage-eval/summary/1``). A line that is
not a valid record (a truncated last line of a killed copy, hand editing) is skipped
with a warning naming ``file:line``; it never stops the reader. A folder that is not a
run raises :class:`RunReadError` naming the path (the class of
:mod:`heritage_eval.core.records_io`, so ``he.load_run`` and ``he.compare`` raise the same).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.records_io import RunReadError, iter_records, read_summary
from heritage_eval.core.rundir import UNFINISHED, read_run_file
from heritage_eval.core.summary import metric_values, model_block
from heritage_eval.report.record_sanity import impossible_score, repeated_sample

__all__ = ["ModelRun", "RunData", "RunReadError", "RunReadWarning", "check_records",
           "counted_scores", "load_run_records", "metric_specs", "model_runs", "read_run",
           "stated_counts"]


class RunReadWarning(UserWarning):
    """A line of ``samples.jsonl`` was skipped (the message names ``file:line``)."""


@dataclass
class RunData:
    """One run folder read back: its ``path``, the valid ``records`` in file order, the
    ``summary`` envelope (dict) and the ``warnings`` (one per skipped line)."""

    path: Path
    records: list[SampleRecord]
    summary: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def benchmark(self) -> str:
        """The benchmark of the run (``summary["benchmark"]``)."""
        return str(self.summary.get("benchmark", ""))


def read_samples(path: Path) -> tuple[list[SampleRecord], list[str]]:
    """The valid records of a ``samples.jsonl`` and one warning per skipped line
    (:func:`heritage_eval.core.records_io.iter_records`). Raises :class:`RunReadError`
    when the file cannot be read at all (absent, a folder)."""
    notes: list[str] = []
    try:
        records = list(iter_records(path, notes))
    except OSError as exc:
        raise RunReadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return records, notes


def spec_dicts(summary: dict[str, Any]) -> Any:
    """The metric spec dicts of a summary: ``statistics.metric_specs`` (or a top-level
    ``metric_specs``); ``None`` when absent."""
    stats = summary.get("statistics")
    found = stats.get("metric_specs") if isinstance(stats, dict) else None
    return found if found is not None else summary.get("metric_specs")


def read_run(run_dir: str | Path, *, whole: bool = False) -> RunData:
    """Read ``run_dir`` (see the module docstring) without emitting warnings: skipped
    lines are listed in :attr:`RunData.warnings`.

    ``whole``: also require that ``samples.jsonl`` holds exactly the records
    ``summary.json`` counts (:func:`check_records`), as ``compare`` does: a reader that
    sets a summary's numbers beside ones recomputed from the records must not mix a
    summary with a file that no longer holds it.

    Raises :class:`RunReadError` when ``run_dir`` is not a folder, lacks
    ``samples.jsonl`` or ``summary.json``, its summary is not the current envelope, its
    results belong to another configuration than ``run.json`` names
    (:func:`check_owner`), or (``whole``) its records are not those its summary counts."""
    root = Path(run_dir)
    if not root.is_dir():
        what = "does not exist" if not root.exists() else "is not a folder"
        raise RunReadError(f"run folder {root} {what}")
    samples = root / "samples.jsonl"
    if not samples.is_file():
        raise RunReadError(f"{root} is not a run folder: no samples.jsonl")
    summary = read_summary(root)
    check_owner(root, summary)
    records, notes = read_samples(samples)
    data = RunData(path=root, records=records, summary=summary, warnings=notes)
    if whole:
        check_records(data)
    return data


def check_owner(root: Path, summary: dict[str, Any]) -> None:
    """Raise :class:`RunReadError` when the folder's results are not those of the run
    that owns it: ``run.json``'s configuration hash differs from the one in
    ``summary.json``'s provenance. That is what an interrupted ``--resume`` with new
    settings leaves (``run.json`` names the new run, ``running``; the results are still
    the old run's): numbers read from it would be put under the wrong settings. A folder
    without ``run.json``, or a summary without ``config_hash``, is not checked."""
    state = read_run_file(root)
    owner = state.get("config_hash") if state else None
    prov = summary.get("provenance")
    wrote = prov.get("config_hash") if isinstance(prov, dict) else None
    if owner and wrote and owner != wrote:
        status = state.get("status") if state else None
        raise RunReadError(
            f"{root}: summary.json and samples.jsonl are the results of another "
            f"configuration (config hash {wrote}) than the run that now owns the folder "
            f"(run.json: {owner}, status {status}): a --resume with new settings did not "
            "finish. Finish it (run the same command again with --resume) or start "
            "afresh with --overwrite")


#: How a damaged run folder is repaired (the end of :func:`check_records`' message).
REPAIR = ("Repair the run folder: run the same command again with --resume (it re-does "
          "the missing samples and writes samples.jsonl and summary.json anew), or with "
          "--overwrite to start afresh, or restore the folder from a copy")


def stated_counts(summary: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Model spec -> the record counts its ``summary.json`` block states: ``records``
    (``n_records``, else the sum of ``states``) and each state of ``states``. A model
    whose block states no count is left out (not checked)."""
    out: dict[str, dict[str, int]] = {}
    models = summary.get("models")
    for model, block in (models.items() if isinstance(models, dict) else ()):
        if not isinstance(block, dict):
            continue
        states = block.get("states")
        counts = ({str(k): v for k, v in states.items() if isinstance(v, int)}
                  if isinstance(states, dict) else {})
        n = block.get("n_records")
        if not isinstance(n, int) and counts:
            n = sum(counts.values())
        if isinstance(n, int):
            out[str(model)] = {"records": n, **counts}
    return out


def unfinished_note(root: Path) -> str | None:
    """A warning for a run folder whose ``run.json`` says its run did not finish
    (status ``running``, ``stopped`` or ``failed``,
    :data:`~heritage_eval.core.rundir.UNFINISHED`), ``None`` otherwise: its records
    and summary are those written when it ended, possibly of fewer samples than planned.
    Run the same command again to finish it."""
    state = read_run_file(root)
    status = state.get("status") if state else None
    if status not in UNFINISHED:
        return None
    return (f"{root}: its run did not finish (run.json: status {status!r}): the results "
            "are those written when it ended, maybe fewer samples than planned; run the "
            "same command again to finish it")


def check_records(data: RunData) -> None:
    """Raise :class:`RunReadError` when ``data``'s ``samples.jsonl`` does not hold the
    records its ``summary.json`` counts: a line was unreadable (truncated copy, hand
    editing; the message names the first ``file:line``), or, per model, the number of
    records or of records in some state differs from the summary's ``n_records`` /
    ``states`` (:func:`stated_counts`); a model with records but no entry counts 0; or
    a model holds one sample twice, or a score its metric cannot take
    (:mod:`.record_sanity`). A summary that states no count for any model is not
    checked for counts. The message names the file and says how to repair the folder
    (:data:`REPAIR`)."""
    samples, summary = data.path / "samples.jsonl", data.path / "summary.json"
    mixed = ("a comparison would mix the summary's numbers with numbers recomputed from "
             "the records")
    if data.warnings:
        more = len(data.warnings) - 1
        first = data.warnings[0].replace(": skipped: ", ": unreadable line: ", 1)
        raise RunReadError(
            first + (f" (and {more} more unreadable line(s))" if more else "")
            + f". The file is damaged: it no longer holds the records that {summary} "
            f"counts, and {mixed}. {REPAIR}")
    _check_counts(data, samples, summary, mixed)
    for problem in (repeated_sample(data.records),
                    impossible_score(data.records, spec_dicts(data.summary))):
        if problem is not None:
            raise RunReadError(
                f"{samples}: {problem}: the file was edited or merged, and {mixed}. "
                f"{REPAIR}")


def _check_counts(data: RunData, samples: Path, summary: Path, mixed: str) -> None:
    """The count rule of :func:`check_records`."""
    stated = stated_counts(data.summary)
    if not stated:
        return
    found: dict[str, dict[str, int]] = {}
    for r in data.records:
        counts = found.setdefault(r.model, {"records": 0})
        counts["records"] += 1
        counts[r.state.value] = counts.get(r.state.value, 0) + 1
    for model in [*stated, *(m for m in found if m not in stated)]:
        want, got = stated.get(model, {"records": 0}), found.get(model, {"records": 0})
        bad = [k for k in want if want[k] != got.get(k, 0)]
        if bad:
            what = "; ".join(("records" if k == "records" else f"records in state {k}")
                             + f": {got.get(k, 0)} in samples.jsonl, {want[k]} in "
                             "summary.json" for k in bad)
            raise RunReadError(
                f"{samples} does not hold the records that {summary} counts for model "
                f"{model!r} ({what}): the two files are of different runs, or "
                f"samples.jsonl was cut or edited, and {mixed}. {REPAIR}")


def load_run_records(run_dir: str | Path) -> tuple[list[SampleRecord], dict[str, Any]]:
    """``(records, summary)`` of a run folder.

    ``records``: every valid line of ``samples.jsonl`` as a
    :class:`~heritage_eval.core.record.SampleRecord`, in file order; ``summary``: the
    ``summary.json`` envelope as a dict. Each malformed line is skipped with a
    :class:`RunReadWarning` naming ``file:line``. Raises :class:`RunReadError` (naming
    the path) when the folder is not a run."""
    data = read_run(run_dir)
    for note in data.warnings:
        warnings.warn(note, RunReadWarning, stacklevel=2)
    return data.records, data.summary


# --- models of runs ----------------------------------------------------------------------

@dataclass
class ModelRun:
    """One model of one run: unique display ``name``, record ``model`` spec, the folder,
    its records and its ``summary.json`` block (``metrics``, ``groups``, ``states`` …)."""

    name: str
    model: str
    run_dir: Path
    records: list[SampleRecord]
    block: dict[str, Any]


def metric_specs(summary: dict[str, Any]) -> list[MetricSpec]:
    """The :class:`~heritage_eval.core.benchmark.MetricSpec` list of a summary's
    ``statistics.metric_specs`` (missing fields take the ``MetricSpec`` defaults)."""
    return [MetricSpec(name=str(d["name"]), label=str(d.get("label", d["name"])),
                       states=tuple(d.get("states", ("scored", "unparsed"))),
                       macro_over=d.get("macro_over"), cluster=d.get("cluster"),
                       by=tuple(d.get("by", ())), scale=float(d.get("scale", 100.0)),
                       decimals=int(d.get("decimals", 2)),
                       higher_is_better=bool(d.get("higher_is_better", True)),
                       bounds=_bounds(d.get("bounds", (0.0, 1.0))))
            for d in spec_dicts(summary)]


def _bounds(value: Any) -> tuple[float, float] | None:
    """A recorded ``bounds`` entry: ``[low, high]`` or null (unbounded)."""
    if value is None:
        return None
    low, high = value
    return (float(low), float(high))


def model_runs(runs: list[RunData], specs: list[MetricSpec], keys: list[str],
               notes: list[str]) -> list[ModelRun]:
    """One :class:`ModelRun` per (run, record ``model``), runs in order, models in order
    of first record. A model spec found in several runs is named ``"SPEC (FOLDER)"``
    (``"SPEC (run I)"`` if the folder names clash too). A model missing from its
    summary gets a block recomputed from its records (noted in ``notes``)."""
    found: list[tuple[RunData, str, list[SampleRecord]]] = []
    for run in runs:
        by_model: dict[str, list[SampleRecord]] = {}
        for r in run.records:
            by_model.setdefault(r.model, []).append(r)
        found += [(run, model, records) for model, records in by_model.items()]
    count: dict[str, int] = {}
    for _, model, _ in found:
        count[model] = count.get(model, 0) + 1
    out: list[ModelRun] = []
    for i, (run, model, records) in enumerate(found):
        name = model if count[model] == 1 else f"{model} ({run.path.name})"
        if any(m.name == name for m in out):
            name = f"{model} (run {i + 1})"
        block = run.summary["models"].get(model)
        if not isinstance(block, dict):
            notes.append(f"{run.path}/summary.json has no entry for model {model!r}; its "
                         "statistics were recomputed from samples.jsonl")
            block = model_block(records, specs, keys)
        out.append(ModelRun(name, model, run.path, records, block))
    return out


def counted_scores(m: ModelRun, spec: MetricSpec) -> dict[str, tuple[SampleRecord, float]]:
    """Record id -> (record, score) of the records of ``m`` that count for ``spec``
    (state in ``spec.states``, numeric score); the first record of a repeated id."""
    out: dict[str, tuple[SampleRecord, float]] = {}
    for r, v in metric_values(m.records, spec):
        out.setdefault(r.id, (r, v))
    return out
