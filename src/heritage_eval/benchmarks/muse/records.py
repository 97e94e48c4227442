"""MUSE turn rows as platform sample records (``heritage-eval/sample/1``), and back.

One :class:`~heritage_eval.core.record.SampleRecord` per scored turn, id
``<question id>#<turn index>``:

- ``groups``: ``task``, ``capability``, ``level``, ``granularity`` (from
  :mod:`.taxonomy`; absent for a task id it does not know) and ``image`` (the artwork id,
  the cluster of the intervals).
- ``scores``: ``score`` (the paper's per-task score: accuracy or cosine) and
  ``accuracy`` (choice / count / position turns: 1 or 0, an unparsed answer 0) or
  ``cosine`` (open answers: embedding cosine clipped to [0, 1]); position turns also
  ``lateral`` / ``depth`` / ``vertical`` (1 or 0). ``None`` for ``error`` / ``unscored``.
- ``turns``: every turn of the dialogue up to the scored one (full prompt, images relative
  to ``image_root``: the source-images folder when the record shows only source artworks,
  else the question file's folder, where the generated assets lie; the model's
  responses; :func:`record_root`); ``scored`` only
  on the scored turn. ``answer``: the parsed answer; ``reference``: the key (option label,
  count, position dict, reference text).
- ``details``: ``question_id``, ``turn``, ``answer_format``, ``tag``, ``options`` (label,
  text, normalized COCO box ``[x, y, w, h]``, piece image, ``distractor_type``),
  ``chosen`` / ``correct`` (labels) and ``chosen_distractor`` (choice turns), ``dims``
  (position), ``parse_method``, ``parse_reason`` (unparsed), ``parse_flags`` (what the
  answer parser flagged, ``docs/answer-extraction.md``; absent when nothing), ``params``
  (the generator knobs of the turn), ``metadata`` (the question's: boxes, entities),
  ``image_refs`` (the turn's image references as written in the question file) and, for
  open-answer tasks,
  ``chance_floor`` (``{"floor", "pairs", "note"}`` of the task, measured in the run),
  and ``metric_flags`` when the cosine had to be adjusted or could not be computed.

An unreadable question-file line is an ``error`` record with id ``<file>:<line>``, no
groups (it belongs to no task) and ``details.unreadable_line`` true.

:func:`turn_rows` turns records back into the rows :func:`.analysis.summary.summarize`
aggregates, so ``summary.json`` is computed from ``samples.jsonl`` alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import takewhile
from pathlib import Path
from typing import Any, Literal

from heritage_eval.benchmarks.muse.generators.dialogue_fill import filled_question
from heritage_eval.benchmarks.muse.questions import IMAGES_PREFIX, Question, QuestionTurn
from heritage_eval.benchmarks.muse.run import QuestionSet, image_path
from heritage_eval.benchmarks.muse.scoring import TurnResult
from heritage_eval.benchmarks.muse.taxonomy import TASKS
from heritage_eval.core.record import (
    ImageRef,
    ResponseRecord,
    SampleRecord,
    TurnRecord,
    image_size,
    relative_image_path,
)
from heritage_eval.core.types import Outcome, Response

BENCHMARK = "muse"
#: ``core.record.SAMPLE_SCHEMA`` as a literal type (the field is a ``Literal``; mypy)
SCHEMA: Literal["heritage-eval/sample/1"] = "heritage-eval/sample/1"
POSITION_DIMS = ("lateral", "depth", "vertical")


@lru_cache(maxsize=4096)
def _size(path: str) -> tuple[int, int] | None:
    return image_size(path)


def task_groups(task: str, image_id: str) -> dict[str, str]:
    """The record groups of a turn of ``task`` on artwork ``image_id``."""
    info = TASKS.get(task)
    groups = {"task": task}
    if info is not None:
        groups |= {"capability": info.capability, "level": info.level,
                   "granularity": info.granularity}
    return groups | {"image": image_id}


def _role(turn: QuestionTurn, rel: str, qs: QuestionSet) -> str:
    """``option X`` (a piece shown as option X), ``generated`` (another image of the
    assets folder: the jigsaw puzzle, a copy with boxes drawn) or ``artwork``."""
    for o in turn.options:
        if o.image == rel:
            return f"option {o.label}"
    if rel.startswith(IMAGES_PREFIX):
        return "artwork"
    return "generated" if rel.startswith(f"{qs.path.stem}_assets/") else "artwork"


def _artwork_root(qs: QuestionSet, rel: str) -> Path:
    """The source-images folder an ``@images/…`` reference resolves under."""
    tail = Path(rel[len(IMAGES_PREFIX):])
    path = image_path(qs, rel).resolve()
    depth = len(tail.parts) - 1
    if not tail.parts or ".." in tail.parts or depth >= len(path.parents):
        # a reference climbing out (refused when the question is planned): no folder of
        # its own; the images folder the header or --images names is used instead
        return image_path(qs, IMAGES_PREFIX + ".").resolve()
    return path.parents[depth]


def record_root(q: Question, index: int, qs: QuestionSet) -> Path:
    """The folder the record's image paths are relative to: the source-images folder
    when every image of turns ``0..index`` is a source artwork (``@images/…``), else
    the question file's folder (generated assets; schema-1 files)."""
    refs = [rel for t in q.turns[:index + 1] for rel in t.images]
    if refs and all(rel.startswith(IMAGES_PREFIX) for rel in refs):
        roots = {_artwork_root(qs, rel) for rel in refs}
        if len(roots) == 1:
            return roots.pop()
    return qs.base_dir


def _turn_images(turn: QuestionTurn, qs: QuestionSet, sent: list[list[int]] | None,
                 root: Path) -> list[ImageRef]:
    out = []
    for k, rel in enumerate(turn.images):
        path = image_path(qs, rel)
        size = _size(str(path))
        wh = sent[k] if sent is not None else None
        out.append(ImageRef(path=relative_image_path(path, root),
                            width=size[0] if size else None,
                            height=size[1] if size else None,
                            sent_width=int(wh[0]) if wh else None,
                            sent_height=int(wh[1]) if wh else None, role=_role(turn, rel, qs)))
    return out


def _sent_sizes(q: Question, j: int, resp: Response | None) -> list[list[int]] | None:
    """Sizes sent for turn ``j``'s own images: the last ones of the request's
    ``sent_image_sizes`` (which lists every image of the history), when they add up."""
    sizes = resp.meta.get("sent_image_sizes") if resp is not None else None
    if not isinstance(sizes, list):
        return None
    total = sum(len(t.images) for t in q.turns[:j + 1])
    own = len(q.turns[j].images)
    if len(sizes) != total or own == 0:
        return None
    return [list(s) for s in sizes[total - own:]]


def dialogue_turns(q: Question, index: int, qs: QuestionSet,
                   responses: Sequence[Response], root: Path) -> list[TurnRecord]:
    """Turns ``0..index`` of ``q`` with their prompts, images (paths relative to
    ``root``) and responses (those received); only turn ``index`` is marked ``scored``."""
    out = []
    for j, turn in enumerate(q.turns[:index + 1]):
        resp = responses[j] if j < len(responses) else None
        out.append(TurnRecord(prompt=turn.prompt,
                              images=_turn_images(turn, qs, _sent_sizes(q, j, resp), root),
                              response=ResponseRecord.from_response(resp),
                              scored=j == index))
    return out


def _scores(row: TurnResult) -> dict[str, float | None]:
    metric = "cosine" if row.answer_format == "open" else "accuracy"
    scores: dict[str, float | None] = {"score": row.score, metric: row.score}
    if row.dims is not None:
        scores |= {d: float(row.dims.get(d, False)) for d in POSITION_DIMS}
    return scores


def _details(row: TurnResult, q: Question, floor: dict[str, Any] | None) -> dict[str, Any]:
    turn = q.turns[row.turn]
    details: dict[str, Any] = {
        "question_id": q.id, "turn": row.turn, "answer_format": row.answer_format,
        "tag": turn.tag, "options": [o.model_dump(mode="json") for o in turn.options],
        "image_refs": list(turn.images), "params": turn.params, "metadata": q.metadata,
        "parse_method": row.parse_method,
    }
    if row.answer_format == "choice":
        details |= {"chosen": row.parsed, "correct": turn.answer,
                    "chosen_distractor": row.chosen_distractor}
    if row.dims is not None:
        details["dims"] = row.dims
    if row.state == Outcome.UNPARSED:
        details["parse_reason"] = row.reason
    if row.parse_flags:
        details["parse_flags"] = row.parse_flags
    if floor is not None:
        details["chance_floor"] = floor
    if row.metric_flags:
        details["metric_flags"] = row.metric_flags
    return details


def turn_record(row: TurnResult, q: Question, qs: QuestionSet, model: str,
                responses: Sequence[Response], floor: dict[str, Any] | None = None
                ) -> SampleRecord:
    """The record of ``row`` (turn ``row.turn`` of ``q``); ``responses``: those received
    for ``q`` (one per turn sent); ``floor``: the task's chance-floor entry
    (``OpenScoring.floors``) for open-answer turns."""
    failed = row.state in (Outcome.ERROR, Outcome.UNSCORED)
    root = record_root(q, row.turn, qs)
    return SampleRecord(
        schema=SCHEMA, id=f"{q.id}#{row.turn}", benchmark=BENCHMARK, model=model,
        groups=task_groups(row.task, q.image_id), state=row.state, scores=_scores(row),
        turns=dialogue_turns(q, row.turn, qs, responses, root), image_root=str(root),
        answer=row.parsed, reference=row.answer, error=row.reason if failed else None,
        source=f"{qs.path.name}:{qs.lines.get(q.id, '?')}",
        details=_details(row, q, floor))


def question_records(q: Question, rows: Sequence[TurnResult], qs: QuestionSet, model: str,
                     responses: Sequence[Response],
                     floors: Mapping[str, dict[str, Any]] | None = None
                     ) -> list[SampleRecord]:
    """The records of ``q``'s turn ``rows``: the prompts as sent (a dialogue's emotion
    slot filled from the model's own answers before the first failed response,
    :func:`~.generators.dialogue_fill.filled_question`); ``floors``: the chance-floor
    entries by task, given to open turns (``None``: none yet)."""
    answered = list(takewhile(lambda r: r.ok, responses))
    asked = filled_question(q, [r.text or "" for r in answered])
    floors = floors or {}
    return [turn_record(row, asked, qs, model, responses,
                        floors.get(row.task) if row.answer_format == "open" else None)
            for row in rows]


def bad_line_record(row: TurnResult, lineno: int, qs: QuestionSet, model: str
                    ) -> SampleRecord:
    """The ``error`` record of an unreadable question-file line (no groups: it is
    reported apart from the tasks)."""
    return SampleRecord(
        schema=SCHEMA, id=f"{qs.path.name}:{lineno}", benchmark=BENCHMARK, model=model,
        groups={},
        state=Outcome.ERROR, scores={}, image_root=str(qs.base_dir), error=row.reason,
        source=f"{qs.path.name}:{lineno}",
        details={"unreadable_line": True, "question_id": row.question_id,
                 "task_named": row.task})


def row_of(r: SampleRecord) -> TurnResult:
    """The turn row a turn record was made from (what the summary reads)."""
    d = r.details
    turn = r.scored_turn
    resp = turn.response if turn is not None else None
    return TurnResult(
        question_id=str(d.get("question_id", r.id)), image_id=r.groups.get("image", ""),
        task=r.groups.get("task", ""), turn=int(d.get("turn", 0)),
        answer_format=str(d.get("answer_format", "")), state=r.state, parsed=r.answer,
        parse_method=d.get("parse_method"), parse_flags=list(d.get("parse_flags") or []),
        answer=r.reference,
        chosen_distractor=d.get("chosen_distractor"), score=r.scores.get("score"),
        dims=d.get("dims"), raw_response=resp.text if resp is not None else None,
        reason=r.error if r.error is not None else d.get("parse_reason"),
        latency_s=resp.latency_s if resp is not None else None,
        cached=bool(resp.cached) if resp is not None else False,
        metric_flags=d.get("metric_flags"))


def bad_row_of(r: SampleRecord) -> TurnResult:
    """The error row of an unreadable-line record."""
    return TurnResult(question_id=str(r.details.get("question_id", r.id)), image_id="",
                      task=str(r.details.get("task_named", "")), turn=0, answer_format="",
                      state=Outcome.ERROR, reason=r.error)


_row, _bad_row = row_of, bad_row_of  # the names tests/metrics read


def turn_rows(records: Sequence[SampleRecord]
              ) -> tuple[list[TurnResult], list[TurnResult], dict[str, dict[str, Any]]]:
    """``(rows, bad_lines, floors)`` of one model's records, in record order: the turn
    rows, the unreadable-line rows, and per open-answer task its chance-floor entry."""
    rows, bad = [], []
    floors: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.details.get("unreadable_line"):
            bad.append(bad_row_of(r))
            continue
        rows.append(row_of(r))
        floor = r.details.get("chance_floor")
        if isinstance(floor, dict):
            floors.setdefault(r.groups.get("task", ""), floor)
    return rows, bad, floors

