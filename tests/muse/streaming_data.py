"""Generated MUSE inputs for the streaming tests: question files of every answer format,
a scripted model (right, wrong, refused, failed, cut and truncated answers) and
deterministic text embedders (one that fails on marked texts, one that gives a zero
vector). Seeded: the same seed gives the same file and the same answers."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
    write_questions,
)
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.metrics.embeddings import Embedder, EmbeddingError, FloatArray
from heritage_eval.models.base import ModelBackend

WORDS = ("smile", "boat", "river", "gaze", "son", "home", "rain", "lamp", "wave", "drum",
         "silk", "tea", "moon", "crane", "pine", "ink")
CHOICE_TASKS = ("object_classification", "emotion_detection", "activity_localization",
                "activity_description", "cultural_identification", "scene_classification")
OPEN_TASKS = ("visual_clue_identification", "emotion_cause_inference")
KINDS = ("choice", "count", "position", "open", "dialogue", "remote")


def _text(rng: random.Random, marks: Sequence[str] = ()) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(2, 5))]
    if marks and rng.random() < 0.15:
        words.append(rng.choice(marks))
    return " ".join(words)


#: False: option texts from a few fixed words (bounded parser caches, for memory tests)
VARIED_OPTIONS = True


def _options(rng: random.Random, n: int) -> list[OptionRecord]:
    return [OptionRecord(label=chr(65 + i), text=_text(rng) if VARIED_OPTIONS else WORDS[i],
                         distractor_type="correct" if i == 0 else rng.choice(
                             ("oa", "oosi", "other_activity", "sub_region")))
            for i in range(n)]


def _choice(rng: random.Random, task: str, image: str | None) -> QuestionTurn:
    opts = _options(rng, rng.randint(2, 4))
    return QuestionTurn(task=task, images=[image] if image else [], tag="option",
                        prompt=f"{task}? {_text(rng)}", answer_format="choice",
                        options=opts, answer="A")


def _open(rng: random.Random, task: str, image: str | None,
          ref_marks: Sequence[str]) -> QuestionTurn:
    ref = "   " if rng.random() < 0.05 else _text(rng, ref_marks)
    return QuestionTurn(task=task, images=[image] if image else [],
                        tag=rng.choice(("visual clues", None)),
                        prompt=f"{task}: {_text(rng)}", answer_format="open", answer=ref)


def make_question(rng: random.Random, k: int, kind: str, n_art: int,
                  ref_marks: Sequence[str] = ()) -> Question:
    """Question ``k`` of ``kind`` (:data:`KINDS`) on one of ``n_art`` artworks."""
    art = f"art{k % n_art}"
    img = f"{art}.png"
    if kind == "choice":
        turns = [_choice(rng, rng.choice(CHOICE_TASKS), img)]
    elif kind == "count":
        turns = [QuestionTurn(task="object_count", images=[img], tag="count",
                              prompt="count people", answer_format="number",
                              answer=rng.randint(0, 6))]
    elif kind == "position":
        turns = [QuestionTurn(task="relative_position", images=[img], prompt="where?",
                              answer_format="position", answer={
                                  "lateral": rng.choice(("left", "none", "right")),
                                  "depth": rng.choice(("front", "none", "back")),
                                  "vertical": rng.choice(("above", "none", "under"))})]
    elif kind == "open":
        turns = [_open(rng, rng.choice(OPEN_TASKS), img, ref_marks)]
    elif kind == "dialogue":
        turns = [_choice(rng, "object_classification", img),
                 _choice(rng, "emotion_detection", None),
                 _open(rng, "visual_clue_identification", None, ref_marks),
                 _open(rng, "emotion_cause_inference", None, ref_marks)]
    else:
        turns = [_choice(rng, "remote_interaction", img),
                 _choice(rng, "remote_interaction", None)]
    return Question(id=f"{art}:{kind}:{k}", image_id=art, turns=turns)


def write_file(root: Path, n: int, seed: int, *, kinds: Sequence[str] = KINDS,
               n_art: int = 5, bad_lines: int = 0, missing: int = 0,
               ref_marks: Sequence[str] = ()) -> Path:
    """A question file of ``n`` questions (kinds drawn from ``kinds``), ``bad_lines``
    malformed lines among them and ``missing`` questions whose image is not on disk."""
    rng = random.Random(seed)
    for a in range(n_art):
        Image.new("RGB", (16, 12), (a * 40 % 256, 90, 30)).save(root / f"art{a}.png")
    qs = [make_question(rng, k, rng.choice(kinds), n_art, ref_marks) for k in range(n)]
    for k in range(missing):
        q = qs[(k * 7 + 3) % n]
        q.turns[0].images = ["nowhere.png"]
    header = QuestionFileHeader(generator_version="test", seed=seed,
                                tasks=sorted({t.task for q in qs for t in q.turns}))
    path = root / "q.jsonl"
    write_questions(path, header, qs)
    if bad_lines:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for b in range(bad_lines):
            lines.insert(2 + (b * 5) % max(1, len(lines) - 2),
                         f'{{"kind": "question", "id": "broken{b}", "turns": '
                         '[{"task": "object_count"}]}\n')
        path.write_text("".join(lines), encoding="utf-8")
    return path


def _pick(seed: str) -> float:
    return int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16) / 2**32


class ScriptedModel(ModelBackend):
    """Answers from the offered options (the conversation payload), by a hash of the
    question id and turn: mostly a valid answer, sometimes an unparsable one, a refusal
    (content filter), a failed request, an empty answer or a truncated one. Open turns
    get one of ``open_marks`` at ``mark_rate`` (e.g. a text the embedder fails on)."""

    backend = "scripted"

    def __init__(self, salt: str = "", open_marks: Sequence[str] = (),
                 mark_rate: float = 0.2) -> None:
        self.salt = salt
        self.open_marks = tuple(open_marks)
        self.mark_rate = mark_rate

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        turn = sum(1 for m in messages if m.role == "user") - 1
        sid = str(payload["sample_id"])
        u = _pick(f"{self.salt}|{sid}|{turn}")
        if u < 0.05:
            return Response(text=None, error="blocked", meta={"failure": "content_filter"})
        if u < 0.09:
            return Response(text=None, error="HTTP 500 after 3 retries", attempts=4)
        if u < 0.12:
            return Response(text="", latency_s=0.1)
        if u < 0.16:
            return Response(text="I cannot tell, maybe", latency_s=0.1)
        options = payload["options"].get(str(turn)) or ["x"]
        text = options[int(_pick(f"{sid}|{turn}|o") * len(options))]
        fmt = payload["question"]["turns"][turn]["answer_format"]
        if fmt == "open" and self.open_marks and _pick(f"{sid}|{turn}|m") < self.mark_rate:
            text = f"{text} {self.open_marks[int(u * 1000) % len(self.open_marks)]}"
        finish = "length" if u > 0.95 else "stop"
        return Response(text=text, latency_s=0.2, meta={"finish_reason": finish})


class HashEmbedder(Embedder):
    """Unit vectors of ``dim`` values drawn from a hash of each text (a few dimensions,
    so that unrelated texts have negative cosines too); a text holding ``zero`` gets a
    zero vector; a batch holding a text with ``fail`` raises :class:`EmbeddingError`.
    ``calls``: the batches asked for (kept when ``keep_calls``)."""

    def __init__(self, dim: int = 6, fail: str | None = None, zero: str | None = None,
                 keep_calls: bool = True) -> None:
        self.id = f"hash{dim}"
        self.dim = dim
        self.fail = fail
        self.zero = zero
        self.keep_calls = keep_calls
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> FloatArray:
        if self.keep_calls:
            self.calls.append(list(texts))
        if self.fail is not None and any(self.fail in t for t in texts):
            raise EmbeddingError(f"cannot embed a text with {self.fail!r} "
                                 f"(batch of {len(texts)})")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            if self.zero is not None and self.zero in t:
                continue
            seed = int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).normal(size=self.dim)
            out[i] = (v / np.linalg.norm(v)).astype(np.float32)
        return out
