"""Streamed ``run`` / ``score ancient-bench`` (issue 11): the same files as the in-memory
path, byte for byte, with only small facts kept per sample; the loader's streamed read;
the pandas-free Markdown tables."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from PIL import Image
from tests.run_folder_files import run_files

from heritage_eval.benchmarks.ancient_bench import report
from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.pipeline import score_prediction_folder
from heritage_eval.benchmarks.ancient_bench.score import (
    add_score_args,
    envelope_records,
    score_predictions,
)
from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.failure_counts import outcomes_body
from heritage_eval.core.types import GenerationSettings, Message, Response, Usage
from heritage_eval.models.base import ModelBackend

GTS = {"seals": [("a", "王未央印"), ("b", "平舆令印"), ("e", "。")],
       "calligraphys": [("c", "永和九年"), ("d", "暮春之初"), ("f", "會稽山陰")]}


class Scripted(ModelBackend):
    """Answers by sample id: a text, a refusal (content filter), a cut answer
    (finish reason ``length``) or a failed request."""

    backend = "scripted"

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        sid = payload["sample_id"]
        if sid == "calligraphys/d":
            return Response(text=None, error="HTTP 500 after 5 retries", attempts=6)
        if sid == "seals/b":
            return Response(text=None, error="blocked", meta={"failure": "content_filter"})
        finish = "length" if sid == "calligraphys/f" else "stop"
        text = {"seals/a": "<res>王未央印</res>", "calligraphys/c": "<res>永和九</res>",
                "calligraphys/f": "<res>会稽"}[sid]
        return Response(text=text, latency_s=0.5, usage=Usage(prompt_tokens=7,
                                                              completion_tokens=3),
                        meta={"sent_image_sizes": [[16, 8]], "finish_reason": finish})


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for cat, rows in GTS.items():
        (root / cat / "images").mkdir(parents=True)
        for stem, _ in rows:
            Image.new("RGB", (32, 16), (ord(stem), 0, 0)).save(
                root / cat / "images" / f"{stem}.png")
        (root / cat / "conv.jsonl").write_text(
            "".join(json.dumps({"image": f"{s}.png", "human_gt": gt, "script": "seal"},
                               ensure_ascii=False) + "\n" for s, gt in rows),
            encoding="utf-8")
    return root


def _files(out: Path) -> dict[str, Any]:
    return run_files(out)


@pytest.mark.parametrize("refusals", ["error", "wrong"])
def test_streamed_run_equals_in_memory(data: Path, tmp_path: Path, refusals: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "backend_from_config", lambda model: Scripted())
    argv = ["run", "ancient-bench", "--data", str(data), "--refusals", refusals, "--out"]
    assert main([*argv, str(tmp_path / "streamed")]) == 0
    monkeypatch.setattr(AncientBench, "record_sink", lambda self, data, ctx: None)
    assert main([*argv, str(tmp_path / "listed")]) == 0
    streamed, listed = _files(tmp_path / "streamed"), _files(tmp_path / "listed")
    assert streamed == listed  # samples.jsonl, summary.json, summary.md, tables
    body = streamed["summary"]
    # by hand: a truncated (f), a refusal (b), "。" (e) rejected at load as a data error
    assert body["truncation"]["scripted"]["overall"]["n_truncated"] == 1
    assert body["refusals"]["scripted"]["n"] == 1
    assert body["results"][0]["errors_by_kind"]["data"] == 1  # "。" is empty after norm.
    assert body["results"][0]["per_category"]["calligraphys"]["n_error"] == 1


def _score_opts(data: Path, preds: Path, out: Path, missing: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_score_args(p)
    return p.parse_args(["--data", str(data), "--predictions", str(preds), "--out", str(out),
                         "--missing", missing])


@pytest.mark.parametrize("missing", ["empty", "skip"])
def test_streamed_score_equals_in_memory(data: Path, tmp_path: Path, missing: str) -> None:
    preds = tmp_path / "preds"
    answers = {"m1": {"a": "<res>王未央</res>", "b": "平舆令印", "c": "<res>永和九年</res>",
                      "d": "<res>暮春</res>"},
               "m2": {"a": "<res>王</res>", "c": "", "f": "<res>会稽山阴</res>"}}
    for model, by_stem in answers.items():
        for cat, rows in GTS.items():
            (preds / model / cat / "results").mkdir(parents=True)
            for stem, _ in rows:
                if stem in by_stem:
                    (preds / model / cat / "results" / f"{stem}.json").write_text(
                        json.dumps({"answer": by_stem[stem]}, ensure_ascii=False),
                        encoding="utf-8")
    out = tmp_path / "run"
    result = score_predictions(_score_opts(data, preds, out, missing))
    # the in-memory path of before issue 11, computed here from its parts
    release = load_release(data, check_images=False)
    scored = score_prediction_folder(release, preds, ["m1", "m2"], NormalizationFlags(),
                                     missing)  # type: ignore[arg-type]
    records = envelope_records(release, scored)
    assert (out / "samples.jsonl").read_text(encoding="utf-8") == "".join(
        r.to_json_line() + "\n" for r in records)
    body = report.build_summary(scored.records, ["m1", "m2"], release.categories,
                                result.summary["protocol"], {}, missing=scored.missing,
                                warnings=[*release.warnings, *scored.warnings])
    body.pop("provenance")
    for res in body["results"]:  # score's own keys (no file here is unusable or extra)
        res["unusable_predictions"], res["ignored_prediction_files"] = [], 0
    # the model's failures counted under `run`'s default rule (wrong), over the records
    body.update(outcomes_body(records, "medium", "wrong"))
    expected = engine.finish_summary(AncientBench(), records, body, {}, partial=False)
    got = dict(result.summary)
    got.pop("provenance")
    expected.pop("provenance")
    assert got == expected
    assert result.summary["provenance"]["data_counts"] == {
        "samples": 6, "load_errors": 0, "per_category": {"seals": 3, "calligraphys": 3}}
    # records are read back from samples.jsonl when asked for
    assert [r.id for r in result.records] == [r.id for r in records]
    n_missing = 12 - 7  # 2 models x 6 lines, 7 files written
    assert len(result.summary["results"][0]["missing_predictions"]) + len(
        result.summary["results"][1]["missing_predictions"]) == n_missing


def test_streamed_release_reads_the_same(tmp_path: Path) -> None:
    root = tmp_path / "rel"
    (root / "seals").mkdir(parents=True)
    (root / "seals" / "conv.jsonl").write_text(
        '{"image": "a.png", "human_gt": "甲"}\n{"image": "a.png", "human_gt": "乙"}\n'
        "not json\r\n\n", encoding="utf-8")
    (root / "bronze_rubbings").mkdir()
    (root / "bronze_rubbings" / "conv.jsonl").write_text("", encoding="utf-8")
    full = load_release(root, check_images=False)
    lazy = load_release(root, check_images=False, keep_samples=False)
    assert lazy.samples == []
    notes: list[str] = []
    again = list(lazy.iter_samples(notes))
    assert [s.model_dump() for s in again] == [s.model_dump() for s in full.samples]
    assert [*lazy.warnings, *notes] == full.warnings
    assert [s.id for s in again] == ["seals/a", "seals/a@2", "seals/line3"]


def test_markdown_equals_pandas() -> None:
    """The pandas-free table is the text pandas' ``to_markdown`` (tabulate) wrote."""
    cases = [[{"Model": "m", "Seal": "1.00 / 2.00", "n": 3},
              {"Model": "a longer model", "Seal": " 12.50 / 3.00 ", "n": 12345}],
             [{"Medium": "篆书", "n": 0, "errors": 2, "NED (%)": "—"}],
             [{"Model": "m", "Seal": "1"}, {"Model": "k", "Slip": "2"}]]
    for rows in cases:
        df = pd.DataFrame(rows)
        align = ("left",) + ("right",) * (len(df.columns) - 1)
        assert report._markdown(rows) == df.to_markdown(index=False, disable_numparse=True,
                                                        colalign=align)


def test_scoring_imports_no_pandas() -> None:
    """Importing the scoring path loads neither pandas (tables are plain text) nor
    scipy (imported where an interval is drawn)."""
    code = ("import sys, heritage_eval.benchmarks.ancient_bench.score, "
            "heritage_eval.benchmarks.ancient_bench.benchmark; "
            "print('pandas' in sys.modules, 'scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False False"
