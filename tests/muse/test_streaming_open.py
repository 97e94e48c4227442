"""The streamed open-answer scoring (:class:`OpenStream`) and its pieces against the list
scoring they replace: ``score_open_answers`` (the reference: the code ``run muse`` used
before streaming), ``mismatched_mean`` and ``statistics.fmean``."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.muse.analysis.summary_fold import ExactMean
from heritage_eval.benchmarks.muse.chance_floor import SpilledRows, chance_floor
from heritage_eval.benchmarks.muse.open_stream import OpenStream
from heritage_eval.benchmarks.muse.scoring import TurnResult, score_open_answers
from heritage_eval.core.types import Outcome
from heritage_eval.metrics.embeddings import mismatched_mean
from tests.muse.streaming_data import HashEmbedder

TEXTS = ("a b", "a c", "b c d", "  ", "FAIL x", "ZERO y", "c", "d a")
STATES = (Outcome.SCORED, Outcome.SCORED, Outcome.SCORED, Outcome.UNPARSED, Outcome.ERROR)


def _row(qid: str, task: str, turn: int, state: Outcome, parsed: str, answer: str
         ) -> TurnResult:
    pending = state == Outcome.SCORED
    return TurnResult(question_id=qid, image_id="i", task=task, turn=turn,
                      answer_format="open", state=state, parsed=parsed if pending else None,
                      answer=answer, score=None if pending else (
                          0.0 if state == Outcome.UNPARSED else None))


questions = st.lists(st.lists(st.tuples(st.sampled_from(("t3", "t4", "tx")),
                                        st.sampled_from(STATES), st.sampled_from(TEXTS),
                                        st.sampled_from(TEXTS)), min_size=1, max_size=3),
                     max_size=30)


@settings(max_examples=60, deadline=None)
@given(questions, st.integers(1, 5), st.sampled_from(("FAIL", None)),
       st.booleans())
def test_stream_equals_score_open_answers(qs: list[list[tuple[str, Outcome, str, str]]],
                                          batch: int, fail: str | None,
                                          has_embedder: bool) -> None:
    per_q = [[_row(f"q{k}", task, j, state, parsed, ans)
              for j, (task, state, parsed, ans) in enumerate(turns)]
             for k, turns in enumerate(qs)]
    listed = [r.model_copy(deep=True) for rows in per_q for r in rows]
    # the reference: the list scoring, rows filled in place
    ref = score_open_answers(listed, HashEmbedder(3, fail=fail, zero="ZERO")
                             if has_embedder else None, batch_size=batch)
    stream = OpenStream(HashEmbedder(3, fail=fail, zero="ZERO") if has_embedder else None,
                        None, batch_size=batch)
    try:
        for rows in per_q:
            stream.add(rows)
        got = stream.finish()
        assert got == ref  # counts, floors (to the bit), failure reasons in order
        flat = [r for rows in per_q for r in rows]
        for before, after in zip(flat, listed, strict=True):
            if before.state == Outcome.SCORED and before.score is None:
                state, score, reason, flags = stream.outcome(before.task)
                assert (state, score, reason, flags) == (
                    after.state, after.score, after.reason, after.metric_flags)
    finally:
        stream.close()


def test_stream_batches_are_those_of_the_list_scoring() -> None:
    """References of a task in question order, answers in turn order, 2 per call: the
    embedder is asked for the same batches (as sets of calls; the order of calls
    between references and answers differs)."""
    rows = [[_row(f"q{k}", "t3", 0, Outcome.SCORED, f"ans {k}", f"ref {k}")]
            for k in range(5)]
    old, new = HashEmbedder(3), HashEmbedder(3)
    score_open_answers([r.model_copy() for q in rows for r in q], old, batch_size=2)
    stream = OpenStream(new, None, batch_size=2)
    for q in rows:
        stream.add(q)
    stream.finish()
    stream.close()
    assert sorted(map(tuple, old.calls)) == sorted(map(tuple, new.calls))
    # by hand: 5 references and 5 answers in batches of 2, 2, 1
    assert sorted(map(len, new.calls)) == [1, 1, 2, 2, 2, 2]


def test_chance_floor_by_hand_and_against_mismatched_mean(tmp_path: Path) -> None:
    # by hand: answers a0 = r0, a1 = r2 (own refs 0 and 2); r1 orthogonal to both;
    # mismatched pairs: a0.r1 = 0, a0.r2 = 0.6 -> clipped 0.6, a1.r0 = 0.6, a1.r1 = 0
    r = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.6, 0.8, 0.0]], dtype=np.float32)
    a = r[[0, 2]]
    mean, pairs = chance_floor(a, r, [0, 2])
    assert pairs == 4 and math.isclose(mean or 0.0, (0.6 + 0.6) / 4, rel_tol=1e-6)
    rng = np.random.default_rng(7)
    answers = rng.normal(size=(300, 5)).astype(np.float32)
    answers /= np.linalg.norm(answers, axis=1, keepdims=True)
    refs = rng.normal(size=(40, 5)).astype(np.float32)
    refs /= np.linalg.norm(refs, axis=1, keepdims=True)
    own = list(rng.integers(0, 40, size=300))
    want = mismatched_mean(answers, refs, own, chunk=64)
    # at most ref_block references: the same float as mismatched_mean
    assert chance_floor(answers, refs, own, chunk=64, ref_block=40) == want
    # blocks of references: the same mean but for the order of the sum
    blocked = chance_floor(answers, refs, own, chunk=64, ref_block=7)
    assert blocked[1] == want[1] and math.isclose(blocked[0] or 0, want[0] or 0,
                                                  rel_tol=1e-12)
    # read back from disk (float64 rows, int64 own): the same float
    with (tmp_path / "a").open("w+b") as fa, (tmp_path / "r").open("w+b") as fr, \
            (tmp_path / "o").open("w+b") as fo:
        sa, sr, so = SpilledRows(fa), SpilledRows(fr), SpilledRows(fo, np.int64)
        for k in range(0, 300, 17):
            sa.append(answers[k:k + 17])
            so.append(np.array(own[k:k + 17]).reshape(-1, 1))
        sr.append(refs)
        assert chance_floor(sa, sr, so, chunk=64, ref_block=7) == blocked
        assert chance_floor(sa, sr, so, chunk=64, ref_block=40) == want


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=200), st.randoms())
def test_exact_mean_is_fmean_in_any_order(values: list[float], rnd: object) -> None:
    shuffled = list(values)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    acc = ExactMean()
    for v in shuffled:
        acc.add(v)
    assert acc.mean() == statistics.fmean(values)
    assert ExactMean().mean() is None
