"""``heritage-eval score chronicles-ocr``: score answers recorded by the official
``infer.py``, as its ``judge.py`` + ``summarize.py`` do.

``--predictions DIR`` holds ``<model_tag>/results.jsonl`` (the official
``infer_results/`` folder); one tag folder, or one ``results.jsonl`` file, is read as
that one tag (:func:`result_files`). ``--models`` keeps some tags (``a,b`` or several
values; default: every subfolder with a ``results.jsonl``, names starting with ``.``
skipped, as ``judge.py`` scans; other subfolders are named in a note). The whole run goes through
the engine (``run_benchmark``) with nothing sent: the benchmark, in this mode, makes one
record per model tag × image × task from the recorded answers
(:func:`~chronicles_ocr.replay.replayed`), so ``--out`` is one run folder holding every
tag (``record.model`` = the tag), with the platform's intervals per tag and the official
workbook of all tags together (``summary.json["official_summary"]``).

The recorded answers are judged as in a run (:func:`~chronicles_ocr.records.build_record`):
under ``--protocol official`` with the ``extract`` that ``infer.py`` stored, as
``judge.py`` does; under ``corrected`` re-read from the answer. An image of the release
without a row is an ``error`` record (the official judge never sees it); rows of images
outside the release are counted in the notes, as ``judge.py`` counts them
(``missing_in_gt``), and so are images on more than one line. Empty answers (a failed
request in ``infer.py``) are model failures: wrong (0) by default, left out under
``--model-failures exclude``. The skipped entry of an image without a recognition
target (``"error": "no_referring_target", "skipped": true``) is not an answer: it is
recorded as ``run`` records an image it does not ask
(:func:`~chronicles_ocr.records.skipped_entry`), under both protocols and policies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronicles_ocr.loader import Sample
from chronicles_ocr.names import TASK_BY_ID
from chronicles_ocr.protocol import PROTOCOLS
from chronicles_ocr.records import build_record, skipped_entry
from chronicles_ocr.redbox import draw
from chronicles_ocr.replay import RECORDED_SPEC, read_results, replayed
from chronicles_ocr.score_options import ScoreOptions
from heritage_eval.plugin import (
    EvalOutput,
    LoadedData,
    Response,
    RunConfig,
    RunContext,
    SampleRecord,
    UsageError,
    run_benchmark,
)

RESULTS = "results.jsonl"


@dataclass
class Recorded:
    """One tag's recorded answers: ``rows`` (image path -> row), the file's ``digest``,
    reading ``notes``."""

    tag: str
    path: Path
    rows: dict[str, dict[str, Any]]
    digest: str
    notes: list[str]


def result_files(opts: ScoreOptions) -> tuple[dict[str, Path], list[str]]:
    """Tag -> ``results.jsonl`` of ``--predictions`` / ``--models``, and notes on what
    was passed over. ``--predictions`` is the folder of tag folders (every subfolder
    holding ``results.jsonl``; names starting with ``.`` skipped, as ``judge.py`` scans;
    a subfolder without ``results.jsonl`` is named in a note), one tag folder (a folder
    holding ``results.jsonl`` and no tag folder: its name is the tag) or one
    ``results.jsonl`` file (its folder's name is the tag). Raises ``UsageError`` (a
    missing folder, a named tag without results, no tag at all)."""
    root = Path(opts.predictions)
    notes: list[str] = []
    if root.is_file():
        found = {root.parent.name or "model": root}
    elif root.is_dir():
        subs = [d for d in sorted(root.iterdir())
                if d.is_dir() and not d.name.startswith(".")]
        found = {d.name: d / RESULTS for d in subs if (d / RESULTS).is_file()}
        empty = [d.name for d in subs if d.name not in found]
        own = root / RESULTS
        if not found and own.is_file():  # a tag folder itself
            found, empty = {root.absolute().name or "model": own}, []
        elif own.is_file():
            notes.append(f"{own} is not scored: --predictions {root} holds tag folders "
                         f"(<tag>/{RESULTS}); to score it alone, pass the file itself")
        if empty and found:
            notes.append(f"{len(empty)} folder(s) of --predictions {root} hold no {RESULTS} "
                         f"and are not scored: {', '.join(empty)}")
    else:
        raise UsageError(f"--predictions {root}: no such folder or file")
    chosen = opts.model_tags()
    if chosen:
        missing = [t for t in chosen if t not in found]
        if missing:
            raise UsageError(f"--models: no {RESULTS} for {', '.join(missing)} under {root}")
        found = {t: found[t] for t in chosen}
    if not found:
        raise UsageError(f"--predictions {root}: no <model_tag>/{RESULTS} inside (nor a "
                         f"{RESULTS} of its own)")
    return found, notes


def load_recorded(opts: ScoreOptions, images: set[str]) -> tuple[list[Recorded], list[str]]:
    """Every tag's recorded answers and the notes for the summary (folders passed over,
    rows outside the release, skipped or repeated lines). Raises ``UsageError`` for an
    unreadable file."""
    out = []
    files, notes = result_files(opts)
    for tag, path in files.items():
        try:
            rows, digest, read_notes = read_results(str(path))
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--predictions: cannot read {path}: {exc}") from None
        outside = sum(1 for key in rows if key not in images)
        if outside:
            notes.append(f"{tag}: {outside} row(s) of {RESULTS} name images outside the "
                         "release (not scored, as judge.py's missing_in_gt)")
        notes += [f"{tag}: {n}" for n in read_notes]
        out.append(Recorded(tag, path, rows, digest, read_notes))
    return out, notes


def recorded_info(recorded: list[Recorded]) -> dict[str, Any]:
    """Provenance of the recorded answers: per tag its file, rows and hash."""
    return {r.tag: {"results": str(r.path), "rows": len(r.rows), "sha256": r.digest}
            for r in recorded}


def _policy(resp: Response, config: RunConfig) -> Response:
    """``--model-failures exclude``: an empty recorded answer becomes a failed turn (as
    the engine treats a live model's) — but never the official skipped entry, which is
    no answer at all (:func:`~chronicles_ocr.records.skipped_entry`)."""
    if skipped_entry(resp.meta.get("official")):
        return resp
    if config.output.model_failures == "exclude" and resp.text is not None and \
            not resp.text.strip():
        return Response(text=None, error="empty answer",
                        meta={**resp.meta, "failure": "empty_answer"})
    return resp


def _redbox(sample: Sample, resp: Response, data: LoadedData, out_dir: Path
            ) -> tuple[str, str] | None:
    """The red box the recorded answer was given for, drawn into the run folder (for the
    viewer), or ``None``."""
    official = resp.meta.get("official") or {}
    target = official.get("target") if isinstance(official, dict) else None
    box = (target or {}).get("bbox_xyxy")
    if not isinstance(box, list) or len(box) != 4:
        return None
    try:
        path = draw(Path(str(data.image_root)) / sample.image_path,
                    (float(box[0]), float(box[1]), float(box[2]), float(box[3])),
                    out_dir / "redbox")
    except (OSError, ValueError, TypeError):
        return None
    return str(out_dir), str(path)


def recorded_records(data: LoadedData, ctx: RunContext) -> Iterator[SampleRecord]:
    """The records of every tag × sample (tag by tag, samples in order), built as asked
    for."""
    opts = ctx.config.options
    assert isinstance(opts, ScoreOptions)
    protocol = PROTOCOLS[opts.protocol]
    out_dir = Path(ctx.config.out_dir()).absolute()
    for rec in data.extra["recorded"]:
        for sample in data.samples:
            task = TASK_BY_ID.get(sample.task)
            resp = None
            if task is not None and not sample.load_error:
                resp = _policy(replayed(rec.rows.get(sample.image_path), task.zh),
                               ctx.config)
            drawn = _redbox(sample, resp, data, out_dir) \
                if resp is not None and sample.task == "recognition" else None
            yield build_record(
                sample, resp, model=rec.tag, bench=ctx.config.benchmark,
                root=str(data.image_root), protocol=protocol, seed=opts.seed,
                redbox=drawn)


def score(config: RunConfig) -> EvalOutput:
    """Score the recorded answers of ``config.options`` (a :class:`ScoreOptions`) into
    ``config.output.out`` (module docstring). Raises ``UsageError`` and the run folder's
    errors before anything is written."""
    from chronicles_ocr.benchmark import ChroniclesOCR

    if not isinstance(config.options, ScoreOptions):
        raise UsageError("score chronicles-ocr needs its score options (--predictions)")
    run = config.model_copy(update={
        "model": config.model.model_copy(update={"model": RECORDED_SPEC}),
        "output": config.output.model_copy(update={"no_cache": True})})
    return run_benchmark(ChroniclesOCR(), run)
