"""A run folder's result files: ``samples.jsonl`` (listed or streamed), ``summary.json``,
``summary.md``, and what a run hands back (:class:`EvalOutput`).

:func:`stream_samples` is the streamed form used by benchmarks with a
:class:`~heritage_eval.core.benchmark.RecordSink` (memory flat in dataset size): each
record's line is written as it comes (temporary file renamed at the end) and folded into
the envelope and the body; no record is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from heritage_eval.core.benchmark import RecordSink
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.store import AtomicLineWriter, RunFolder, atomic_write_lines
from heritage_eval.core.summary import EnvelopeAccumulator


class EvalOutput:
    """What :func:`execute` produced: the records, the whole summary, the folder, and
    the exit status (0 done, 1 nothing answered).

    ``records=None`` (a streamed run, which keeps no record): :attr:`records` reads them
    back from ``out/samples.jsonl`` on first use (as written: secrets redacted)."""

    def __init__(self, records: list[SampleRecord] | None, summary: dict[str, Any],
                 out: Path, status: int) -> None:
        self._records = records
        self.summary = summary
        self.out = out
        self.status = status

    @property
    def kept_records(self) -> list[SampleRecord] | None:
        """The records when the run kept them in memory, ``None`` for a streamed run
        (nothing is read)."""
        return self._records

    @property
    def records(self) -> list[SampleRecord]:
        """Every record of the run, in ``samples.jsonl`` order."""
        if self._records is None:
            from heritage_eval.core.records_io import read_records

            self._records = read_records(self.out / "samples.jsonl")
        return self._records


def stream_samples(path: Path, records: Iterable[SampleRecord],
                   accumulator: EnvelopeAccumulator, sink: RecordSink) -> int:
    """Write each record's ``samples.jsonl`` line as it comes (temporary file renamed
    onto ``path`` at the end: a crash never leaves a half file) and fold it into
    ``accumulator`` (the envelope) and ``sink`` (the benchmark's body); no record is
    kept. Returns the number of lines written."""
    with AtomicLineWriter(path) as writer:
        for r in records:
            writer.write(r.to_json_line())
            accumulator.add(r)
            sink.add(r)
    return writer.n_lines


def write_summary(folder: RunFolder, summary: dict[str, Any], markdown: str) -> None:
    """Write ``summary.json`` and ``summary.md`` atomically."""
    folder.write_json("summary.json", summary)
    folder.write_text("summary.md", markdown)


def write_run(folder: RunFolder, records: list[SampleRecord], summary: dict[str, Any],
              markdown: str) -> None:
    """Write ``samples.jsonl`` (streamed to a temporary file, then renamed),
    ``summary.json`` and ``summary.md`` atomically."""
    atomic_write_lines(folder.path("samples.jsonl"), (r.to_json_line() for r in records))
    write_summary(folder, summary, markdown)


def merge_summary(env: dict[str, Any], body: dict[str, Any], prov: dict[str, Any]
                  ) -> dict[str, Any]:
    """The envelope ``env`` with the body's own keys after it and the provenance
    ``prov`` (updated by the body's ``provenance``, if any)."""
    summary = {**env, **{k: v for k, v in body.items() if k not in env}}
    summary["provenance"] = {**prov, **body.get("provenance", {})}
    return summary


def partial_banner(summary: dict[str, Any]) -> str:
    """The PARTIAL notice put at the top of ``summary.md`` of a ``--limit`` run."""
    if not summary.get("partial"):
        return ""
    limit = summary.get("provenance", {}).get("limit")
    return (f"> **PARTIAL** — a `--limit {limit}` run: only part of the data was evaluated; "
            "these numbers are not comparable with a full run.\n\n")


def cache_line(summary: dict[str, Any], cache: str | Path | None = "cache.sqlite"
               ) -> str | None:
    """``answers from the cache (cache.sqlite): 10 of 27 record(s)`` — how many records'
    scored answers the response cache gave (``response_outcomes.cached``, all models), so
    a re-run shows that it sent nothing again. ``cache``: the cache file as the user named
    it (``--cache PATH``; default the run folder's ``cache.sqlite``), ``None`` for a run
    without a cache (``--no-cache``: no line). ``None`` also when the summary has no
    model."""
    models: dict[str, Any] = summary.get("models") or {}
    if not models or cache is None:
        return None
    cached = sum(int((b.get("response_outcomes") or {}).get("cached", 0))
                 for b in models.values())
    total = sum(int(b.get("n_records", 0)) for b in models.values())
    return f"answers from the cache ({cache}): {cached} of {total} record(s)"
