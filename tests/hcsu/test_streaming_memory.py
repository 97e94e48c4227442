"""A streamed HCSU run's memory does not grow with its records.

Measured with ``tracemalloc`` (allocated bytes, no timing): the peak of scoring and
summarising N samples the way the engine streams them — each result read once from a
one-pass mapping, each record handed to the sink and dropped — over and above what the
loaded plan already holds. Between 200 and 2,000 samples the peak may grow by the
sink's per-sample numbers and the summary's temporaries (a few hundred bytes per
sample: the discrimination summary hands its classes to scikit-learn as arrays), never
by the records: one record is about 12 kB (prompt, candidates, details), and the listed
path (``score`` + ``aggregate``) grew by about that much per sample when this test was
written (12.7 kB for discrimination, 11.9 kB for description; measured with this same
harness).
"""

from __future__ import annotations

import dataclasses
import gc
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heritage_eval import api
from heritage_eval.core import plugins
from heritage_eval.core.benchmark import LoadedData, RunContext
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.streamed_results import OnePassResults
from heritage_eval.core.types import Response
from tests.hcsu.stream_fixtures import FakeScorer, MixBackend, make_release, mix_backend

SMALL, LARGE = 200, 2000
#: bytes a streamed run may add per sample (a record alone is about 12,000)
PER_SAMPLE = 1500


@pytest.fixture(autouse=True, scope="module")
def _backend() -> Iterator[None]:
    with mix_backend():
        yield


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 10 classes x 100 images per domain: 2,000 targets with --per-class 100
    return make_release(tmp_path_factory.mktemp("hcsu") / "data", classes=10, images=100)


def _answers(samples: Any, discrimination: bool
             ) -> Iterator[tuple[str, ItemResult | None]]:
    """One result per sample, made as it is read (the engine's one-pass pairs)."""
    for s in samples:
        asked = s.question if discrimination else s.request
        if asked is None:
            yield str(s.id), None
            continue
        text = asked.labels[0] if discrimination else "Firm strokes and dense ink."
        yield str(s.id), ItemResult(id=str(s.id), responses=[Response(text=text)])


def _peak(bench: Any, data: LoadedData, ctx: RunContext, n: int) -> int:
    """Peak bytes allocated while streaming the first ``n`` samples into the sink and
    reading its body."""
    part = dataclasses.replace(data, samples=list(data.samples[:n]))
    discrimination = bench.name == "hcsu-discrimination"
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        sink = bench.record_sink(part, ctx)
        for record in bench.iter_score(part, OnePassResults(_answers(part.samples,
                                                                     discrimination)), ctx):
            sink.add(record)
        body = sink.body()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert len(body["results"]) == 1
    return peak


@pytest.mark.parametrize("name", ["hcsu-discrimination", "hcsu-description"])
def test_streamed_scoring_is_flat_in_the_number_of_samples(release: Path, tmp_path: Path,
                                                           name: str) -> None:
    bench = plugins.benchmark(name)
    extra: dict[str, Any] = ({"k": 2} if name == "hcsu-discrimination"
                             else {"no_bertscore": True})
    config = api.run_config(name, data=str(release), model="hcsu-mix:m",
                            out=str(tmp_path / "out"), per_class=100, **extra)
    data = bench.load(config)
    assert len(data.samples) == LARGE
    ctx = RunContext(config=config, backend=MixBackend("m"),
                     settings=config.generation.settings())
    bench.prepare(ctx, data)
    if name == "hcsu-description":
        ctx.resources["bertscore"] = FakeScorer()  # a number per answer in the sink
    _peak(bench, data, ctx, SMALL)  # first use: imports, caches
    small, large = _peak(bench, data, ctx, SMALL), _peak(bench, data, ctx, LARGE)
    assert large - small < PER_SAMPLE * (LARGE - SMALL), (small, large)
