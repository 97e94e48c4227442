"""MUSE on the platform: ``run muse`` through :func:`heritage_eval.core.engine.execute`.

One sample = one :class:`~.questions.Question` of the question file (``--tasks`` /
``--limit`` applied, :func:`.run.select`); its turns are sent as one conversation (the
model's own answers stay in the history) up to the last turn scored; each scored turn
is one record (:mod:`.records`). Open answers (tasks 3, 4) are embedded and the chance
floors measured while scoring, with the embedder made in :meth:`Muse.prepare`.
Unreadable question-file lines are ``error`` records reported apart from the tasks.

The run streams (memory flat in the number of questions): the question file is read
for a few facts per question, then again on each pass (:mod:`.question_index`);
:meth:`Muse.iter_score` builds the records one question at a time
(:mod:`.streamed_scoring`; open answers embedded in batches as they come,
:mod:`.open_stream`) and :meth:`Muse.record_sink` folds them into the summary body
(:mod:`.summary_sink`). :meth:`Muse.score` and :meth:`Muse.aggregate` are the same over
lists (the engine's path without a sink), with the same results.

Metrics (value, standard error and 95 % interval per group in ``summary.json``):

- ``score`` — the paper's per-task score (accuracy, or cosine for open answers). The
  headline is the unweighted mean over tasks (Table 2's ``Average``; ``macro_over="task"``,
  resampled within each task); per capability / level / granularity it is the macro mean
  of their tasks, as ``per_capability`` & co. in the body.
- ``accuracy`` — choice, count and position turns pooled (1/0; unparsed = 0).
- ``cosine`` — open answers pooled (embedding cosine in [0, 1], shown x100).

All three are clustered by artwork (``cluster="image"``): the questions on one artwork
share its picture and its annotation, so they are not independent; the standard error
is cluster-robust over artworks (CR2, docs/intervals.md).

Model failures (refusal, content filter, no final answer) follow ``--model-failures``
and truncated answers are flagged; the body's ``model_failures`` and ``truncation`` keys
hold their rates per task (:mod:`heritage_eval.core.failure_counts`). An OCR engine (``rapidocr``)
is refused: it ignores the question.

Exit status: 0 done (an all-unparsed run included), 1 nothing answered (every turn error
or unscored), 2 unusable input or a model that attempts none of the selected tasks.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from heritage_eval.benchmarks.muse.run_checks import (
    input_problem,
    labelstudio_hint,
    refusal,
    refusal_of_tasks,
)
from heritage_eval.benchmarks.muse.run_options import RunOptions
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.core.benchmark import Benchmark, LoadedData, MetricSpec, RunContext, UsageError
from heritage_eval.core.datapath import open_regular, regular_file_problem
from heritage_eval.core.extras import EXTRAS, require_extra
from heritage_eval.core.fingerprint import config_of
from heritage_eval.core.plugins import DataFormatError, materialise

# Loading this class is all that ``run muse --help`` needs (its options and defaults), so
# the question reader, the scoring, the tables, the embedder and the engine's parts are
# imported where a method uses them (start-up within 0.3 s of ``python -c pass``).
if TYPE_CHECKING:
    from heritage_eval.benchmarks.muse.question_index import QuestionIndex
    from heritage_eval.benchmarks.muse.questions import Question
    from heritage_eval.benchmarks.muse.run import QuestionSet, TurnPlan
    from heritage_eval.benchmarks.muse.summary_sink import MuseSink
    from heritage_eval.core.backends import ModelBackend
    from heritage_eval.core.config import RunConfig
    from heritage_eval.core.record import SampleRecord
    from heritage_eval.core.runner import ItemResult
    from heritage_eval.core.types import Conversation
    from heritage_eval.metrics.embeddings import Embedder

#: Checks kept importable from here (they live in :mod:`.run_checks`).
__all__ = ["Muse", "create_embedder", "labelstudio_hint", "options_of", "refusal",
           "refusal_of_tasks"]

LIMIT_HELP = ("evaluate only the first N questions of each task, in file order (the 4-turn "
              "affective dialogue counts as one question of its own group); for a quick try "
              "(the run is marked PARTIAL)")
DESCRIPTION = (
    "Run a model on a MUSE question file (from 'heritage-eval muse generate'). Writes "
    "samples.jsonl (one line per turn, whatever its outcome, and one per unreadable "
    "question-file line), summary.json and summary.md to --out. Open answers (tasks 3, 4) "
    "are scored by embedding cosine as in the paper, with a chance floor and a "
    "floor-adjusted score beside it. Defaults follow the paper: temperature 0, 1024 new "
    "tokens. Exit status: 0 done (also when every answer is unparsed: a valid, wrong "
    "result), 1 nothing was answered (every turn error or unscored), 2 unusable input or "
    "a --model that attempts none of the selected tasks.")
BY = ("task", "capability", "level", "granularity")
METRICS = (
    MetricSpec("score", "Score", macro_over="task", by=BY, cluster="image", decimals=1),
    MetricSpec("accuracy", "Acc", by=("task", "capability"), cluster="image", decimals=1),
    MetricSpec("cosine", "Cos", by=("task",), cluster="image", decimals=1),
)


def _sha256(path: Path) -> str:
    """The file's SHA-256, read in blocks (a FIFO or device refused)."""
    with open_regular(path) as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def create_embedder(spec: str, base_url: str | None = None,
                    api_key_env: str = "OPENAI_API_KEY") -> Embedder:
    """:func:`heritage_eval.metrics.embeddings.create_embedder`, imported on first use
    (NumPy and the model with it); raises ``ValueError`` for an unknown spec."""
    from heritage_eval.metrics.embeddings import create_embedder as make

    return make(spec, base_url, api_key_env)


def options_of(config: RunConfig) -> RunOptions:
    """``config.options`` as ``run muse``'s :class:`~.run_options.RunOptions`; raises
    ``TypeError`` for a configuration built for another benchmark."""
    if not isinstance(config.options, RunOptions):
        raise TypeError(f"not a 'run muse' configuration: {type(config.options).__name__}")
    return config.options


class Muse(Benchmark):
    """The MUSE benchmark (module docstring). ``LoadedData.samples``: the selected
    questions, read again on each pass (:mod:`.question_index`). ``extra``: ``qs``
    (:class:`~.run.QuestionSet`: header, unreadable lines), ``index`` (the facts kept,
    :class:`~.question_index.QuestionIndex`), ``bad`` (``[(row, line)]`` of unreadable
    lines kept for the selected tasks), ``chance``, ``sha256``.
    ``RunContext.resources``: ``embedder``, ``turn_plan``, ``attempted``, ``open_scoring``,
    ``n_turns`` (the last two once the records are scored)."""

    name: ClassVar[str] = "muse"
    #: a turn's record is ``<question>#<turn>`` (run-folder checks)
    record_id_parts: ClassVar[bool] = True
    help: ClassVar[str] = "run a model on a MUSE question file and score all 12 tasks"
    description: ClassVar[str] = DESCRIPTION
    group_keys: ClassVar[tuple[str, ...]] = BY
    metrics: ClassVar[tuple[MetricSpec, ...]] = METRICS
    default_temperature: ClassVar[float] = 0.0
    default_max_tokens: ClassVar[int] = 1024
    limit_help: ClassVar[str | None] = LIMIT_HELP
    Options: ClassVar[type[RunOptions]] = RunOptions
    #: ``load`` keeps the first N questions of each task itself (:func:`.run.select`)
    applies_limit: ClassVar[bool] = True

    def __init__(self) -> None:
        self._out: Path | None = None
        #: ``--questions`` as given -> the question file read (an ``export hf`` folder is
        #: read back to its questions.jsonl by ``load``); the fingerprint names the latter
        self._materialised: dict[Path, Path] = {}

    def load(self, config: RunConfig) -> LoadedData:
        """Read the question file tolerantly; raises :class:`UsageError` when it cannot
        be read, holds no readable question or none of ``--tasks``, or ``--images`` is
        not a folder. An ``export hf`` folder is read back first (its questions.jsonl;
        ``extra["questions"]`` is the file read). ``--limit`` is applied here, per
        question group (:func:`.run.select`)."""
        from heritage_eval.benchmarks.muse.question_index import index_questions
        from heritage_eval.benchmarks.muse.questions import QuestionFileError

        opts = options_of(config)
        require_extra("muse", EXTRAS["muse"], "run muse")  # before anything is read
        try:
            given = materialise(opts.questions, "muse")
        except DataFormatError as exc:
            raise UsageError(str(exc)) from exc
        self._materialised[opts.questions] = given
        if given.is_dir():
            found = sorted(p.name for p in given.glob("*.jsonl"))[:5]
            raise UsageError(f"--questions {given} is a folder; pass the question file "
                             "written by 'heritage-eval muse generate'"
                             + (f" (there: {', '.join(found)})" if found else ""))
        if not given.exists():
            raise UsageError(f"--questions {given}: no such file (write one with "
                             "'heritage-eval muse generate')")
        if (kind := regular_file_problem(given)) is not None:  # a FIFO, socket, device
            raise UsageError(f"--questions {given}: {kind}")
        tasks = opts.task_list()
        try:
            index = index_questions(given, opts.images, tasks, config.output.limit)
        except (OSError, UnicodeDecodeError, QuestionFileError) as exc:
            raise UsageError(f"cannot read question file: {exc}"
                             f"{labelstudio_hint(given)}") from exc
        qs = index.qs
        problem = input_problem(index, tasks)
        if opts.images is not None and not opts.images.is_dir():
            problem = f"--images {opts.images}: not a folder"
        if problem:
            raise UsageError(problem)
        self._out = config.output.out
        bad = [(row, line) for row, line in zip(qs.bad, qs.bad_lines, strict=True)
               if not tasks or row.task not in TASK_IDS or row.task in tasks]
        return LoadedData(
            samples=index.samples, image_root=str(qs.base_dir),
            info={"question_file": str(given), "n_questions": len(index.samples),
                  "bad_lines": len(qs.bad)},
            extra={"qs": qs, "bad": bad, "chance": index.chance, "index": index,
                   "sha256": _sha256(given), "questions": given})

    def fingerprint(self, config: RunConfig) -> dict[str, Any]:
        """Every result-changing option plus the question file's SHA-256 (a regenerated
        file in the same place is another configuration). ``questions`` is the file read
        (an ``export hf`` folder's questions.jsonl once :meth:`load` has read it back)."""
        given = options_of(config).questions
        path = self._materialised.get(given, given)
        found = config_of({**config.flat(), "questions": path})
        found["question_file_sha256"] = (_sha256(path) if regular_file_problem(path) is None
                                         else None)
        return found

    def refuse_model(self, backend: ModelBackend, data: LoadedData,
                     config: RunConfig) -> str | None:
        from heritage_eval.benchmarks.muse.run import supported_tasks

        index: QuestionIndex = data.extra["index"]
        return refusal_of_tasks(backend.spec, supported_tasks(backend),
                                index.selected_tasks(options_of(config).task_list()),
                                backend.reads_prompt)

    def prepare(self, ctx: RunContext, data: LoadedData) -> None:
        """Plan the turns from the facts kept at load time (``QuestionIndex.turn_plan``:
        :func:`.run.plan_turns`'s plan) and make the embedder when an open-answer turn
        will be scored; :class:`UsageError` when it cannot be made."""
        from heritage_eval.benchmarks.muse.run import supported_tasks

        opts, index = options_of(ctx.config), data.extra["index"]
        tasks = opts.task_list()
        attempted = supported_tasks(ctx.backend)
        ctx.resources["attempted"] = attempted
        ctx.resources["turn_plan"] = index.turn_plan(attempted, tasks)
        embedder: Embedder | None = None
        if index.needs_embedder(attempted, tasks):
            try:
                embedder = create_embedder(opts.embedder, opts.embedder_base_url,
                                           opts.embedder_api_key_env)
            except (ValueError, ImportError) as exc:
                raise UsageError(str(exc)) from exc
            from heritage_eval.core.embedding_store import store_for
            from heritage_eval.metrics.embedding_cache import CachedEmbedder

            # each text embedded once, its vector kept in the run's cache database
            # (ctx.cache is opened after prepare: looked up at each call; None: --no-cache)
            embedder = CachedEmbedder(embedder, lambda: store_for(ctx.cache))
        ctx.resources["embedder"] = embedder

    def plan(self, sample: Any, ctx: RunContext, data: LoadedData) -> Conversation | None:
        from heritage_eval.benchmarks.muse.run import planned_conversation

        plan: TurnPlan = ctx.resources["turn_plan"]
        return planned_conversation(sample, data.extra["qs"], plan, data.extra["chance"])

    def score(self, data: LoadedData, results: Mapping[str, ItemResult],
              ctx: RunContext) -> list[SampleRecord]:
        """Turn records in file order (question, then turn), then one error record per
        unreadable line; open answers embedded and chance floors measured here, over the
        whole list (the streamed form is :meth:`iter_score`)."""
        from heritage_eval.benchmarks.muse.records import bad_line_record, question_records
        from heritage_eval.benchmarks.muse.run import score_rows
        from heritage_eval.benchmarks.outcomes import (
            apply_policy,
            mark_records,
            pad_after_failure,
            refusals_policy,
        )

        qs: QuestionSet = data.extra["qs"]
        questions: list[Question] = list(data.samples)
        policy = refusals_policy(ctx.config)
        plan_keep = ctx.resources["turn_plan"].keep
        # a dialogue cut short by the model's own failure: its unsent turns are that
        # failure too (wrong answers under the default rule), not errors
        results = pad_after_failure(apply_policy(results, policy), {
            q.id: max(plan_keep[q.id]) + 1 for q in questions if plan_keep.get(q.id)})
        out = score_rows(questions, ctx.resources["turn_plan"], results,
                         ctx.resources.get("embedder"))
        ctx.resources["open_scoring"] = out.open
        ctx.resources["n_turns"] = len(out.rows)
        by_id = {q.id: q for q in questions}
        model = ctx.backend.spec
        records = []
        for qid, rows in groupby(out.rows, key=lambda r: r.question_id):
            res = results.get(qid)
            records += question_records(by_id[qid], list(rows), qs, model,
                                        res.responses if res is not None else [],
                                        out.open.floors)
        records += [bad_line_record(row, line, qs, model) for row, line in data.extra["bad"]]
        mark_records(records, policy)
        return records

    def iter_score(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> Iterator[SampleRecord]:
        """:meth:`score`'s records, one question at a time (:class:`.streamed_scoring.
        TurnStream`): ``results`` read once per question in file order, open answers
        embedded in batches as they come, records from the first open turn on kept in a
        temporary file in the run folder until the chance floors are known."""
        from heritage_eval.benchmarks.muse.streamed_scoring import TurnStream
        from heritage_eval.benchmarks.outcomes import refusals_policy

        out = ctx.config.output.out
        stream = TurnStream(data.samples, ctx.resources["turn_plan"], data.extra["qs"],
                            ctx.backend.spec, ctx.resources.get("embedder"),
                            refusals_policy(ctx.config), data.extra["bad"],
                            spill_dir=Path(out) if out is not None and Path(out).is_dir()
                            else None)
        yield from stream.records(results)
        ctx.resources["open_scoring"] = stream.open
        ctx.resources["n_turns"] = stream.n_turns

    def record_sink(self, data: LoadedData, ctx: RunContext) -> MuseSink:
        """Streams (memory flat in the number of questions): :class:`.summary_sink.
        MuseSink`."""
        from heritage_eval.benchmarks.muse.summary_sink import MuseSink
        from heritage_eval.benchmarks.outcomes import refusals_policy

        embedder = ctx.resources.get("embedder")
        return MuseSink(embedder.id if embedder else None, refusals_policy(ctx.config))

    def aggregate(self, records: Sequence[SampleRecord], data: LoadedData,
                  ctx: RunContext) -> dict[str, Any]:
        """``{"benchmark": "muse", "results": [one block per model]}``, each block
        :func:`.analysis.summary.summarize` of the model's records."""
        from heritage_eval.benchmarks.muse.analysis.summary import summarize
        from heritage_eval.benchmarks.muse.records import turn_rows
        from heritage_eval.benchmarks.outcomes import outcomes_body, refusals_policy

        embedder = ctx.resources.get("embedder")
        by_model: dict[str, list[SampleRecord]] = defaultdict(list)
        for r in records:
            by_model[r.model].append(r)
        results = []
        for model, recs in by_model.items():
            rows, bad, floors = turn_rows(recs)
            results.append(summarize(model, rows, {"embedder": embedder.id if embedder
                                                   else None}, floors, bad))
        return {"benchmark": "muse", "results": results,
                **outcomes_body(records, "task", refusals_policy(ctx.config))}

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        from heritage_eval.core.types import stable_hash

        qs: QuestionSet = data.extra["qs"]
        opts = options_of(ctx.config)
        header = qs.header.model_dump(mode="json")
        embedder = ctx.resources.get("embedder")
        attempted = ctx.resources.get("attempted")
        plan: TurnPlan = ctx.resources["turn_plan"]
        return {
            "embedder": embedder.id if embedder else None,
            "question_file": str(data.extra["questions"]),
            "question_file_sha256": data.extra["sha256"],
            "question_file_header": header, "schema_version": qs.header.schema_version,
            "generator_version": qs.header.generator_version,
            "generator_seed": qs.header.seed, "task_spec_hash": stable_hash(header),
            "prompt_hash": data.extra["index"].prompt_hash,
            "tasks": opts.task_list(), "n_questions": len(data.samples),
            "images_dir": str(opts.images.resolve()) if opts.images else None,
            "supported_tasks": sorted(attempted) if attempted is not None else None,
            "skipped_tasks": plan.skipped, "n_turns": ctx.resources.get("n_turns"),
            "bad_lines": len(qs.bad)}

    def render_markdown(self, summary: Mapping[str, Any]) -> str:
        from heritage_eval.benchmarks.muse.report import intervals_section, render_run
        from heritage_eval.benchmarks.outcomes import outcomes_markdown

        prov = summary.get("provenance", {})
        parts = [render_run(res, prov) for res in summary.get("results", [])]
        return "\n".join(parts) + intervals_section(summary) + outcomes_markdown(summary)

    def print_result(self, summary: Mapping[str, Any]) -> None:
        from heritage_eval.benchmarks.muse.console import print_run

        print_run(summary, self._out)

    def nothing_answered_message(self, records: Sequence[SampleRecord]) -> str | None:
        """The old ``run muse`` wording: counts turns (unreadable lines apart)."""
        turns = sum(1 for r in records if not r.details.get("unreadable_line"))
        return (f"nothing was answered: every one of the {turns} turn(s) ended as error or "
                "unscored (see the warnings above and summary.md)")
