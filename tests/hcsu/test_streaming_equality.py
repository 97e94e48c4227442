"""Streamed HCSU runs write what the listed runs write.

Reference (decision): the same ``run`` with the benchmark's ``record_sink`` switched off,
so that the engine takes its listed path — ``bench.score`` (every record in a list) and
``bench.aggregate`` over it — which is the code HCSU ran before it streamed. The two run
folders must hold the same ``samples.jsonl`` lines and the same ``summary.json`` and
``summary.md`` but for the timings (request latencies, run seconds). The scripted model
(:mod:`tests.hcsu.stream_fixtures`) mixes right and wrong answers, unparseable ones,
empty answers, failed requests, refusals and answers cut at the token limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.hcsu import benchmark_description, description_stream
from heritage_eval.benchmarks.hcsu import held_records as held_module
from heritage_eval.benchmarks.hcsu.benchmark import HcsuDiscrimination
from heritage_eval.benchmarks.hcsu.benchmark_description import HcsuDescription
from heritage_eval.cli.main import main
from heritage_eval.core.types import Response
from tests.hcsu.stream_fixtures import FakeScorer, MixBackend, make_release, mix_backend

_VOLATILE = {"latency_s", "run_seconds", "created", "started", "finished", "timestamp",
             "created_at", "started_at", "finished_at", "date", "created_utc"}


@pytest.fixture(autouse=True, scope="module")
def _backend() -> Iterator[None]:
    with mix_backend():
        yield


def _strip(value: Any) -> Any:
    """``value`` without its timing keys (any depth)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _folder(out: Path) -> tuple[list[Any], Any, list[str]]:
    lines = (out / "samples.jsonl").read_text("utf-8").splitlines()
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    md = [line for line in (out / "summary.md").read_text("utf-8").splitlines()
          if "seconds" not in line and "created (UTC)" not in line]
    return [_strip(json.loads(line)) for line in lines], _strip(summary), md


def _both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bench: type, argv: list[str]
          ) -> tuple[tuple[list[Any], Any, list[str]], tuple[list[Any], Any, list[str]], int]:
    streamed = tmp_path / "streamed"
    rc = main([*argv, "--out", str(streamed)])
    with monkeypatch.context() as m:
        m.setattr(bench, "record_sink", lambda self, data, ctx: None)
        listed = tmp_path / "listed"
        assert main([*argv, "--out", str(listed)]) == rc
    return _folder(streamed), _folder(listed), rc


@pytest.mark.parametrize(("k", "limit", "policy", "corrupt"), [
    (2, None, "wrong", False), (3, 4, "exclude", True), (5, None, "exclude", False),
    (4, 7, "wrong", True)])
def test_discrimination_streams_what_it_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               k: int, limit: int | None, policy: str,
                                               corrupt: bool) -> None:
    data = make_release(tmp_path / "data", classes=6, images=7, corrupt=corrupt)
    argv = ["run", "hcsu-discrimination", "--data", str(data), "--model", "hcsu-mix:m",
            "--k", str(k), "--model-failures", policy, "--distractor-pool", "all",
            *(["--limit", str(limit)] if limit else [])]
    (recs, summary, md), (ref_recs, ref_summary, ref_md), _ = _both(
        tmp_path, monkeypatch, HcsuDiscrimination, argv)
    assert recs == ref_recs and summary == ref_summary and md == ref_md
    if limit is None:  # the mix reached every path
        assert {"scored", "unparsed", "error"} <= {r["state"] for r in recs}
        assert any(r["details"].get("truncated") for r in recs)


@pytest.mark.parametrize(("window", "held", "judge", "policy", "limit", "fail"), [
    (3, 2, True, "wrong", None, False),   # small windows, records spilled to the file
    (1000, 1000, True, "exclude", 5, False),  # one window: the listed run's batches
    (4, 1, False, "wrong", None, False),  # BERTScore only
    (2, 3, True, "wrong", 6, True)])      # BERTScore down from the start, judge only
def test_description_streams_what_it_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            window: int, held: int, judge: bool, policy: str,
                                            limit: int | None, fail: bool) -> None:
    data = make_release(tmp_path / "data", classes=4, images=6, corrupt=True)
    monkeypatch.setattr(description_stream, "WINDOW", window)
    monkeypatch.setattr(held_module, "MEMORY_LIMIT", held)
    monkeypatch.setattr(benchmark_description, "scorer_for",
                        lambda opts: (FakeScorer(fail=fail), None))
    queued: list[int] = []  # records held after each push (in memory and on file)
    push = held_module.HeldRecords.push

    def spy(self: held_module.HeldRecords, record: Any, tag: int) -> None:
        push(self, record, tag)
        queued.append(len(self))
    monkeypatch.setattr(held_module.HeldRecords, "push", spy)
    argv = ["run", "hcsu-description", "--data", str(data), "--model", "hcsu-mix:m",
            "--model-failures", policy, "--shots", "2",
            *(["--judge", "hcsu-mix:judge"] if judge else []),
            *(["--limit", str(limit)] if limit else [])]
    (recs, summary, md), (ref_recs, ref_summary, ref_md), _ = _both(
        tmp_path, monkeypatch, HcsuDescription, argv)
    assert recs == ref_recs
    assert summary == ref_summary and md == ref_md
    if policy == "wrong" and limit is None:  # the mix reached the held-back path:
        zero = [r for r in recs if r["state"] == "unparsed"]  # empty answers, 0 beside
        assert zero and any(0.0 in r["scores"].values() for r in zero)  # real scores
        assert any(None in r["scores"].values() for r in zero)  # and none beside none
        assert max(queued) > held  # records were held beyond memory: read back from file


def test_streamed_exit_status_and_message_without_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = make_release(tmp_path / "data", classes=3, images=4)

    async def down(self: Any, messages: Any, settings: Any, payload: Any) -> Response:
        return Response(text=None, error="HTTP 500: down")

    monkeypatch.setattr(MixBackend, "generate", down)
    rc = main(["run", "hcsu-discrimination", "--data", str(data), "--model", "hcsu-mix:m",
               "--k", "2", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    # 2 domains x 3 classes x 4 images, every one an error: the count from the summary
    assert rc == 1 and "none of the 24 sample(s) was answered" in err
    assert "24 of 24 sample(s) ended as error" in err
