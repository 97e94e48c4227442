"""Streamed ``score chronicles-ocr`` keeps memory flat in the number of records (issue
23): the records of ``ChroniclesOCR.iter_score`` folded by its ``record_sink`` (what the
engine does: each record's line written, then the record dropped) allocate, at their
peak, about as much for ten times the images, and the sink keeps a few numbers per
record. Measured with ``tracemalloc`` (allocations, not time); the release and the
recorded answers are loaded before tracing starts (and a first, untraced pass fills the
per-image caches). Before streaming there was no sink
(the test fails at once) and the engine kept ``score``'s whole list of records."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from chronicles_ocr.benchmark import ChroniclesOCR
from chronicles_ocr.replay import RECORDED_SPEC
from chronicles_ocr.scoring import ScoreOptions

from heritage_eval.core.benchmark import RunContext
from heritage_eval.core.config import build_run_config
from heritage_eval.core.types import GenerationSettings
from heritage_eval.models.base import create_backend
from tests.chronicles.stream_data import write_predictions, write_release


def _stream(tmp_path: Path, copies: int) -> tuple[int, int, int]:
    """``(peak bytes while streaming, bytes the sink holds at the end, records)`` for a
    release of ``copies`` × the demo set, answers drawn from the probes."""
    root = tmp_path / str(copies)
    data = write_release(root / "data", copies)
    preds = write_predictions(root / "preds", copies, {"gen": 5})
    config = build_run_config("chronicles-ocr", ScoreOptions, {
        "data": data, "predictions": preds, "out": root / "run",
        "model": RECORDED_SPEC})
    bench = ChroniclesOCR()
    loaded = bench.load(config)
    ctx = RunContext(config=config, backend=create_backend("baseline:random"),
                     settings=GenerationSettings())
    # a first pass fills the platform's per-file caches (image sizes, bounded by
    # heritage_eval.core.fileinfo.MEMO_MAX) and the samples' cached paths: per image, not
    # per record, and the same for the list path; not counted
    for _ in bench.iter_score(loaded, {}, ctx):
        pass
    tracemalloc.start()
    try:
        sink = bench.record_sink(loaded, ctx)
        assert sink is not None, "chronicles-ocr gives no record sink: it does not stream"
        before = tracemalloc.get_traced_memory()[0]
        count = 0
        for record in bench.iter_score(loaded, {}, ctx):
            record.to_json_line()  # the engine writes the line, then drops the record
            sink.add(record)
            count += 1
        held = tracemalloc.get_traced_memory()[0] - before
        sink.body()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, held, count


def test_peak_memory_is_flat_in_the_records(tmp_path: Path) -> None:
    _stream(tmp_path, 1)  # first use: lazy imports and caches, not counted
    small, _, n_small = _stream(tmp_path, 4)
    large, held, n_large = _stream(tmp_path, 40)
    # 60 samples per copy of the demo (9 ancient images × 4 tasks + 12 modern × 2)
    assert (n_small, n_large) == (240, 2400)
    # measured (tracemalloc, Python 3.11): peak 69 kB at 240 records and 116 kB at 2,400;
    # the sink held 71 kB at 2,400 (30 B a record). The list of records (the engine's
    # list path, what the code did before streaming) peaked at 1.4 MB and 14.3 MB
    # (5.9 kB a record): every bound below fails on it by a factor of 5 or more.
    assert large < 3 * small, (small, large)
    assert large - small < 64 * (n_large - n_small), (small, large)
    # the sink: a few 8-byte numbers per record (at most 4: Detection and Spotting under
    # both protocols) and small counters, not the records
    assert held < 64 * n_large, (held, n_large)
