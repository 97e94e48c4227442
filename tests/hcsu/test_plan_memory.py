"""What a loaded and planned HCSU run holds per sample (tracemalloc, no timing).

``bench.load`` reads the release and plans every sample; the run then holds that for its
whole length, so it must be small per sample: compact images (the row's values in a
tuple, shared texts) and a lazy plan (each question built when read, nothing kept).
Measured as the growth of the memory held after ``load`` and one pass over the plan
(as the engine's send pass reads it) between 400 and 4,000 samples, which cancels what
does not depend on the number of samples (imports, caches, per-class lists).

Measured on this release when the test was written (bytes per sample, held after load
and one pass, Python 3.11): before the change 3,255 (discrimination) and 3,128
(description) — a pydantic record per image, the JSON's strings, a resolved ``Path``,
and the planned question (K candidates with their path strings) or request per sample;
after it 514 and 514 (the image: its slots, sample id, file name, value tuple, record
number). The bound, 1,200, fails on the old code and leaves room for other Python
versions.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heritage_eval import api
from heritage_eval.core import plugins
from tests.hcsu.stream_fixtures import make_release, mix_backend

SMALL, LARGE = 400, 4000
#: bytes a loaded, planned sample may hold (measured: 514; before: 3,128-3,255)
PER_SAMPLE = 1200
#: bytes from which a single allocation is an interpreter table, not counted
BLOCK = 256 * 1024


@pytest.fixture(autouse=True, scope="module")
def _backend() -> Iterator[None]:
    with mix_backend():
        yield


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    # 4 classes per domain: 50 or 500 images each, every image a target
    base = tmp_path_factory.mktemp("hcsu-plan")
    return {SMALL: make_release(base / "small", classes=4, images=SMALL // 8),
            LARGE: make_release(base / "large", classes=4, images=LARGE // 8)}


def _small_blocks(snapshot: tracemalloc.Snapshot) -> int:
    """Bytes traced in blocks under :data:`BLOCK`: a block that large is one of the
    interpreter's tables (the interned strings' grows in a step, while some ``Path``
    interns a name, wherever it crosses a size), never a sample's data — a list of
    4,000 samples' references is 32 kB."""
    return sum(t.size for t in snapshot.traces if t.size < BLOCK)


def _held(name: str, release: Path, n: int, out: Path) -> int:
    """Bytes held after loading ``release`` (``n`` samples) and reading its plan once."""
    extra: dict[str, Any] = ({"k": 3} if name == "hcsu-discrimination"
                             else {"no_bertscore": True})
    bench = plugins.benchmark(name)
    config = api.run_config(name, data=str(release), model="hcsu-mix:m", out=str(out),
                            per_class=n // 8, **extra)
    gc.collect()
    tracemalloc.start()
    try:
        base = _small_blocks(tracemalloc.take_snapshot())
        data = bench.load(config)
        assert len(data.samples) == n
        for sample in data.samples:  # the send pass: each item built, then dropped
            assert sample.id
        gc.collect()
        held = _small_blocks(tracemalloc.take_snapshot()) - base
    finally:
        tracemalloc.stop()
    del data
    return held


@pytest.mark.parametrize("name", ["hcsu-discrimination", "hcsu-description"])
def test_loaded_plan_is_small_per_sample(releases: dict[int, Path], tmp_path: Path,
                                         name: str) -> None:
    # first use (imports; caches of every character, bounded, not per sample)
    _held(name, releases[LARGE], LARGE, tmp_path / "warm")
    small = _held(name, releases[SMALL], SMALL, tmp_path / "s")
    large = _held(name, releases[LARGE], LARGE, tmp_path / "l")
    per_sample = (large - small) / (LARGE - SMALL)
    assert per_sample < PER_SAMPLE, (small, large, per_sample)
