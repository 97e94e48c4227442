"""HCSU rows as platform sample records (:class:`~heritage_eval.core.record.SampleRecord`).

The task modules score into plain rows (:mod:`.scoring`, :mod:`.description_scoring`);
this module turns each row, with its planned question and the responses received, into
the one self-contained envelope (schema ``heritage-eval/sample/1``) that ``run
hcsu-discrimination``, ``run hcsu-description`` and every ``hcsu`` study write.

Both tasks:

- ``id``: the sample id (``"Tie/王羲之-行书/不_1"``); a study that runs the same target
  several times appends ``#<tag>=<value>`` (``"…/不_1#k=4"``).
- ``groups``: ``domain`` (``"Bei"`` / ``"Tie"``, the keys of ``per_domain``), ``class``
  (the class key ``"Tie/王羲之-行书"``: one calligrapher + script within one domain),
  ``calligrapher``, ``script``, plus a study's tags (``k``, ``shots``, ``descriptions``,
  ``condition``, ``task``).
- ``system`` and one turn: the full prompt text (text parts joined by newlines, in the
  order sent), every image as an :class:`~heritage_eval.core.record.ImageRef` with its
  role, path relative to ``image_root`` (the data folder), original and sent size, and
  the response (text, finish reason, tokens, latency, cached).
- ``source``: ``"<annotation file>:<record index, 0-based>"``.

Discrimination (roles ``target``, ``candidate A`` …): ``scores = {"accuracy": 1.0 | 0.0}``
(unparsed: 0.0; error: ``None``); ``answer``: the chosen label (``None`` unparsed);
``reference``: the correct label; ``details``: ``k``, ``distractor_pool``,
``descriptions`` (mode), ``candidates`` (label, class, reference image, description
shown, class it was written for), ``correct_class``, ``predicted_class``, ``correct``,
``parse_method`` / ``parse_reason``, ``parse_flags`` (what the answer parser flagged,
``docs/answer-extraction.md``; absent when nothing), ``notes``, ``char``, ``target_image``.

Description (roles ``shot 1`` …, ``target``): ``scores`` ``bertscore_x10`` (BERTScore-F1
x 10, 0–10, the paper's scale), ``terminology`` and ``richness`` (judge, 0–10); ``None``
where the metric did not score the answer. An empty answer is ``unparsed`` and scores 0
on a metric only where that metric scored some answer of the same domain (else
``None``), exactly as the per-domain means count it. A non-empty answer that none of the
requested metrics could score is ``unscored`` (``error`` gives the reasons); with no
metric requested it is ``scored`` with empty scores. ``reference``: the expert
description; ``details``: ``shots`` (class, image, character, description), ``words``,
``over_word_limit``, the metric statuses and reasons, ``judge_raw`` (the judge's reply),
the expert reference's judged scores, ``metric_flags`` (e.g. ``["bertscore_truncated"]``)
when a metric had to truncate or could not score a text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from heritage_eval.benchmarks.hcsu.description import PlannedRequest
from heritage_eval.benchmarks.hcsu.discrimination import PlannedItem
from heritage_eval.benchmarks.hcsu.judging import RICHNESS, TERMINOLOGY
from heritage_eval.benchmarks.hcsu.pipeline import TaskRun
from heritage_eval.benchmarks.hcsu.prompts import template
from heritage_eval.benchmarks.hcsu.records import Record
from heritage_eval.benchmarks.hcsu.schema import HcsuImage
from heritage_eval.benchmarks.hcsu.task_defaults import DESCRIPTION as DESCRIPTION
from heritage_eval.benchmarks.hcsu.task_defaults import DISCRIMINATION as DISCRIMINATION
from heritage_eval.core.record import (
    ResponseRecord,
    SampleRecord,
    TurnRecord,
    image_ref,
)
from heritage_eval.core.record import relative_image_path as _rel
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Conversation, Outcome

#: score keys of the description task and the row status that says a metric scored
DESCRIPTION_SCORES = {"bertscore_x10": "bertscore_status", TERMINOLOGY: "judge_status",
                      RICHNESS: "judge_status"}
_SCHEMA: Literal["heritage-eval/sample/1"] = "heritage-eval/sample/1"
_SOURCE = re.compile(r"^(.*) record (\d+)$")


def source_of(target: HcsuImage) -> str:
    """``"<annotation file>:<record index>"`` of a target (``"tie_annotations.json:5"``)."""
    m = _SOURCE.match(target.source)
    return f"{m[1]}:{m[2]}" if m else target.source


def base_groups(target: HcsuImage, tags: Mapping[str, Any]) -> dict[str, str]:
    """The group keys of a target's record, study tags first (values as strings)."""
    return {**{k: str(v) for k, v in tags.items()}, "domain": target.domain,
            "class": target.class_key, "calligrapher": target.calligrapher,
            "script": target.script_type}


def _last(result: ItemResult | None) -> Any:
    return result.responses[-1] if result is not None and result.responses else None


def turn_record(conv: Conversation | None, result: ItemResult | None, roles: Sequence[str],
                root: Path) -> list[TurnRecord]:
    """The one turn of an HCSU conversation (empty when nothing could be planned):
    full prompt text, images with ``roles`` in the order sent, the response."""
    if conv is None:
        return []
    msg = conv.turns[0]
    resp = _last(result)
    sizes = resp.meta.get("sent_image_sizes") if resp is not None else None
    images = msg.images()
    if not isinstance(sizes, list) or len(sizes) != len(images):
        sizes = [None] * len(images)
    refs = [image_ref(part.path, root, role=role, sent=size)
            for part, role, size in zip(images, roles, sizes, strict=False)]
    return [TurnRecord(prompt=msg.text(), images=refs,
                       response=ResponseRecord.from_response(resp))]


#: the tag names appended to a study record's id (one name or several)
IdTag = str | Sequence[str] | None


def id_suffix(tags: Mapping[str, Any], id_tag: IdTag) -> str:
    """What a study record adds to its target's id: ``#<name>=<value>`` for each tag named
    by ``id_tag`` (one name or several, joined by ``,``); ``""`` for none."""
    names = [id_tag] if isinstance(id_tag, str) else list(id_tag or ())
    return ("#" + ",".join(f"{n}={tags[n]}" for n in names)) if names else ""


def _error(row: Record) -> str | None:
    return str(row.get("reason")) if row["outcome"] == Outcome.ERROR.value else None


def discrimination_record(item: PlannedItem, row: Record, result: ItemResult | None,
                          model: str, root: Path, tags: Mapping[str, Any] | None = None,
                          id_tag: IdTag = None,
                          settings: Mapping[str, Any] | None = None) -> SampleRecord:
    """The envelope of one discrimination row (see the module docstring).

    ``tags``: study tags added to ``groups``; ``id_tag``: the tag appended to the id;
    ``settings``: the run's ``distractor_pool`` and ``descriptions`` (mode)."""
    tags = tags or {}
    q = item.question
    state = Outcome(row["outcome"])
    answered = state in (Outcome.SCORED, Outcome.UNPARSED)
    details: dict[str, Any] = {"char": row["char"]}
    roles: list[str] = []
    if q is not None:
        roles = ["target", *(f"candidate {c.label}" for c in q.candidates)]
        details |= {
            "target_image": _rel(q.target_image, root), "k": len(q.candidates),
            "distractor_pool": (settings or {}).get("distractor_pool"),
            "descriptions": (settings or {}).get("descriptions"),
            "candidates": [{"label": c.label, "class": c.class_key,
                            "image": _rel(c.image, root), "description": c.description,
                            "description_from": c.description_from} for c in q.candidates],
            "correct_class": q.class_key, "predicted_class": row.get("predicted_class"),
            "correct": row.get("correct"), "parse_method": row.get("parse_method"),
            "notes": list(q.notes)}
        if state is Outcome.UNPARSED:
            details["parse_reason"] = row.get("reason")
        if row.get("parse_flags"):
            details["parse_flags"] = row["parse_flags"]
    return SampleRecord(
        schema=_SCHEMA, id=item.target.id + id_suffix(tags, id_tag), benchmark=DISCRIMINATION,
        model=model, groups=base_groups(item.target, tags), state=state,
        scores={"accuracy": (1.0 if row.get("correct") else 0.0) if answered else None},
        system=template("system"), turns=turn_record(q.conversation() if q else None, result, roles,
                                         root),
        image_root=str(root.resolve()), answer=row.get("predicted"),
        reference=q.answer if q else None, error=_error(row),
        source=source_of(item.target), details=details)


def zero_domains(rows: Sequence[Record]) -> dict[str, set[str]]:
    """Score key -> domains where that metric scored at least one answer (there an empty
    answer counts 0; elsewhere it has no value), see :mod:`.description_scoring`."""
    return {key: {r["domain"] for r in rows if r.get(status) == Outcome.SCORED.value}
            for key, status in DESCRIPTION_SCORES.items()}


def _description_scores(row: Record, zeros: Mapping[str, set[str]]) -> dict[str, float | None]:
    if row["outcome"] == Outcome.UNPARSED.value:
        return {k: 0.0 if row["domain"] in zeros[k] else None for k in DESCRIPTION_SCORES}
    if row["outcome"] != Outcome.SCORED.value:
        return dict.fromkeys(DESCRIPTION_SCORES)
    return {k: (float(row[k]) if row.get(status) == Outcome.SCORED.value
                and row.get(k) is not None else None)
            for k, status in DESCRIPTION_SCORES.items()}


def description_state(row: Record, bertscore: bool, judged: bool) -> tuple[Outcome, str | None]:
    """The record state and error of a description row: a non-empty answer that no
    requested metric scored is ``unscored`` (reasons joined); else the row's outcome."""
    state = Outcome(row["outcome"])
    if state is not Outcome.SCORED or not (bertscore or judged):
        return state, _error(row)
    ok = (bertscore and row.get("bertscore_status") == Outcome.SCORED.value) or (
        judged and row.get("judge_status") == Outcome.SCORED.value)
    if ok:
        return state, None
    reasons = [str(row[k]) for k in ("bertscore_reason", "judge_reason") if row.get(k)]
    return Outcome.UNSCORED, "; ".join(reasons) or "no metric scored this description"


_DESCRIPTION_DETAILS = ("words", "over_word_limit", "bertscore_status", "bertscore_reason",
                        "judge_status", "judge_reason", "judge_raw", "expert_terminology",
                        "expert_richness", "metric_flags")


def description_record(item: PlannedRequest, row: Record, result: ItemResult | None,
                       model: str, root: Path, zeros: Mapping[str, set[str]], *,
                       bertscore: bool, judged: bool, tags: Mapping[str, Any] | None = None,
                       id_tag: IdTag = None) -> SampleRecord:
    """The envelope of one description row (see the module docstring). ``zeros``: from
    :func:`zero_domains` over the run's rows; ``bertscore`` / ``judged``: whether those
    metrics were requested (a scorer was loaded / a judge named)."""
    tags = tags or {}
    req = item.request
    state, error = description_state(row, bertscore, judged)
    details: dict[str, Any] = {"char": row["char"],
                               **{k: row[k] for k in _DESCRIPTION_DETAILS if k in row}}
    roles: list[str] = []
    if req is not None:
        roles = [*(f"shot {i}" for i in range(1, len(req.shots) + 1)), "target"]
        details |= {"target_image": _rel(req.target_image, root),
                    "shots": [{"class": s.class_key, "image": _rel(s.image, root),
                               "char": s.char, "description": s.description}
                              for s in req.shots],
                    "n_shots": len(req.shots), "max_words": req.max_words}
    return SampleRecord(
        schema=_SCHEMA, id=item.target.id + id_suffix(tags, id_tag), benchmark=DESCRIPTION,
        model=model, groups=base_groups(item.target, tags), state=state,
        scores=_description_scores(row, zeros), system=template("system"),
        turns=turn_record(req.conversation() if req else None, result, roles, root),
        image_root=str(root.resolve()), answer=row.get("answer") or None,
        reference=req.reference if req else None, error=error,
        source=source_of(item.target), details=details)


def run_records(run: TaskRun, task: str, model: str, root: Path, *,
                tags: Mapping[str, Any] | None = None, id_tag: IdTag = None,
                bertscore: bool = False, judged: bool = False) -> list[SampleRecord]:
    """Envelopes of every row of a task run (``task``: :data:`DISCRIMINATION` or
    :data:`DESCRIPTION`), in report order."""
    if len(run.plan) != len(run.records):
        raise ValueError("task run without its plan: cannot build sample records")
    if task == DISCRIMINATION:
        return [discrimination_record(item, row, run.results.get(item.id), model, root,
                                      tags, id_tag, run.extra)
                for item, row in zip(run.plan, run.records, strict=True)]
    zeros = zero_domains(run.records)
    return [description_record(item, row, run.results.get(item.id), model, root, zeros,
                               bertscore=bertscore, judged=judged, tags=tags, id_tag=id_tag)
            for item, row in zip(run.plan, run.records, strict=True)]
