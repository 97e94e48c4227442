"""``hcsu robustness`` streamed writes what the listed path wrote, and refuses to shrink
its run folder before it sends anything.

The reference is the listed path the study used before it streamed, rebuilt here from
its unchanged parts: :func:`~heritage_eval.benchmarks.hcsu.studies.robustness` (every
condition's run through ``run_items``, every result kept), :func:`~heritage_eval.
benchmarks.hcsu.study_folder.listed_records` (``run_records`` + ``mark_records``),
:func:`heritage_eval.core.summary.envelope` over the list and the Table 4 rows it
returned. Inputs: a generated release of 40x40 glyph images (the canonical copy needs a
glyph to find) with a missing image (an ``error`` row), the scripted ``hcsu-mix`` model
(right, wrong, unparsed, empty, failed, refused and cut answers; tests/hcsu/
stream_fixtures.py) and the BERTScore stand-in. Before this change the command's
``samples.jsonl`` and console text on these inputs were also recorded and compared by
hand with the streamed command's: byte for byte equal (summary files: equal but for the
creation time and the git commit's ``-dirty`` mark).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from heritage_eval.benchmarks.hcsu.archive import wild_root
from heritage_eval.benchmarks.hcsu.bench_base import GROUP_KEYS
from heritage_eval.benchmarks.hcsu.benchmark import ACCURACY
from heritage_eval.benchmarks.hcsu.benchmark_description import DESCRIPTION_METRICS
from heritage_eval.benchmarks.hcsu.cli_args import ROBUSTNESS_OPTIONS, robustness_args
from heritage_eval.benchmarks.hcsu.options import (
    DESCRIPTION,
    DISCRIMINATION,
    description_config,
    discrimination_config,
)
from heritage_eval.benchmarks.hcsu.pipeline import Engine
from heritage_eval.benchmarks.hcsu.runio import (
    engine_for,
    judge_backend,
    judge_engine,
    load_data,
    model_for,
)
from heritage_eval.benchmarks.hcsu.studies import prepare_conditions, robustness
from heritage_eval.benchmarks.hcsu.study_folder import listed_records
from heritage_eval.benchmarks.hcsu.tables import robustness_table
from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.store import RunFolder
from heritage_eval.core.summary import envelope
from heritage_eval.core.types import GenerationSettings, Message, Response
from tests.hcsu.stream_fixtures import FakeScorer, MixBackend, make_release, mix_backend

#: the study's runs compared: both tasks with a judge and a description model of its
#: own; the discrimination task alone under --limit (a PARTIAL run)
CASES = {"both": ["--k", "3", "--judge", "hcsu-mix:judge", "--description-model",
                  "hcsu-mix:d"],
         "discrimination": ["--tasks", "discrimination", "--k", "2", "--limit", "2"]}


@pytest.fixture(autouse=True)
def _fake_bertscore(fake_study_bertscore: None) -> None:
    """BERTScore without a model download: the same stand-in in both paths."""


@pytest.fixture(autouse=True, scope="module")
def _backend() -> Iterator[None]:
    with mix_backend():
        yield


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_release(tmp_path_factory.mktemp("hcsu") / "data", classes=4, images=6,
                        corrupt=True)
    for i, path in enumerate(sorted(root.rglob("*.png"))):  # a dark glyph on paper
        image = Image.new("L", (40, 40), 235)
        draw = ImageDraw.Draw(image)
        draw.rectangle((6 + i % 7, 8, 22 + i % 11, 30), fill=20)
        draw.line((10, 12 + i % 5, 34, 20), fill=30, width=3)
        image.save(path)
    return root


def _argv(release: Path, out: Path, extra: list[str]) -> list[str]:
    return ["robustness", "--data", str(release), "--model", "hcsu-mix:m", "--per-class",
            "3", "--workers", "1", "--out", str(out), *extra]


def _listed(argv: list[str], out: Path, ref: Path
            ) -> tuple[list[dict[str, Any]], list[SampleRecord], int | None]:
    """``(rows, records, limit)`` of the study as the listed path made them, on the
    condition folders the command prepared under ``out``; responses cached in ``ref``."""
    parser = argparse.ArgumentParser()
    robustness_args(parser)
    config = ROBUSTNESS_OPTIONS.config(parser.parse_args(argv[1:]))
    opts: Any = config.options
    tasks = set(opts.tasks)
    ref.mkdir(parents=True, exist_ok=True)
    folder = RunFolder(ref)
    wild = wild_root(Path(opts.data), out / "extracted", None)
    folders = prepare_conditions(wild, out / "conditions", None, 1)  # made: idempotent
    ds = load_data(opts, ref)
    engines: dict[str, Engine] = {}
    judge = None
    if "discrimination" in tasks:
        engines["discrimination"] = engine_for(config, folder,
                                               model_for(config.model, DISCRIMINATION))
    if "description" in tasks:
        desc_model = config.model.model_copy(
            update={"model": opts.description_model or config.model.model})
        engines["description"] = engine_for(config, folder, model_for(desc_model,
                                                                      DESCRIPTION))
        judge = judge_engine(config, folder, judge_backend(opts, config.model))
    scorer = FakeScorer() if "description" in tasks else None
    disc = discrimination_config(opts, dataset=ds) if "discrimination" in tasks else None
    desc = description_config(opts) if "description" in tasks else None
    try:
        rows, runs = robustness(folders, disc, desc, engines, scorer,  # type: ignore[arg-type]
                                None, judge, config.output.limit)
        return rows, listed_records(runs, ("condition", "task"), scorer is not None,
                                    judge is not None), config.output.limit
    finally:
        for eng in (*engines.values(), judge):
            if eng is not None and eng.cache is not None:
                eng.cache.close()


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _lines(out: Path) -> list[str]:
    return (out / "samples.jsonl").read_text("utf-8").splitlines()


@pytest.mark.parametrize("case", sorted(CASES))
def test_streamed_robustness_writes_the_listed_output(release: Path, tmp_path: Path,
                                                      case: str) -> None:
    out = tmp_path / "out"
    argv = _argv(release, out, CASES[case])
    assert main(["hcsu", *argv]) == 0
    rows, records, limit = _listed(argv, out, tmp_path / "ref")
    # the scripted model gives every kind of row (else the comparison proves little)
    assert {r.state.value for r in records} >= {"scored", "unparsed"}
    if case == "both":  # (--limit 2 leaves out the missing image)
        assert "error" in {r.state.value for r in records}
        assert any(r.details.get("truncated") for r in records)
        assert any(r.details.get("model_failure") for r in records)
        assert {r.groups["task"] for r in records} == {"discrimination", "description"}
        assert any(r.scores.get("terminology") is not None for r in records)  # judged
    # 3 conditions x (24 targets, or --limit 2: 2 per domain) x the tasks run
    assert len(records) == (3 * 24 * 2 if case == "both" else 3 * 4)
    assert _lines(out) == [r.to_json_line() for r in records]
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    env = envelope("hcsu-robustness", records, (ACCURACY, *DESCRIPTION_METRICS),
                   ("condition", "task", *GROUP_KEYS), partial=limit is not None)
    assert summary["models"] == _json(env["models"])
    assert summary["run_limits"] == _json(env["run_limits"])
    assert summary["partial"] == env["partial"] == (limit is not None)
    assert summary["results"] == _json(rows)
    assert [r["condition"] for r in rows] == ["Wild (Raw)", "Wild-Resize", "Origin"]
    assert robustness_table(rows) in (out / "summary.md").read_text("utf-8")
    if case == "both":  # a resumed run reads its answers back from the cache
        assert main(["hcsu", *argv, "--resume"]) == 0
        resumed = [json.loads(line) for line in _lines(out)]
        cached = 0
        for rec in resumed:  # failed requests are not cached: sent again, same answer
            for turn in rec["turns"]:
                if turn.get("response"):
                    cached += turn["response"]["cached"] is True
                    turn["response"]["cached"] = False
        assert cached > len(records) // 2
        assert resumed == [json.loads(r.to_json_line()) for r in records]


def test_a_smaller_limit_is_refused_before_any_request(
        release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rob"
    sent: list[str] = []
    generate = MixBackend.generate

    async def counted(self: MixBackend, messages: list[Message],
                      settings: GenerationSettings, payload: dict[str, Any]) -> Response:
        sent.append(str(payload.get("sample_id")))
        return await generate(self, messages, settings, payload)

    monkeypatch.setattr(MixBackend, "generate", counted)

    def argv(*extra: str) -> list[str]:  # --no-cache: every planned question is sent
        return ["hcsu", *_argv(release, out, ["--tasks", "discrimination", "--k", "2",
                                              "--no-cache", *extra])]

    assert main(argv("--limit", "3")) == 0
    # 3 targets per domain x 2 domains x 3 conditions, each sent once (one missing image)
    assert len(_lines(out)) == 18 and 0 < len(sent) <= 18
    before = {n: (out / n).read_bytes() for n in ("samples.jsonl", "summary.json",
                                                   "run.json")}
    sent.clear()
    capsys.readouterr()
    assert main(argv("--limit", "2", "--resume")) == 2
    err = capsys.readouterr().err
    assert "it holds 18 row(s) with an answer in samples.jsonl" in err
    assert "6 row(s) would be lost" in err
    assert sent == []  # the listed path sent its 12 questions before it refused
    assert {n: (out / n).read_bytes() for n in before} == before
    assert main(argv("--limit", "3", "--resume")) == 0  # every row kept: it runs
    assert len(sent) > 0 and len(_lines(out)) == 18
