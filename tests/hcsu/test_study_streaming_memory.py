"""A streamed study's memory does not grow with its records.

Measured with ``tracemalloc`` (allocated bytes, no timing), as
tests/hcsu/test_streaming_memory.py measures ``run``: the peak of running one study
condition of N questions (K sweep) or requests (shot sweep, BERTScore stand-in) through
the study's path — sent, scored, enveloped, written to ``samples.jsonl`` and folded into
the envelope, the condition's sink and its interval block, then the summaries read —
over and above what the loaded plan already holds. The runner plans a window of up to
:data:`~heritage_eval.core.runner.WINDOW_MIN` (1,024) conversations ahead, a fixed cost
reached at about a thousand samples (with a one-off rise just after it), so SMALL is
past both. From SMALL to LARGE the peak may grow by the accumulators' per-sample
numbers and the remembered image sizes (core.fileinfo), never by the records (about
12 kB each). Measured when this test was written: about 0.8 kB a sample (shot sweep)
and 1.4 kB (K sweep, whose peak includes the summary's numpy temporaries); the listed
path the studies used before (``k_sweep`` + ``listed_records``: every result and record
kept), measured by the same harness as a control, grew by 12.8 kB a sample, so the
bound is one the old code fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from heritage_eval.benchmarks.hcsu.bench_base import GROUP_KEYS
from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
from heritage_eval.benchmarks.hcsu.description import DescriptionConfig, PlannedRequest
from heritage_eval.benchmarks.hcsu.discrimination import DiscriminationConfig, PlannedItem
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.pipeline import Engine, plan_description, plan_discrimination
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.benchmarks.hcsu.studies import k_sweep
from heritage_eval.benchmarks.hcsu.study_folder import listed_records
from heritage_eval.benchmarks.hcsu.study_stream import (
    StudyStream,
    stream_conditions,
    stream_description_conditions,
)
from heritage_eval.core.types import GenerationSettings
from tests.hcsu.stream_fixtures import (
    FakeScorer,
    MixBackend,
    make_release,
    mix_backend,
    traced_peak,
)

SMALL, LARGE = 1300, 2600
#: bytes the streamed study may add per sample (a record alone is about 12,000)
PER_SAMPLE = 2500
#: the listed path keeps at least this much per question (control)
LISTED_AT_LEAST = 5000

Setup = tuple[HcsuDataset, DiscriminationConfig, list[PlannedItem], Engine]
DescSetup = tuple[HcsuDataset, DescriptionConfig, list[PlannedRequest], Engine]


@pytest.fixture(autouse=True, scope="module")
def _backend() -> Iterator[None]:
    with mix_backend():
        yield


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    # 10 classes x 130 images per domain: 2,600 targets with --per-class 130
    root = make_release(tmp_path_factory.mktemp("hcsu") / "data", classes=10, images=130)
    ds = load_hcsu(root)
    base = DiscriminationConfig(k=2, per_class=130)
    plan = plan_discrimination(ds, base)
    assert len(plan) == LARGE
    setup = ds, base, plan, Engine(MixBackend("m"), GenerationSettings())
    _streamed(setup, tmp_path_factory.mktemp("warm"), 50)()  # first use: imports, caches
    return setup


@pytest.fixture(scope="module")
def desc_setup(setup: Setup, tmp_path_factory: pytest.TempPathFactory) -> DescSetup:
    ds, _, _, engine = setup
    base = DescriptionConfig(shots=1, per_class=130)
    plan = plan_description(ds, base)
    assert len(plan) == LARGE
    out: DescSetup = ds, base, plan, engine
    _described(out, tmp_path_factory.mktemp("warm"), 50)()  # first use
    return out


def _streamed(setup: Setup, out: Path, n: int) -> Callable[[], object]:
    ds, base, plan, engine = setup

    def run() -> object:
        with StudyStream(out / "samples.jsonl", (ACCURACY,), ("k", *GROUP_KEYS)) as stream:
            stream_conditions(stream, ds, base, {2: plan[:n]}, engine, "k", "K={}")
        assert stream.n_records == n
        return stream.results(), stream.intervals("k"), stream.envelope.envelope("x")
    return run


def _described(setup: DescSetup, out: Path, n: int) -> Callable[[], object]:
    ds, base, plan, engine = setup

    def run() -> object:
        with StudyStream(out / "samples.jsonl", DESCRIPTION_METRICS,
                         ("shots", *GROUP_KEYS)) as stream:
            stream_description_conditions(stream, ds, base, {1: plan[:n]}, engine,
                                          FakeScorer(), None, None)  # type: ignore[arg-type]
        assert stream.n_records == n
        return stream.results(), stream.intervals("shots"), stream.envelope.envelope("x")
    return run


def _listed(setup: Setup, n: int) -> Callable[[], object]:
    ds, base, plan, engine = setup

    def run() -> object:
        runs = k_sweep(ds, base, {2: plan[:n]}, engine)
        return runs, listed_records(runs, "k")
    return run


def test_streamed_study_is_flat_in_the_number_of_questions(setup: Setup,
                                                           tmp_path: Path) -> None:
    small = traced_peak(_streamed(setup, tmp_path, SMALL))
    large = traced_peak(_streamed(setup, tmp_path, LARGE))
    assert large - small < PER_SAMPLE * (LARGE - SMALL), (small, large)


def test_streamed_shot_sweep_is_flat_in_the_number_of_requests(desc_setup: DescSetup,
                                                                tmp_path: Path) -> None:
    small = traced_peak(_described(desc_setup, tmp_path, SMALL))
    large = traced_peak(_described(desc_setup, tmp_path, LARGE))
    assert large - small < PER_SAMPLE * (LARGE - SMALL), (small, large)


def test_the_listed_study_path_grows_with_its_records(setup: Setup) -> None:
    # control: the harness sees the growth of the path the studies used before
    small = traced_peak(_listed(setup, SMALL))
    large = traced_peak(_listed(setup, LARGE))
    assert large - small > LISTED_AT_LEAST * (LARGE - SMALL), (small, large)
