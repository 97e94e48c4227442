"""The Chronicles-OCR summary body folded one record at a time (a streamed ``run`` /
``score chronicles-ocr``).

:class:`SummarySink` is the benchmark's ``RecordSink``: the engine hands it each record
as its ``samples.jsonl`` line is written, then drops the record. The sink keeps only the
per-image numbers the official summary averages — under the run's protocol and the other
one, as 8-byte floats in one ``array('d')`` per model × script × task key (at most two
numbers per record and protocol: Detection and Spotting) — and the record counts per
model, task and state. :meth:`SummarySink.body` then gives exactly
:func:`~chronicles_ocr.report.aggregate_body` of the same records in the same order: the
means are the same sums over the same values in the same order (:func:`_mean` of
:mod:`chronicles_ocr.official_summary`), and scripts, keys and models keep their order
of first appearance, so every cell and every difference is equal, not merely close.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from chronicles_ocr.official_summary import Workbook, workbook_of_means
from chronicles_ocr.protocol import Protocol
from chronicles_ocr.report import assemble_body, count_state, record_scores
from heritage_eval.plugin import RecordSink, SampleRecord

#: model -> script (``font_type``) -> official key -> the per-image values, in order
ScoreColumns = dict[str, dict[str, dict[str, "array[float]"]]]


def _add(columns: ScoreColumns, model: str, record: SampleRecord, other: bool) -> None:
    by_script = columns.setdefault(model, {})
    for script, key, value in record_scores(record, other):
        by_script.setdefault(script, {}).setdefault(key, array("d")).append(value)


def _workbook(columns: ScoreColumns, models: Sequence[str]) -> Workbook:
    """The workbook of ``columns`` (every model of ``models``, even one without a score,
    as :func:`~chronicles_ocr.official_summary.workbook` gets every model)."""
    return workbook_of_means({
        m: {script: {key: (sum(values) / len(values) if values else None)
                     for key, values in keys.items()}
            for script, keys in columns.get(m, {}).items()}
        for m in models})


class SummarySink(RecordSink):
    """:func:`~chronicles_ocr.report.aggregate_body` from streamed records (module
    docstring). ``protocol``: the run's protocol; ``notes``: the summary's notes (the list
    is read when :meth:`body` is called, so notes appended while streaming count)."""

    def __init__(self, protocol: Protocol, notes: list[str]) -> None:
        self.protocol = protocol
        self.notes = notes
        self.counts: dict[str, dict[str, dict[str, int]]] = {}
        self.scores: ScoreColumns = {}
        self.other_scores: ScoreColumns = {}

    def add(self, record: SampleRecord) -> None:
        """Fold ``record`` in: its state count and its official numbers (both
        protocols)."""
        model = record.model
        count_state(self.counts.setdefault(model, {}), record)
        _add(self.scores, model, record, other=False)
        _add(self.other_scores, model, record, other=True)

    def body(self) -> dict[str, Any]:
        """The summary body of the records added (equal to ``aggregate_body``)."""
        models = list(self.counts)
        return assemble_body(self.protocol, self.counts,
                             _workbook(self.scores, models),
                             _workbook(self.other_scores, models), self.notes)
