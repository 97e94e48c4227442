"""The run pipeline with a scripted in-process backend: prompts sent, states, means,
and a second run served from the cache (nothing re-sent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.pipeline import run_model
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet, prompt_hash
from heritage_eval.benchmarks.ancient_bench.report import build_summary
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend


class Scripted(ModelBackend):
    """Answers from a table keyed by sample id; ``None`` in the table = a failed request."""

    backend = "scripted"

    def __init__(self, answers: dict[str, str | None]) -> None:
        self.answers = answers
        self.prompts: dict[str, str] = {}

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        sid = payload["sample_id"]
        self.prompts[sid] = messages[-1].text()
        answer = self.answers[sid]
        if answer is None:
            return Response(text=None, error="HTTP 500 after 5 retries")
        return Response(text=answer, latency_s=0.01)


def _release(root: Path) -> Path:
    for cat, rows in {"seals": [("a", "王未央印"), ("b", "平舆令印")],
                      "calligraphys": [("c", "永和九年"), ("d", "")]}.items():
        folder = root / cat
        folder.mkdir(parents=True)
        lines = []
        for stem, gt in rows:
            # Distinct pixels: identical image + prompt would be one cached request.
            Image.new("RGB", (8, 8), (ord(stem), 0, 0)).save(folder / f"{stem}.png")
            lines.append(json.dumps({"image": f"{stem}.png", "human_gt": gt},
                                    ensure_ascii=False))
        (folder / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_states_means_and_cache(tmp_path: Path) -> None:
    rel = load_release(_release(tmp_path / "data"))
    answers: dict[str, str | None] = {"seals/a": "<res>王未央印</res>", "seals/b": None,
                                      "calligraphys/c": "<res>永和九</res>"}
    backend = Scripted(answers)
    prompts = PromptSet()
    flags = NormalizationFlags()
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        rows = run_model(rel, backend, GenerationSettings(), cache, prompts, flags)
    states = {r.id: r.state.value for r in rows}
    # seals/b: the request failed; calligraphys/d: empty ground truth (never sent).
    assert states == {"seals/a": "scored", "seals/b": "error", "calligraphys/c": "scored",
                      "calligraphys/d": "error"}
    assert set(backend.prompts) == {"seals/a", "seals/b", "calligraphys/c"}
    assert backend.prompts["seals/a"] == prompts.prompt("seals")
    by_id = {r.id: r for r in rows}
    assert by_id["seals/a"].prompt_hash == prompt_hash(prompts.prompt("seals"))
    assert by_id["seals/b"].error == "HTTP 500 after 5 retries"
    summary = build_summary(rows, ["scripted"], rel.categories, {}, {})
    res = summary["results"][0]
    # Errors are excluded from the means: Seal = seals/a only (1.0); Calligraphy = c only,
    # 永和九 vs 永和九年: NED score 1 - 1/4 = 0.75; overall (1.0 + 0.75) / 2.
    assert res["per_category"]["seals"] == {"n": 1, "ned_score": 1.0, "f1": 1.0,
                                            "medium": "Seal", "n_error": 1, "n_missing": 0}
    assert res["per_category"]["calligraphys"]["ned_score"] == 0.75
    assert res["overall"]["ned_score"] == 0.875
    assert res["states"] == {"scored": 2, "unparsed": 0, "error": 2, "unscored": 0}
    # Second run: the two answers received come from the cache; only the failed one is
    # sent again (and now succeeds).
    answers["seals/b"] = "平舆令印"
    again = Scripted(answers)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        rows2 = run_model(rel, again, GenerationSettings(), cache, prompts, flags)
    assert set(again.prompts) == {"seals/b"}
    assert {r.id: r.cached for r in rows2 if r.state.value == "scored"} == {
        "seals/a": True, "seals/b": False, "calligraphys/c": True}
