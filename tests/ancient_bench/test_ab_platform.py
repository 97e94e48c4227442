"""Ancient-Bench on the platform: self-contained envelope records, the summary envelope
against the legacy tables, run-folder checks, the row <-> envelope mapping, and a light
``commands`` module. The model is an in-process backend (no network, no OCR)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.ancient_bench.checks import check_envelope

from heritage_eval.benchmarks.ancient_bench.envelope import to_envelope, to_row
from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.pipeline import score_results
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet, prompt_hash
from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.store import read_jsonl
from heritage_eval.core.types import GenerationSettings, Message, Response, Usage
from heritage_eval.models.base import ModelBackend


class Answering(ModelBackend):
    """Answers from a table keyed by sample id (``None`` = a failed request) and reports
    the image size sent, usage and finish reason as a real endpoint does."""

    backend = "answering"

    def __init__(self, answers: dict[str, str | None]) -> None:
        self.answers = answers
        self.sent: list[str] = []

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        sid = payload["sample_id"]
        self.sent.append(sid)
        answer = self.answers[sid]
        if answer is None:
            return Response(text=None, error="HTTP 500 after 5 retries", attempts=6)
        return Response(text=answer, latency_s=0.5, usage=Usage(prompt_tokens=700,
                                                                 completion_tokens=8),
                        meta={"sent_image_sizes": [[16, 8]], "finish_reason": "stop"})


ANSWERS: dict[str, str | None] = {
    "seals/a": "<res>王未央印</res>", "seals/b": "<res>平舆令</res>",
    "calligraphys/c": "<res>永和九</res>", "calligraphys/d": None}


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    gts = {"seals": [("a", "王未央印"), ("b", "平舆令印")],
           "calligraphys": [("c", "永和九年"), ("d", "暮春之初")]}
    for cat, rows in gts.items():
        (root / cat / "images").mkdir(parents=True)
        for stem, _ in rows:
            Image.new("RGB", (32, 16), (ord(stem), 0, 0)).save(root / cat / "images"
                                                                / f"{stem}.png")
        (root / cat / "conv.jsonl").write_text(
            "".join(json.dumps({"image": f"{s}.png", "human_gt": gt, "script": "seal"},
                               ensure_ascii=False) + "\n" for s, gt in rows),
            encoding="utf-8")
    return root


def _run(monkeypatch: pytest.MonkeyPatch, data: Path, out: Path, *extra: str) -> int:
    monkeypatch.setattr(engine, "backend_from_config", lambda model: Answering(ANSWERS))
    return main(["run", "ancient-bench", "--data", str(data), "--out", str(out), *extra])


def test_sample_line_is_self_contained(data: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    assert _run(monkeypatch, data, out) == 0
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    rec = SampleRecord.model_validate(json.loads(lines[0]))
    assert (rec.id, rec.benchmark, rec.model, rec.state.value) == (
        "seals/a", "ancient-bench", "answering", "scored")
    assert rec.groups == {"medium": "Seal", "category": "seals"}
    assert rec.scores == {"ned_score": 1.0, "f1": 1.0}
    turn = rec.turns[0]
    assert turn.prompt == PromptSet().prompt("seals")  # the full text, not a hash
    image = turn.images[0]
    assert rec.image_root == str(data.resolve())
    assert (image.path, image.width, image.height, image.sent_width,
            image.sent_height) == ("seals/images/a.png", 32, 16, 16, 8)
    assert (data / image.path).is_file()
    assert turn.response is not None
    assert (turn.response.text, turn.response.finish_reason, turn.response.prompt_tokens,
            turn.response.completion_tokens, turn.response.latency_s,
            turn.response.cached) == ("<res>王未央印</res>", "stop", 700, 8, 0.5, False)
    assert (rec.answer, rec.reference) == ("王未央印", "王未央印")
    assert rec.source == f"{data / 'seals' / 'conv.jsonl'}:1"
    assert rec.details["prompt_hash"] == prompt_hash(PromptSet().prompt("seals"))
    assert rec.details["prompt_used"] is True
    assert rec.details["image_name"] == "a.png"
    assert rec.details["metadata"] == {"line": 1, "image_name": "a.png", "script": "seal"}
    # The failed request is an error record: reason with file:line, no scores.
    failed = SampleRecord.model_validate(json.loads(lines[3]))
    assert failed.state.value == "error" and failed.scores == {"ned_score": None,
                                                                "f1": None}
    assert failed.error == f"{data / 'calligraphys' / 'conv.jsonl'}:2: HTTP 500 after 5 " \
                           "retries"
    assert failed.turns[0].response is not None
    assert failed.turns[0].response.attempts == 6


def test_run_summary_envelope_matches_legacy_body(data: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    assert _run(monkeypatch, data, out) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    res = summary["results"][0]
    # By hand: Seal = (1 + (1 - 1/4)) / 2 = 0.875; Calligraphy = c only (d failed):
    # 1 - 1/4 = 0.75; Overall = (0.875 + 0.75) / 2.
    assert res["per_category"]["seals"]["ned_score"] == 0.875
    assert res["per_category"]["calligraphys"]["ned_score"] == 0.75
    assert res["overall"]["ned_score"] == 0.8125
    assert summary["models"]["answering"]["states"]["error"] == 1
    check_envelope(summary)


def test_same_command_resumes_other_settings_refused(data: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    out = tmp_path / "run"
    assert _run(monkeypatch, data, out) == 0
    first = (out / "summary.json").read_text(encoding="utf-8")
    assert _run(monkeypatch, data, out) == 0  # same configuration: resumed from cache
    again = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert again["results"] == json.loads(first)["results"]
    assert again["provenance"]["resumed"] is True
    capsys.readouterr()
    assert _run(monkeypatch, data, out, "--ignore-st") == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err and "ignore_st" in err
    assert _run(monkeypatch, data, out, "--ignore-st", "--resume") == 0


def test_limit_run_is_partial(data: Path, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    assert _run(monkeypatch, data, out, "--limit", "1") == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is True
    assert (out / "summary.md").read_text(encoding="utf-8").startswith("> **PARTIAL**")
    assert [r["n"] for r in summary["results"][0]["per_category"].values()] == [1, 1]


def test_row_envelope_round_trip(data: Path) -> None:
    release = load_release(data)
    prompts = PromptSet()
    results = {"seals/a": ItemResult("seals/a", [Response(
        text="<res>王未印</res>", latency_s=0.5, attempts=2, usage=Usage(prompt_tokens=3),
        meta={"sent_image_sizes": [[16, 8]], "finish_reason": "length"})]),
        "calligraphys/c": ItemResult("calligraphys/c", [Response(text=None, error="boom")])}
    pairs = score_results(release.samples, "m", True, prompts, NormalizationFlags(),
                          results)
    for (row, resp), sample in zip(pairs, release.samples, strict=True):
        rec = to_envelope(row, sample, prompt=prompts.prompt(sample.category),
                          prompt_used=True, root=release.root, response=resp)
        assert to_row(SampleRecord.model_validate_json(rec.to_json_line())) == row
    states = [row.state.value for row, _ in pairs]
    assert states == ["scored", "error", "error", "error"]  # b, d: no response


def test_commands_module_is_light() -> None:
    code = ("import sys; import heritage_eval.benchmarks.ancient_bench.commands; "
            "print(sorted(m for m in sys.modules if m.startswith(('heritage_eval.benchmarks"
            ".ancient_bench', 'pandas', 'numpy', 'Levenshtein', 'opencc', 'pydantic'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert json.loads(done.stdout.replace("'", '"')) == [
        "heritage_eval.benchmarks.ancient_bench",
        "heritage_eval.benchmarks.ancient_bench.commands"]


def test_score_reads_rows(tmp_path: Path, data: Path) -> None:
    res = tmp_path / "pred" / "m1" / "seals" / "results"
    res.mkdir(parents=True)
    (res / "a.json").write_text(json.dumps({"answer": "<res>王未央印</res>"}), "utf-8")
    (res / "b.json").write_text("{not json", encoding="utf-8")
    out = tmp_path / "scored"
    assert main(["score", "ancient-bench", "--data", str(data), "--predictions",
                 str(tmp_path / "pred"), "--out", str(out)]) == 0
    rows = {r["id"]: r for r in read_jsonl(out / "samples.jsonl")}
    a, b, c = rows["seals/a"], rows["seals/b"], rows["calligraphys/c"]
    assert a["turns"][0]["prompt"] == "" and a["details"]["prompt_used"] is False
    assert a["turns"][0]["images"][0]["path"] == "seals/images/a.png"
    assert a["details"]["prediction_file"] == str(res / "a.json")
    assert (a["answer"], a["reference"], a["scores"]["ned_score"]) == ("王未央印",
                                                                       "王未央印", 1.0)
    # an unusable file is the model's failure (--missing empty): a scored empty answer
    # that keeps its reason (docs/denominators.md)
    why = b["details"]["prediction_error"]
    assert (b["state"], b["scores"]["ned_score"], b["error"]) == ("scored", 0.0, None)
    assert why.startswith(f"{res / 'b.json'}:1: malformed")
    assert b["turns"][0]["response"]["error"] == why
    assert c["details"]["missing_prediction"] is True and c["turns"][0]["response"] is None
    assert (c["scores"]["ned_score"], c["answer"]) == (0.0, "")
