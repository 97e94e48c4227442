"""``heritage-eval run/score ancient-bench``: refusals, hints, exit codes, provenance.

The model is an in-process backend put in place of the platform engine's
``backend_from_config`` (monkeypatch), so these tests need no network and no OCR model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet
from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.store import read_jsonl
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend


class Fixed(ModelBackend):
    """Answers ``text`` to everything, or fails every request when ``text`` is None."""

    backend = "fixed"

    def __init__(self, text: str | None, reads_prompt: bool = True) -> None:
        self.text = text
        self.reads_prompt = reads_prompt

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        if self.text is None:
            return Response(text=None, error="HTTP 503 after 5 retries", attempts=6)
        return Response(text=self.text)


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for cat, stems in {"seals": ["a", "b"], "calligraphys": ["c"]}.items():
        folder = root / cat
        folder.mkdir(parents=True)
        for i, stem in enumerate(stems):
            Image.new("RGB", (8, 8), (i, 0, 0)).save(folder / f"{stem}.png")
        (folder / "conv.jsonl").write_text(
            "".join(json.dumps({"image": f"{s}.png", "human_gt": "王印"}) + "\n"
                    for s in stems), encoding="utf-8")
    return root


def _use(monkeypatch: pytest.MonkeyPatch, backend: ModelBackend) -> None:
    monkeypatch.setattr(engine, "backend_from_config", lambda model: backend)


def test_run_exits_1_when_nothing_scored(data: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _use(monkeypatch, Fixed(None))
    out = tmp_path / "run"
    assert main(["run", "ancient-bench", "--data", str(data), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "none of the 3 sample(s) was scored" in err
    # The run folder is still written, with every sample an error naming its line.
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["results"][0]["states"]["error"] == 3
    rows = read_jsonl(out / "samples.jsonl")
    assert rows[0]["error"] == f"{data / 'seals' / 'conv.jsonl'}:1: HTTP 503 after 5 retries"
    assert rows[0]["turns"][0]["response"]["attempts"] == 6


@pytest.mark.parametrize("reads_prompt", [True, False])
def test_prompt_provenance(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           reads_prompt: bool) -> None:
    _use(monkeypatch, Fixed("<res>王印</res>", reads_prompt=reads_prompt))
    out = tmp_path / "run"
    assert main(["run", "ancient-bench", "--data", str(data), "--out", str(out),
                 "--no-cache"]) == 0
    prov = json.loads((out / "summary.json").read_text(encoding="utf-8"))["provenance"]
    rows = read_jsonl(out / "samples.jsonl")
    assert "prompt_hash" not in prov  # the old, ambiguous name is gone
    assert prov["prompt_used"] is reads_prompt
    if reads_prompt:
        assert prov["prompt_templates_hash"] == PromptSet().hash()
        assert all(len(r["details"]["prompt_hash"]) == 16 for r in rows)
    else:
        assert prov["prompt_templates_hash"] is None
        assert prov["prompt_source"] == "not used: fixed reads only the image"
        assert [r["details"]["prompt_hash"] for r in rows] == [None] * 3


def test_run_refuses_multiple_choice_baseline(data: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["run", "ancient-bench", "--data", str(data), "--model", "baseline:random",
                 "--out", str(out)]) == 2
    assert "multiple-choice baseline" in capsys.readouterr().err
    assert not out.exists()


def test_run_data_path_hints(data: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["run", "ancient-bench", "--data", str(data / "seals"), "--out",
                 str(out)]) == 2
    assert f"pass its parent {data.resolve()}" in capsys.readouterr().err
    assert main(["run", "ancient-bench", "--data", str(data / "seals" / "a.png"), "--out",
                 str(out)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert not out.exists()


def _predictions(root: Path) -> Path:
    res = root / "pred" / "m1" / "seals" / "results"
    res.mkdir(parents=True)
    for stem in ("a", "b"):
        (res / f"{stem}.json").write_text(json.dumps({"answer": "王印"}), encoding="utf-8")
    return root / "pred"


def test_score_predictions_one_level_too_deep(data: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pred = _predictions(tmp_path)
    out = tmp_path / "scored"
    assert main(["score", "ancient-bench", "--data", str(data), "--predictions",
                 str(pred / "m1"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "'seals'" in err and f"pass its parent {pred.resolve()}" in err
    assert not out.exists()


def test_score_warns_when_a_model_has_no_prediction(data: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    pred = _predictions(tmp_path)
    (pred / "m2").mkdir()
    out = tmp_path / "scored"
    assert main(["score", "ancient-bench", "--data", str(data), "--predictions", str(pred),
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    # m1 lacks only calligraphys/c (1 of 3): scored; m2 holds no file for the 3 lines:
    # a stray folder, left out of the results with one warning naming it
    expected = (f"model folder {pred / 'm2'} holds no prediction file for the 3 "
                "ground-truth line(s) scored (expected e.g. "
                f"{pred / 'm2' / 'seals' / 'results' / 'a.json'}): left out of the results "
                "(pass --models to choose the models)")
    assert f"warning: {expected}" in captured.err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [r["model"] for r in summary["results"]] == ["m1"]
    assert [w for w in summary["warnings"] if "m2" in w] == [expected]
    # Score rows have no response from a backend: its detail fields are null.
    row = read_jsonl(out / "samples.jsonl")[0]
    resp, image = row["turns"][0]["response"], row["turns"][0]["images"][0]
    assert resp["text"] == "王印"
    assert (resp["latency_s"], resp["attempts"], resp["cached"], image["sent_width"],
            resp["prompt_tokens"], resp["completion_tokens"], resp["finish_reason"]) == (
        None,) * 7
    # Console: m1's Calligraphy mean is 0 (missing -> empty) but still covered; nothing
    # is left out of Overall, so no coverage note is printed.
    assert "Overall = mean over" not in captured.out


def test_run_console_says_what_overall_covers(data: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    conv = data / "calligraphys" / "conv.jsonl"
    conv.write_text("", encoding="utf-8")  # an empty category file
    _use(monkeypatch, Fixed("<res>王印</res>"))
    out = tmp_path / "run"
    assert main(["run", "ancient-bench", "--data", str(data), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    # Seal (2 samples) is scored, Calligraphy has none: Overall covers 1 of 2 media.
    assert "Overall = mean over 1 of 2 media; Calligraphy has no scored samples." in printed
    assert "§ Overall row:" in printed
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert any(w.startswith(f"{conv} is empty") for w in summary["warnings"])
    assert "Overall = mean over 1 of 2 media" in (out / "summary.md").read_text("utf-8")
