"""A streamed study (``hcsu k-sweep`` / ``shot-sweep`` / ``ablation``) writes what the
listed path wrote.

The reference is the listed path the studies used before they streamed, rebuilt here
from its unchanged parts: :func:`~heritage_eval.benchmarks.hcsu.studies.k_sweep` /
``description_ablation`` (every result through ``run_items``),
:func:`~heritage_eval.benchmarks.hcsu.study_folder.listed_records` (``run_records`` +
``mark_records``), :func:`heritage_eval.core.summary.envelope` over the list, and the
figures' intervals as the old figure code computed them, :func:`estimate` over the
records filtered by condition and domain. Inputs: a generated release with a missing
image (an ``error`` row) and the scripted ``hcsu-mix`` model (right, wrong, unparsed,
empty, failed, refused and cut answers; tests/hcsu/stream_fixtures.py).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.hcsu.bench_base import GROUP_KEYS
from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
from heritage_eval.benchmarks.hcsu.cli_args import (
    ABLATION_OPTIONS,
    K_SWEEP_OPTIONS,
    SHOT_SWEEP_OPTIONS,
    ablation_args,
    k_sweep_args,
    shot_sweep_args,
)
from heritage_eval.benchmarks.hcsu.figures import record_intervals
from heritage_eval.benchmarks.hcsu.options import (
    DESCRIPTION,
    DISCRIMINATION,
    description_config,
    discrimination_config,
)
from heritage_eval.benchmarks.hcsu.runio import (
    engine_for,
    judge_backend,
    judge_engine,
    load_data,
    model_for,
)
from heritage_eval.benchmarks.hcsu.studies import (
    description_ablation,
    k_sweep,
    plan_ablation,
    plan_k_sweep,
    plan_shot_sweep,
    shot_sweep,
)
from heritage_eval.benchmarks.hcsu.study_folder import listed_records
from heritage_eval.benchmarks.hcsu.study_stream import StudyStream
from heritage_eval.benchmarks.hcsu.summary_sink import DiscriminationSink
from heritage_eval.benchmarks.hcsu.tables import (
    discrimination_table,
    k_sweep_table,
    shot_sweep_table,
)
from heritage_eval.benchmarks.outcomes import DEFAULT_POLICY
from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.store import RunFolder
from heritage_eval.core.summary import envelope, estimate
from tests.hcsu.stream_fixtures import FakeScorer, make_release, mix_backend

#: (command, tag, extra options) of the streamed studies
STUDIES = [("k-sweep", "k", ["--ks", "2,3,5"]), ("ablation", "descriptions", ["--k", "3"]),
           ("shot-sweep", "shots", ["--shot-list", "1", "2", "--judge", "hcsu-mix:judge"])]
#: the studies' metrics
METRICS = {"k-sweep": (ACCURACY,), "ablation": (ACCURACY,),
           "shot-sweep": DESCRIPTION_METRICS}


@pytest.fixture(autouse=True)
def _fake_bertscore(fake_study_bertscore: None) -> None:
    """BERTScore without a model download: the same stand-in in both paths."""


@pytest.fixture(autouse=True, scope="module")
def _backend() -> Iterator[None]:
    with mix_backend():
        yield


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_release(tmp_path_factory.mktemp("hcsu") / "data", classes=4, images=6,
                        corrupt=True)


def _argv(command: str, release: Path, out: Path, extra: list[str]) -> list[str]:
    return [command, "--data", str(release), "--model", "hcsu-mix:m", "--per-class", "3",
            "--out", str(out), *extra]


def _listed(command: str, tag: str, argv: list[str], ref: Path
            ) -> tuple[list[dict[str, Any]], list[SampleRecord]]:
    """``(results, records)`` of the study as the listed path made them."""
    cmd, add = {"k-sweep": (K_SWEEP_OPTIONS, k_sweep_args),
                "ablation": (ABLATION_OPTIONS, ablation_args),
                "shot-sweep": (SHOT_SWEEP_OPTIONS, shot_sweep_args)}[command]
    parser = argparse.ArgumentParser()
    add(parser)
    config = cmd.config(parser.parse_args(argv[1:]))
    opts: Any = config.options
    ds = load_data(opts, ref)
    ref.mkdir(parents=True, exist_ok=True)
    task = DESCRIPTION if command == "shot-sweep" else DISCRIMINATION
    engine = engine_for(config, RunFolder(ref), model_for(config.model, task))
    judge = None
    if command == "shot-sweep":
        dbase = description_config(opts)
        splans, _ = plan_shot_sweep(ds, dbase, list(opts.shot_list))
        judge = judge_engine(config, RunFolder(ref), judge_backend(opts, config.model))
        runs = shot_sweep(ds, dbase, splans, engine, FakeScorer(), None,  # type: ignore[arg-type]
                          judge)
    elif command == "k-sweep":
        base = discrimination_config(opts, dataset=ds)
        plans, _, _ = plan_k_sweep(ds, base, list(opts.ks))
        runs = k_sweep(ds, base, plans, engine)
    else:
        base = discrimination_config(opts, dataset=ds)
        runs = description_ablation(ds, base, plan_ablation(ds, base, ["random", "expert"]),
                                    engine)
    try:
        return [s.entry() for s in runs], listed_records(runs, tag, command == "shot-sweep",
                                                         command == "shot-sweep")
    finally:
        for eng in (engine, judge):
            if eng is not None and eng.cache is not None:
                eng.cache.close()


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize(("command", "tag", "extra"), STUDIES)
def test_streamed_study_writes_the_listed_output(release: Path, tmp_path: Path,
                                                 command: str, tag: str,
                                                 extra: list[str]) -> None:
    out = tmp_path / "out"
    argv = _argv(command, release, out, extra)
    assert main(["hcsu", *argv]) == 0
    results, records = _listed(command, tag, argv, tmp_path / "ref")
    # the scripted model gives every kind of row (else the comparison proves little)
    assert {r.state.value for r in records} >= {"scored", "error"}
    assert any(r.details.get("truncated") for r in records)
    assert any(r.details.get("model_failure") for r in records)
    lines = (out / "samples.jsonl").read_text("utf-8").splitlines()
    assert lines == [r.to_json_line() for r in records]
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    env = envelope(f"hcsu {command}", records, METRICS[command], (tag, *GROUP_KEYS))
    assert summary["models"] == _json(env["models"])
    assert summary["run_limits"] == _json(env["run_limits"])
    assert summary["results"] == _json(results)
    table = {"k-sweep": k_sweep_table, "shot-sweep": shot_sweep_table}.get(
        command, lambda r: discrimination_table(r, label="Descriptions",
                                                label_key="descriptions"))(results)
    assert table in (out / "summary.md").read_text("utf-8")


def _old_interval(records: list[SampleRecord], macro: bool, **match: str
                  ) -> tuple[float | None, float | None]:
    """The figures' interval before streaming (figures.py's ``_interval``, as it was)."""
    subset = [r for r in records if all(r.groups.get(k) == v for k, v in match.items())]
    est = estimate(subset, ACCURACY, macro=macro)
    return est.get("ci_low"), est.get("ci_high")


def test_streamed_intervals_equal_the_listed_ones(release: Path, tmp_path: Path) -> None:
    argv = _argv("k-sweep", release, tmp_path / "unused", ["--ks", "2,3,5"])
    results, records = _listed("k-sweep", "k", argv, tmp_path / "ref")
    ks = [int(r["k"]) for r in results]
    with StudyStream(tmp_path / "samples.jsonl", (ACCURACY,), ("k", *GROUP_KEYS)) as stream:
        for k in ks:
            sink = DiscriminationSink("hcsu-mix:m", [], DEFAULT_POLICY,
                                      _config(results, k))
            cond = stream.condition({"k": k}, sink)
            stream.add(cond, iter([r for r in records if r.groups["k"] == str(k)]))
    assert stream.results() == results  # the sinks' entries are the listed entries
    streamed, listed = stream.intervals("k"), record_intervals(records, "k", (ACCURACY,))
    assert _json(streamed) == _json(listed)
    checked = 0
    for k in ks:
        block = streamed[str(k)]
        acc = block["metrics"]["accuracy"]
        assert (acc.get("ci_low"), acc.get("ci_high")) == _old_interval(records, True,
                                                                        k=str(k))
        for domain, est in block["groups"]["domain"].items():
            got = est["accuracy"].get("ci_low"), est["accuracy"].get("ci_high")
            assert got == _old_interval(records, False, k=str(k), domain=domain)
            checked += got[0] is not None
    assert checked >= 4  # real intervals were compared, not only missing ones


def _config(results: list[dict[str, Any]], k: int) -> Any:
    """The K-sweep condition's task config (only what the entry reads)."""
    from heritage_eval.benchmarks.hcsu.discrimination import DiscriminationConfig

    entry = next(r for r in results if r["k"] == k)
    return DiscriminationConfig(k=k, per_class=entry["per_class"],
                                pool=entry["distractor_pool"],
                                descriptions=entry["descriptions"])
