"""``run muse``'s records built one question at a time (``Muse.iter_score``), memory flat
in the number of questions, with the same records, in the same order, as ``Muse.score``.

Each question's result is read once, in file order (the engine's one-pass mapping), its
rows scored and its records built (:func:`.records.question_records`). An open answer's
record needs its task's chance floor, measured over every answer of the task, so from
the first open turn on the records go to a temporary file (pickled, next to the run's
files) while :class:`~.open_stream.OpenStream` embeds and scores the open answers in
batches; once every question is read, the floors are known and the records are read
back in order, each open turn completed with its outcome and the floor
(:func:`complete`), and yielded. Records before the first open turn — all of them in a
run without open-answer tasks — are yielded at once. The unreadable lines' records come
last, as in ``Muse.score``; every record is flagged by the model-failure rule
(``mark_records``) when it is yielded.
"""

from __future__ import annotations

import contextlib
import pickle
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from heritage_eval.benchmarks.muse.open_stream import OpenStream, TurnOutcome
from heritage_eval.benchmarks.muse.questions import Question
from heritage_eval.benchmarks.muse.records import bad_line_record, question_records
from heritage_eval.benchmarks.muse.run import QuestionSet, TurnPlan, question_rows
from heritage_eval.benchmarks.muse.scoring import OpenScoring, TurnResult
from heritage_eval.core.model_failures import apply_policy, mark_records, pad_after_failure
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Outcome
from heritage_eval.metrics.embeddings import Embedder


def needs_outcome(record: SampleRecord) -> bool:
    """Whether ``record`` is an open turn still to score (answered, not yet embedded)."""
    return (record.details.get("answer_format") == "open"
            and record.state is Outcome.SCORED and record.scores.get("score") is None)


def complete(record: SampleRecord, outcome: TurnOutcome | None,
             floor: dict[str, Any] | None) -> SampleRecord:
    """``record`` (an open turn's) with its embedding ``outcome`` applied (``None``: it
    had none to wait for) and the task's chance ``floor``, as ``turn_record`` would have
    made it with the scored row: state, ``scores``, ``error``, ``details.chance_floor``
    and ``details.metric_flags`` (the last two keys of ``details``, in that order)."""
    details = {k: v for k, v in record.details.items()
               if k not in ("chance_floor", "metric_flags")}
    flags = record.details.get("metric_flags")
    if outcome is not None:
        state, score, reason, flags = outcome
        record.state = state
        record.scores = {"score": score, "cosine": score}
        record.error = reason if state in (Outcome.ERROR, Outcome.UNSCORED) else None
    if floor is not None:
        details["chance_floor"] = floor
    if flags:
        details["metric_flags"] = flags
    record.details = details
    return record


class _Spill:
    """Records pickled one after another to ``fh``, an anonymous temporary file."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.fh = fh
        self.n = 0

    def write(self, record: SampleRecord) -> None:
        pickle.dump(record, self.fh, pickle.HIGHEST_PROTOCOL)
        self.n += 1

    def read(self) -> Iterator[SampleRecord]:
        self.fh.seek(0)
        for _ in range(self.n):
            yield pickle.load(self.fh)  # our own file, written just above


class TurnStream:
    """The records of ``questions`` (see the module docstring). ``plan``: the turn plan;
    ``bad``: ``[(row, line)]`` of the unreadable lines to report; ``policy``: the
    model-failure rule; ``spill_dir``: folder of the temporary files (the run folder;
    ``None``: the system's). After :meth:`records` is exhausted, :attr:`open` holds the
    :class:`~.scoring.OpenScoring` and :attr:`n_turns` the number of turn records."""

    def __init__(self, questions: Sequence[Question], plan: TurnPlan, qs: QuestionSet,
                 model: str, embedder: Embedder | None, policy: str,
                 bad: Sequence[tuple[TurnResult, int]] = (),
                 spill_dir: Path | None = None) -> None:
        self.questions = questions
        self.plan = plan
        self.qs = qs
        self.model = model
        self.embedder = embedder
        self.policy = policy
        self.bad = bad
        self.spill_dir = spill_dir
        self.open = OpenScoring()
        self.n_turns = 0

    def _result(self, q: Question, results: Mapping[str, ItemResult]) -> ItemResult | None:
        """``q``'s result (read once) under the model-failure rule, a dialogue cut short
        by the model's own failure padded (as ``Muse.score``)."""
        res = results.get(q.id)
        if res is None:
            return None
        res = apply_policy({q.id: res}, self.policy)[q.id]
        keep = self.plan.keep.get(q.id)
        return pad_after_failure({q.id: res}, {q.id: max(keep) + 1})[q.id] if keep else res

    def records(self, results: Mapping[str, ItemResult]) -> Iterator[SampleRecord]:
        """Every record, in ``Muse.score``'s order; ``results`` is read once per
        question, in question order."""
        with contextlib.ExitStack() as stack:
            scorer = OpenStream(self.embedder, self.spill_dir)
            stack.callback(scorer.close)
            spill: _Spill | None = None
            for q in self.questions:
                res = self._result(q, results)
                rows = question_rows(q, self.plan, res)
                self.n_turns += len(rows)
                if not rows:
                    continue
                scorer.add(rows)
                if spill is None and any(r.answer_format == "open" for r in rows):
                    spill = _Spill(stack.enter_context(tempfile.TemporaryFile(
                        prefix=".muse-records-", dir=self.spill_dir)))
                for rec in question_records(q, rows, self.qs, self.model,
                                            res.responses if res is not None else []):
                    if spill is None:
                        yield self._marked(rec)
                    else:
                        spill.write(rec)
            self.open = scorer.finish()
            if spill is not None:
                for rec in spill.read():
                    task = rec.groups.get("task", "")
                    if rec.details.get("answer_format") == "open":
                        outcome = scorer.outcome(task) if needs_outcome(rec) else None
                        rec = complete(rec, outcome, self.open.floors.get(task))
                    yield self._marked(rec)
        for row, line in self.bad:
            yield self._marked(bad_line_record(row, line, self.qs, self.model))

    def _marked(self, record: SampleRecord) -> SampleRecord:
        mark_records([record], self.policy)
        return record
