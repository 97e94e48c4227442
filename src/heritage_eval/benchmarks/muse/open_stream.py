"""Open answers (tasks 3, 4) scored while ``run muse`` streams: the streamed form of
:func:`.scoring.score_open_answers`, with the same numbers and the same failures.

:class:`OpenStream` is fed each question's turn rows in file order (:meth:`~OpenStream.add`).
Per task it queues the reference text of each question (once per question, the text of
its last open turn of the task, as ``score_open_answers`` keys them) and the parsed
answer of each open turn still to score, and embeds each queue in batches of
``batch_size`` texts (64, the batches ``score_open_answers`` makes: references of a task
in question order, answers in turn order), so an embedder gives the same vectors. An
answer is scored as soon as it and its reference are embedded; its outcome
``(state, score, reason, metric flags)`` goes to a temporary file, its vector and the
references to others (:class:`~.chance_floor.SpilledRows`), and nothing else is kept:
memory is a few batches whatever the number of questions.

:meth:`~OpenStream.finish` embeds what is queued and gives the
:class:`~.scoring.OpenScoring` (per-task chance floors from the spilled vectors,
:func:`~.chance_floor.chance_floor`); :meth:`~OpenStream.outcome` then reads back each
pending turn's outcome, in turn order per task. A task-wide failure (no embedder, or a
reference batch that failed) makes every answer of the task ``unscored`` with that
reason, as ``score_open_answers`` does. References of a task are embedded even when none
of its answers turns out to need them (the stream cannot know in advance): an extra cost
only, never another number.
"""

from __future__ import annotations

import contextlib
import pickle
import tempfile
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from heritage_eval.benchmarks.muse.chance_floor import SpilledRows, chance_floor
from heritage_eval.benchmarks.muse.scoring import OpenScoring, TurnResult, embed_batch
from heritage_eval.core.types import Outcome
from heritage_eval.metrics.embeddings import Embedder, FloatArray, cosine
from heritage_eval.metrics.flags import COSINE_NEGATIVE_AS_ZERO, merge_flags

#: ``(state, score, reason, metric flags)`` of one open turn after embedding
TurnOutcome = tuple[Outcome, float | None, str | None, list[str] | None]
#: texts per ``embed`` call (``score_open_answers``' ``batch_size``)
BATCH = 64


class _Answer:
    """One open answer to score: its text until embedded, then its vector."""

    __slots__ = ("empty_ref", "own", "text", "vec")

    def __init__(self, own: int, empty_ref: bool, text: str) -> None:
        self.own = own
        self.empty_ref = empty_ref
        self.text: str | None = text
        self.vec: FloatArray | None = None


class _Task:
    """The stream's state for one open-answer task."""

    def __init__(self) -> None:
        self.ref_texts: list[str] = []          # queued references
        self.n_refs = 0                         # references assigned (questions seen)
        self.n_refs_done = 0                    # references embedded or failed
        self.ref_vecs: dict[int, FloatArray | None] = {}  # still needed by an answer
        self.ref_errors: list[str] = []
        self.unembedded: deque[_Answer] = deque()
        self.waiting: deque[_Answer] = deque()  # in turn order, until scored
        self.ans_errors: list[str] = []
        self.pending = 0                        # open turns to score
        self.scored = 0
        self.unscored = 0
        self.reasons: list[str] = []            # distinct failure reasons, in order
        self.override: TurnOutcome | None = None
        self.refs: SpilledRows | None = None
        self.done: SpilledRows | None = None
        self.own: SpilledRows | None = None
        self.outcomes: IO[bytes] | None = None


class OpenStream:
    """See the module docstring. ``embedder``: ``None`` makes every open answer
    ``unscored`` (``no embedder configured``); ``spill_dir``: folder of the temporary
    files (deleted on :meth:`close`; ``None``: the system's temporary folder)."""

    def __init__(self, embedder: Embedder | None, spill_dir: Path | None = None,
                 batch_size: int = BATCH) -> None:
        self.embedder = embedder
        self.spill_dir = spill_dir
        self.batch_size = batch_size
        self.tasks: dict[str, _Task] = {}
        self._files = contextlib.ExitStack()

    def _file(self) -> IO[bytes]:
        return self._files.enter_context(
            tempfile.TemporaryFile(prefix=".muse-open-", dir=self.spill_dir))

    def _spills(self, st: _Task) -> None:
        if st.outcomes is None:
            st.refs, st.done = SpilledRows(self._file()), SpilledRows(self._file())
            st.own = SpilledRows(self._file(), np.int64)
            st.outcomes = self._file()

    def add(self, rows: Sequence[TurnResult]) -> None:
        """Queue the open turns of one question's ``rows`` (all of one question)."""
        by_task: dict[str, list[TurnResult]] = {}
        for r in rows:
            if r.answer_format == "open":
                by_task.setdefault(r.task, []).append(r)
        for task, turns in by_task.items():
            st = self.tasks.setdefault(task, _Task())
            ref = str(turns[-1].answer or "")  # score_open_answers: the last one's
            own = st.n_refs
            st.n_refs += 1
            pending = [r for r in turns if r.state == Outcome.SCORED and r.score is None]
            st.pending += len(pending)
            if self.embedder is None:
                continue
            self._spills(st)
            st.ref_texts.append(ref)
            for r in pending:
                answer = _Answer(own, not ref.strip(), str(r.parsed))
                st.unembedded.append(answer)
                st.waiting.append(answer)
            self._embed(st, final=False)

    def _embed(self, st: _Task, final: bool) -> None:
        """Embed the full batches queued (all when ``final``), then score what can be."""
        assert self.embedder is not None and st.refs is not None
        size = self.batch_size
        while len(st.ref_texts) >= size or (final and st.ref_texts):
            batch, st.ref_texts = st.ref_texts[:size], st.ref_texts[size:]
            vecs, error = embed_batch(self.embedder, batch)
            if error is not None:
                st.ref_errors.append(error)
            for vec in vecs:
                st.ref_vecs[st.n_refs_done] = vec
                st.n_refs_done += 1
                if not st.ref_errors and vec is not None:
                    st.refs.append(vec)
        while len(st.unembedded) >= size or (final and st.unembedded):
            answers = [st.unembedded.popleft() for _ in range(min(size, len(st.unembedded)))]
            vecs, error = embed_batch(self.embedder, [a.text or "" for a in answers])
            if error is not None:
                st.ans_errors.append(error)
            for a, vec in zip(answers, vecs, strict=True):
                a.text, a.vec = None, vec
        while st.waiting and st.waiting[0].text is None and st.waiting[0].own < st.n_refs_done:
            outcome = self._score(st, st.waiting.popleft())
            if outcome is not None:
                assert st.outcomes is not None
                pickle.dump(outcome, st.outcomes, pickle.HIGHEST_PROTOCOL)
        low = st.waiting[0].own if st.waiting else st.n_refs_done
        for k in [k for k in st.ref_vecs if k < low]:
            del st.ref_vecs[k]

    def _score(self, st: _Task, a: _Answer) -> TurnOutcome | None:
        """The outcome of one answer, in ``score_open_answers``' order of checks;
        ``None`` when a reference batch failed (the whole task fails at the end)."""
        if st.ref_errors:
            return None
        if a.vec is None:
            return self._fail(st, st.ans_errors[0])
        if a.empty_ref:
            return self._fail(st, "empty reference answer")
        ref = st.ref_vecs[a.own]
        assert ref is not None
        cos = cosine(a.vec, ref)
        if cos.value is None:
            return self._fail(st, str(cos.reason), list(cos.flags))
        neg = (COSINE_NEGATIVE_AS_ZERO,) if cos.value < 0.0 else ()
        assert st.done is not None and st.own is not None
        st.done.append(a.vec)
        st.own.append([a.own])
        st.scored += 1
        return Outcome.SCORED, max(0.0, cos.value), None, merge_flags(cos.flags, neg) or None

    @staticmethod
    def _fail(st: _Task, reason: str, flags: list[str] | None = None) -> TurnOutcome:
        st.unscored += 1
        if reason not in st.reasons:
            st.reasons.append(reason)
        return Outcome.UNSCORED, None, f"embedding failed: {reason}", flags

    def finish(self) -> OpenScoring:
        """Embed and score what is queued; the run's :class:`~.scoring.OpenScoring`
        (tasks in the order their first open turn came, those with no answer to score
        left out, as ``score_open_answers``)."""
        res = OpenScoring()

        def failed(reason: str, st: _Task) -> None:
            res.unscored += st.pending
            if reason not in res.failures:
                res.failures.append(reason)
            st.override = (Outcome.UNSCORED, None, f"embedding failed: {reason}", None)

        for task, st in self.tasks.items():
            if self.embedder is not None:
                self._embed(st, final=True)
            if not st.pending:
                continue
            if self.embedder is None:
                failed("no embedder configured", st)
                res.floors[task] = {"floor": None, "pairs": 0, "note": "no embedder"}
                continue
            if st.ref_errors:
                failed(f"references: {st.ref_errors[0]}", st)
                res.floors[task] = {"floor": None, "pairs": 0,
                                    "note": "references not embedded"}
                continue
            res.scored += st.scored
            res.unscored += st.unscored
            res.failures += [r for r in st.reasons if r not in res.failures]
            assert st.done is not None and st.refs is not None and st.own is not None
            floor, pairs = chance_floor(st.done, st.refs, st.own) if len(st.done) \
                else (None, 0)
            note = None if floor is not None else (
                "fewer than two questions" if st.n_refs < 2 else "no answer embedded")
            res.floors[task] = {"floor": floor, "pairs": pairs, "note": note}
        for st in self.tasks.values():
            if st.outcomes is not None:
                st.outcomes.seek(0)
        return res

    def outcome(self, task: str) -> TurnOutcome:
        """After :meth:`finish`: the outcome of ``task``'s next open turn to score (in
        turn order). Raises ``KeyError`` for a task with no such turn, ``EOFError`` when
        asked more times than there were turns."""
        st = self.tasks[task]
        if st.override is not None:
            return st.override
        if st.outcomes is None:
            raise KeyError(task)
        out: Any = pickle.load(st.outcomes)  # our own temporary file
        return out

    def close(self) -> None:
        """Delete the temporary files."""
        self._files.close()
