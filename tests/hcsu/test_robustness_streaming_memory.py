"""The streamed robustness study's memory does not grow with its records.

Same harness as tests/hcsu/test_study_streaming_memory.py (``tracemalloc``, allocated
bytes, no timing): the peak of streaming one condition's two tasks — N questions and N
requests (``--limit`` N/2 per domain; BERTScore stand-in, no judge) sent, scored,
enveloped, written to ``samples.jsonl`` and folded into the envelope and the
conditions' sinks, then the Table 4 rows and the envelope read — over and above what the
loaded data and the (lazy) plans already hold. SMALL is past the runner's look-ahead
window (1,024 conversations, a fixed cost). From SMALL to LARGE the peak may grow by the
accumulators' per-sample numbers, never by the records (about 12 kB each): the bound is
that file's 2,500 bytes per record. The listed path the study used before
(:func:`~heritage_eval.benchmarks.hcsu.studies.robustness` + ``listed_records``: every
result and record kept), measured by the same harness as a control, must grow by at
least 5,000 bytes per record, so the bound is one the old code fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from heritage_eval.benchmarks.hcsu.bench_base import GROUP_KEYS
from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
from heritage_eval.benchmarks.hcsu.description import DescriptionConfig
from heritage_eval.benchmarks.hcsu.discrimination import DiscriminationConfig
from heritage_eval.benchmarks.hcsu.pipeline import Engine
from heritage_eval.benchmarks.hcsu.robustness_stream import (
    ID_TAGS,
    plan_robustness,
    stream_robustness,
)
from heritage_eval.benchmarks.hcsu.studies import robustness
from heritage_eval.benchmarks.hcsu.study_folder import listed_records
from heritage_eval.benchmarks.hcsu.study_stream import StudyStream
from heritage_eval.core.types import GenerationSettings
from tests.hcsu.stream_fixtures import (
    FakeScorer,
    MixBackend,
    make_release,
    mix_backend,
    traced_peak,
)

#: records per task (one condition, two tasks: twice as many records in all)
SMALL, LARGE = 1300, 2600
#: bytes the streamed study may add per record (a record alone is about 12,000)
PER_RECORD = 2500
#: the listed path keeps at least this much per record (control)
LISTED_AT_LEAST = 5000
DISC = DiscriminationConfig(k=2, per_class=130)
DESC = DescriptionConfig(shots=1, per_class=130)


@pytest.fixture(autouse=True, scope="module")
def _backend() -> Iterator[None]:
    with mix_backend():
        yield


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    # 10 classes x 130 images per domain: 2,600 targets per task with --per-class 130
    root = make_release(tmp_path_factory.mktemp("hcsu") / "data", classes=10, images=130)
    out = {"Wild (Raw)": root}
    _streamed(out, tmp_path_factory.mktemp("warm"), 50)()  # first use: imports, caches
    return out


def _engines() -> dict[str, Engine]:
    engine = Engine(MixBackend("m"), GenerationSettings())
    return {"discrimination": engine, "description": engine}


def _streamed(folders: dict[str, Path], out: Path, n: int) -> Callable[[], object]:
    plans = plan_robustness(folders, DISC, DESC, n // 2)  # --limit n/2 per domain
    engines = _engines()

    def run() -> object:
        with StudyStream(out / "samples.jsonl", (ACCURACY, *DESCRIPTION_METRICS),
                         (*ID_TAGS, *GROUP_KEYS)) as stream:
            rows = stream_robustness(stream, plans, DISC, DESC, engines,
                                     FakeScorer(), None, None)  # type: ignore[arg-type]
        assert stream.n_records == 2 * n
        return rows, stream.envelope.envelope("x")
    return run


def _listed(folders: dict[str, Path], n: int) -> Callable[[], object]:
    engines = _engines()

    def run() -> object:
        rows, runs = robustness(folders, DISC, DESC, engines, FakeScorer(),  # type: ignore[arg-type]
                                None, None, n // 2)
        records = listed_records(runs, ID_TAGS, True, False)
        assert len(records) == 2 * n
        return rows, records
    return run


def test_streamed_robustness_is_flat_in_the_number_of_records(
        folders: dict[str, Path], tmp_path: Path) -> None:
    small = traced_peak(_streamed(folders, tmp_path, SMALL))
    large = traced_peak(_streamed(folders, tmp_path, LARGE))
    assert large - small < PER_RECORD * 2 * (LARGE - SMALL), (small, large)


def test_the_listed_robustness_path_grows_with_its_records(folders: dict[str, Path]) -> None:
    # control: the harness sees the growth of the path the study used before
    small = traced_peak(_listed(folders, SMALL))
    large = traced_peak(_listed(folders, LARGE))
    assert large - small > LISTED_AT_LEAST * 2 * (LARGE - SMALL), (small, large)
