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
from heritage_eval.core.images import SizeCap, load_image
from heritage_eval.core.store import RunFolder, read_jsonl
from heritage_eval.core.types import GenerationSettings, Message, Response, Usage
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
    # A failed request names the sample's conv.jsonl line (seals/b is line 2) first.
    conv = tmp_path / "data" / "seals" / "conv.jsonl"
    assert by_id["seals/b"].error == f"{conv}:2: HTTP 500 after 5 retries"
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


class Detailed(ModelBackend):
    """Loads the image as a real backend would (capped to 4 px: a corrupt file raises
    ``ImageLoadError``) and reports usage, attempts and finish reason."""

    backend = "detailed"

    def __init__(self, reads_prompt: bool = True) -> None:
        self.reads_prompt = reads_prompt

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        img = load_image(messages[-1].images()[0].path, cap=SizeCap(max_side=4))
        return Response(text="<res>王未央印</res>", latency_s=0.25, attempts=2,
                        usage=Usage(prompt_tokens=812, completion_tokens=9),
                        meta={"sent_image_sizes": [[img.width, img.height]],
                              "finish_reason": "stop"})


def test_response_details_and_corrupt_image_source(tmp_path: Path) -> None:
    root = _release(tmp_path / "data")
    conv = root / "seals" / "conv.jsonl"
    (root / "seals" / "b.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 10)  # truncated
    rel = load_release(root)
    rows = run_model(rel, Detailed(), GenerationSettings(), None, PromptSet(),
                     NormalizationFlags())
    by_id = {r.id: r for r in rows}
    a = by_id["seals/a"]
    # An 8 x 8 image capped to a 4 px long side is sent as 4 x 4; the other values are
    # what the backend reported (Response.details()).
    assert (a.sent_image_sizes, a.prompt_tokens, a.completion_tokens, a.finish_reason,
            a.attempts, a.latency_s, a.cached) == ([[4, 4]], 812, 9, "stop", 2, 0.25, False)
    # The corrupt image names its conv.jsonl line (b.png is line 2) and the image file.
    b = by_id["seals/b"]
    assert b.state.value == "error"
    assert str(b.error).startswith(f"{conv}:2: cannot read image {root / 'seals' / 'b.png'}")
    # calligraphys/d never left the loader (empty ground truth): no response, all null.
    d = by_id["calligraphys/d"]
    assert (d.latency_s, d.attempts, d.cached, d.sent_image_sizes, d.prompt_tokens,
            d.completion_tokens, d.finish_reason, d.prompt_hash) == (None,) * 8
    # The same fields reach samples.jsonl.
    RunFolder(tmp_path / "run").write_samples(rows)
    line = next(r for r in read_jsonl(tmp_path / "run" / "samples.jsonl")
                if r["id"] == "seals/a")
    assert line["sent_image_sizes"] == [[4, 4]] and line["finish_reason"] == "stop"
    assert line["prompt_tokens"] == 812 and line["completion_tokens"] == 9


def test_prompt_hash_null_when_backend_ignores_prompt(tmp_path: Path) -> None:
    rel = load_release(_release(tmp_path / "data"))
    rows = run_model(rel, Detailed(reads_prompt=False), GenerationSettings(), None,
                     PromptSet(), NormalizationFlags())
    assert [r.prompt_hash for r in rows] == [None] * 4
    rows = run_model(rel, Detailed(), GenerationSettings(), None, PromptSet(),
                     NormalizationFlags())
    # Sent samples carry the hash of the full prompt; the unloadable one (d) was not sent.
    assert [r.prompt_hash for r in rows] == [prompt_hash(PromptSet().prompt("seals"))] * 2 + [
        prompt_hash(PromptSet().prompt("calligraphys")), None]
