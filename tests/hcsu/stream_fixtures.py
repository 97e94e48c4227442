"""Generated HCSU releases and a scripted offline model for the streaming tests.

:func:`make_release` writes a release of any size (tiny PNGs, one distinct character per
image index, an optional corrupt image); ``hcsu-mix:<name>`` is a backend whose answer to
each request is chosen by a hash of the sample id (or of the judge prompt): right or wrong
labels, unparseable text, empty answers, failed requests, refusals, answers cut at the
token limit. :class:`FakeScorer` stands in for BERTScore (no model download);
:func:`traced_peak` measures what a call allocates at its peak (``tracemalloc``).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from heritage_eval.core import backends
from heritage_eval.core.backends import BackendOptions, ModelBackend, register_backend
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.metrics.bertscore import BertScoreUnavailable
from heritage_eval.metrics.flags import MetricValue

#: the judge fails (unparseable reply) for every answer about this medium: a metric that
#: never scores in one domain (records of empty answers held to the domain's end)
DEAD_JUDGE_MEDIUM = "stone"


def make_release(root: Path, classes: int, images: int, corrupt: bool = False) -> Path:
    """A release under ``root``: per domain (bei, tie) ``classes`` classes of ``images``
    8x8 images each, image ``j`` showing character U+4E00+j; with ``corrupt`` the first
    image of the first Bei class is missing (an ``error`` row)."""
    for domain in ("bei", "tie"):
        rows = []
        for c in range(classes):
            who, script = f"P{c}", ("楷书", "行书", "隶书")[c % 3]
            folder = root / domain / f"{who}-{script}"
            folder.mkdir(parents=True, exist_ok=True)
            for j in range(images):
                char = chr(0x4E00 + j)
                path = folder / f"{char}_{j}.png"
                if corrupt and domain == "bei" and c == 0 and j == 0:
                    pass  # listed, never written: an error row (a corrupt file's message
                    # names a file descriptor, which differs from run to run)
                else:
                    Image.new("L", (8, 8), (c * 37 + j * 11) % 256).save(path)
                rows.append({"filename": f"{who}-{script}/{path.name}", "char": char,
                             "calligrapher": who, "script_type": script,
                             "source_type": domain.capitalize(), "quality": "clear",
                             "description": f"{who} writes {script} with care {c}"})
        (root / f"{domain}_annotations.json").write_text(json.dumps(rows), "utf-8")
    return root


def _pick(key: str, n: int) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % n


class MixBackend(ModelBackend):
    """Answers chosen by hash (module docstring); ``judge`` in the name: a judge."""

    backend = "hcsu-mix"
    max_concurrency = 8

    def __init__(self, name: str) -> None:
        self.model_id = name

    def identity(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model_id}

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        task = str(payload.get("task", ""))
        if task.startswith("judge"):
            prompt = messages[-1].text()
            if DEAD_JUDGE_MEDIUM in prompt or _pick(prompt, 6) == 0:
                return Response(text="no verdict")
            return Response(text=json.dumps({"terminology": _pick(prompt + "t", 11),
                                             "richness": _pick(prompt + "r", 11)}))
        sid = str(payload.get("sample_id"))
        options = list(payload.get("options") or ["A"])
        kind = _pick(sid, 10)
        label = options[_pick(sid + "x", len(options))]
        text = label if task == "hcsu-discrimination" else f"Firm strokes {_pick(sid, 5)}."
        if kind == 0:
            return Response(text=None, error="HTTP 500: boom")
        if kind == 1:
            return Response(text=None, error="refused", meta={"failure": "refused"})
        if kind == 2 or (kind > 2 and "/P0-" in sid):  # class P0 (first of its domain):
            return Response(text="")  # empty answers before any real score in the domain
        if kind == 3:
            return Response(text="no idea at all" if task == "hcsu-discrimination" else " ")
        if kind == 4:
            return Response(text=text, meta={"finish_reason": "length"})
        return Response(text=text)


def _factory(rest: str, opts: BackendOptions) -> ModelBackend:
    return MixBackend(rest)


@contextlib.contextmanager
def mix_backend() -> Iterator[None]:
    """``hcsu-mix:<name>`` registered inside the block only (other tests never see it)."""
    register_backend("hcsu-mix", _factory, "scripted answers for the HCSU streaming tests")
    try:
        yield
    finally:
        backends._REGISTRY.pop("hcsu-mix", None)


class FakeScorer:
    """BERTScore stand-in: F1 from the texts' lengths (deterministic, batch-free); an
    empty text is unscored as the real metric leaves it. ``fail``: raise
    :class:`BertScoreUnavailable` on every call."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def identity(self) -> dict[str, Any]:
        return {"model": "fake-bertscore"}

    def score_pairs(self, candidates: Sequence[str], references: Sequence[str]
                    ) -> list[MetricValue]:
        if self.fail:
            raise BertScoreUnavailable("BERTScore failed: fake outage")
        out = []
        for c, r in zip(candidates, references, strict=True):
            if not c.strip() or not r.strip():
                out.append(MetricValue(None, ("bertscore_empty",), "no token"))
            else:
                out.append(MetricValue(1.0 / (1 + abs(len(c) - len(r)) / 7), ()))
        return out


def traced_peak(run: Callable[[], object]) -> int:
    """Bytes allocated at the peak of ``run()`` above what was allocated before it
    (``tracemalloc``; what ``run`` returns is kept until the peak is read)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        kept = run()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del kept
    return peak
