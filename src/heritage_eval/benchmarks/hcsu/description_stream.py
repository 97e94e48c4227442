"""The description task's records built one window of samples at a time (streamed run).

``run hcsu-description`` with a record sink (:mod:`.summary_sink`) scores its answers in
windows of :data:`WINDOW` samples, read from the run's one-pass results in sample order:
the window's rows (:func:`~.description_scoring.description_records`), BERTScore on the
window's answers in one batch, the judge on the window's answers and on the expert
reference of each class met for the first time, then one record per row. Nothing but
the window, the records held back (below), the judged expert references (one per
class) and the domains each metric has scored is kept.

Held back (decision): an empty answer scores 0 on a metric only where that metric gave
some real score in its domain (:func:`~.sample_records.zero_domains`), which later
answers may decide. Its record, and every record after it (report order), waits in
:class:`~.held_records.HeldRecords` until each requested metric has scored in the
domain or the domain's last sample has been scored; a metric not requested never
scores. The records come out exactly as the listed run writes them.

One difference from the listed run, by construction: BERTScore is computed per window
(the same pairs, fewer at a time: equal up to the model's floating-point batching), and
a scorer that fails part-way leaves that window and every later one unscored with its
reason (:class:`StickyScorer`) where the listed run, scoring everything in one call,
would leave every answer unscored. The judge's requests are the listed run's, split
by window (each expert reference judged once).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import islice
from typing import cast

from heritage_eval.benchmarks.hcsu import held_records
from heritage_eval.benchmarks.hcsu.description import PlannedRequest
from heritage_eval.benchmarks.hcsu.description_scoring import (
    add_bertscore,
    add_judgments,
    description_records,
)
from heritage_eval.benchmarks.hcsu.held_records import HeldRecords
from heritage_eval.benchmarks.hcsu.judging import RUBRIC, expert_item_id, judge_context
from heritage_eval.benchmarks.hcsu.pipeline import Engine, class_references
from heritage_eval.benchmarks.hcsu.records import ANSWERED, Record
from heritage_eval.benchmarks.hcsu.sample_records import DESCRIPTION_SCORES
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Outcome
from heritage_eval.metrics.bertscore import BertScorer, BertScoreUnavailable
from heritage_eval.metrics.flags import MetricValue
from heritage_eval.metrics.judge import Judgment, run_judge

#: Samples scored together (BERTScore batch, judge requests).
WINDOW = 128
#: ``(item, row, result, zeros) -> record``: zeros as :func:`~.sample_records.zero_domains`
MakeRecord = Callable[[PlannedRequest, Record, ItemResult | None, Mapping[str, set[str]]],
                      SampleRecord]


class StickyScorer:
    """``scorer`` whose first :class:`BertScoreUnavailable` is raised again, with the same
    reason, by every later :meth:`score_pairs` call (see the module docstring)."""

    def __init__(self, scorer: BertScorer) -> None:
        self.scorer = scorer
        self.failed: str | None = None

    def score_pairs(self, candidates: Sequence[str], references: Sequence[str]
                    ) -> list[MetricValue]:
        """:meth:`BertScorer.score_pairs`, or the first failure again."""
        if self.failed is not None:
            raise BertScoreUnavailable(self.failed)
        try:
            return self.scorer.score_pairs(candidates, references)
        except BertScoreUnavailable as exc:
            self.failed = str(exc)
            raise


@dataclass
class DescriptionScoring:
    """What scores a description run: the ``dataset`` (expert descriptions, judge facts),
    the BERTScore ``scorer`` (``None``: ``scorer_error`` says why) and the ``judge``."""

    dataset: HcsuDataset
    scorer: BertScorer | None
    scorer_error: str | None
    judge: Engine | None


def judge_window(dataset: HcsuDataset, rows: Sequence[Record], judge: Engine,
                 experts: dict[str, Judgment]) -> dict[str, Judgment]:
    """Judge the non-empty answers of ``rows`` and the expert reference of each class of
    their answered rows not yet in ``experts`` (added to it); returns sample id ->
    judgment (:func:`~.pipeline.judge_records` for one window)."""
    classes = sorted({r["class"] for r in rows if r["outcome"] in ANSWERED} - experts.keys())
    items: dict[str, tuple[str, str]] = {}
    for key in classes:
        cls = dataset.classes[key]
        items[expert_item_id(key)] = (cls.description or "", judge_context(cls))
    for r in rows:
        if r["outcome"] == Outcome.SCORED.value:
            items[r["id"]] = (r["answer"], judge_context(dataset.classes[r["class"]]))
    if not items:
        return {}
    out = run_judge(RUBRIC, items, judge.backend, judge.cache, judge.settings,
                    judge.concurrency)
    experts.update({key: out[expert_item_id(key)] for key in classes})
    return {k: v for k, v in out.items() if not k.startswith("expert::")}


def iter_description_records(plan: Sequence[PlannedRequest], results: Mapping[str, ItemResult],
                             fix: Callable[[ItemResult], ItemResult],
                             scoring: DescriptionScoring, make_record: MakeRecord,
                             templates: Callable[[], AbstractContextManager[None]],
                             window: int | None = None, held: int | None = None
                             ) -> Iterator[SampleRecord]:
    """One record per item of ``plan``, in order (module docstring).

    ``results``: read once per item, in plan order (a one-pass mapping works); ``fix``:
    the ``--model-failures`` rule applied to each result; ``make_record``: the envelope
    of a row; ``templates``: the run's prompt templates in use while rows and records
    are built (never while ``results`` is read: reading plans further samples).
    ``window``: samples scored together (default :data:`WINDOW`); ``held``: records held
    back in memory before the rest go to a temporary file (default
    :data:`~.held_records.MEMORY_LIMIT`)."""
    step = max(1, WINDOW if window is None else window)
    requested = {"bertscore_x10": scoring.scorer is not None,
                 "terminology": scoring.judge is not None,
                 "richness": scoring.judge is not None}
    last: dict[str, int] = {}
    targets = getattr(plan, "targets", None)  # a LazyPlan: its domains without building
    for i, domain in enumerate((t.domain for t in targets) if targets is not None
                               else (item.target.domain for item in plan)):
        last[domain] = i
    domains = sorted(last)
    code = {d: n for n, d in enumerate(domains)}
    scored: dict[str, set[str]] = {k: set() for k in DESCRIPTION_SCORES}
    references = class_references(scoring.dataset)
    scorer = cast(BertScorer, StickyScorer(scoring.scorer)) if scoring.scorer else None
    experts: dict[str, Judgment] = {}
    queue = HeldRecords(held_records.MEMORY_LIMIT if held is None else held)
    done = -1  # index of the last item scored

    def ready(tag: int) -> bool:
        domain = domains[tag // 2]
        return not tag % 2 or done >= last[domain] or all(
            not requested[k] or domain in scored[k] for k in DESCRIPTION_SCORES)

    def released(rec: SampleRecord) -> SampleRecord:
        if rec.state is Outcome.UNPARSED:  # its zeros are known now
            domain = rec.groups["domain"]
            rec.scores = {k: 0.0 if domain in scored[k] else None for k in DESCRIPTION_SCORES}
        return rec

    try:
        items = iter(plan)  # one pass: a LazyPlan builds each request once here
        start = 0
        while chunk := list(islice(items, step)):
            got: dict[str, ItemResult] = {}
            for item in chunk:  # every item looked up once, in order (one-pass results)
                res = results.get(item.id)
                if res is not None:
                    got[item.id] = fix(res)
            with templates():
                rows = description_records(chunk, got)
            add_bertscore(rows, references, scorer, scoring.scorer_error)
            if scoring.judge is not None:
                add_judgments(rows, judge_window(scoring.dataset, rows, scoring.judge,
                                                 experts), experts)
            for row in rows:
                for key, status in DESCRIPTION_SCORES.items():
                    if row.get(status) == Outcome.SCORED.value:
                        scored[key].add(row["domain"])
            done = start + len(chunk) - 1
            start += len(chunk)
            for item, row in zip(chunk, rows, strict=True):
                with templates():
                    rec = make_record(item, row, got.get(item.id), scored)
                queue.push(rec, 2 * code[row["domain"]]
                           + (row["outcome"] == Outcome.UNPARSED.value))
            while (tag := queue.head_tag()) is not None and ready(tag):
                yield released(queue.pop())
        while len(queue):
            yield released(queue.pop())
    finally:
        queue.close()
