"""An Overall over fewer than the paper's 9 media is flagged as not comparable with the
paper's Overall (the mean of all 9, Table 3), in summary.json and summary.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord, build_record
from heritage_eval.benchmarks.ancient_bench.report import build_summary, render_markdown
from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.types import GenerationSettings, Message, Response, Sample
from heritage_eval.models.base import ModelBackend

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"
FLAG = "NOT comparable with the paper's Overall"


def _row(category: str, error: str | None = None) -> SampleRecord:
    sample = Sample(id=f"{category}/x", category=category, target="王印",
                    metadata={"image_name": "x.png"}, source=f"{category}/conv.jsonl:1")
    return build_record(sample, "m", None if error else "<res>王印</res>", error,
                        NormalizationFlags())


def _result(rows: list[SampleRecord], categories: list[str]) -> dict[str, Any]:
    return build_summary(rows, ["m"], categories, {"name": "official", "flags": {}}, {})


def test_all_nine_media_are_comparable() -> None:
    summary = _result([_row(c) for c in MEDIA], list(MEDIA))
    res = summary["results"][0]
    assert (res["overall_comparable_with_paper"], res["overall_media_missing"]) == (True, [])
    assert FLAG not in render_markdown(summary)


def test_fewer_media_are_flagged() -> None:
    # Bronze has only an error row and Slip is absent: Overall covers 7 of the 9.
    cats = [c for c in MEDIA if c != "bamboo_wooden_slips"]
    rows = [_row(c, "HTTP 500" if c == "bronze_rubbings" else None) for c in cats]
    summary = _result(rows, cats)
    res = summary["results"][0]
    assert res["overall_comparable_with_paper"] is False
    assert res["overall_media_missing"] == ["Bronze", "Slip"]  # paper order
    assert ("Overall covers 7 of the paper's 9 media (not: Bronze, Slip): NOT comparable "
            "with the paper's Overall, the mean of all 9.") in render_markdown(summary)


def test_an_extra_folder_is_not_comparable_either() -> None:
    cats = [*MEDIA, "murals"]
    res = _result([_row(c) for c in cats], cats)["results"][0]
    assert (res["overall_comparable_with_paper"], res["overall_media_missing"]) == (False, [])


class Echo(ModelBackend):
    """Answers a fixed transcription to every request (no network)."""

    backend = "echo"

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        return Response(text="<res>王</res>")


def test_run_with_two_categories_is_flagged(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(engine, "backend_from_config", lambda model: Echo())
    out = tmp_path / "run"
    assert main(["run", "ancient-bench", "--data", str(DEMO), "--categories", "Seal",
                 "Stele", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    res = summary["results"][0]
    assert res["overall_covers"] == ["seals", "inscription_rubbings"]
    assert res["overall_comparable_with_paper"] is False
    assert len(res["overall_media_missing"]) == 7
    assert "Overall covers 2 of the paper's 9 media" in (out / "summary.md").read_text("utf-8")
    assert "Overall covers 2 of the paper's 9 media" in capsys.readouterr().out  # console
