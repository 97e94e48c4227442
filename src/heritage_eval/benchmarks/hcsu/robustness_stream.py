"""The robustness study (Table 4) planned up front and streamed at flat memory.

``hcsu robustness`` runs both tasks on every image condition (Wild (Raw), Wild-Resize,
Origin; :func:`~.studies.prepare_conditions`) over the classes all conditions share
(:func:`~.studies.common_classes`). Here it runs in two steps, so that the run folder's
no-shrink check sees every id before any request is sent:

1. :func:`plan_robustness`: every condition's data loaded and restricted, and both
   tasks planned for each (:class:`~.lazy_plan.LazyPlan`: the targets kept, each
   question or request built when read). A setting the data cannot meet (K too large,
   the anti-leakage rule) raises :class:`~.sampling.HcsuConfigError` here, before any
   model call. :func:`robustness_ids` gives the record ids the study will write.
2. :func:`stream_robustness`: every condition's tasks streamed, in the listed order
   (condition by condition, discrimination then description), into one
   :class:`~.study_stream.StudyStream`; the Table 4 rows are built from the
   conditions' sinks.

The records, their ids (``<target id>#condition=<name>,task=<task>``), the rows and the
envelope equal those of the listed path, :func:`~.studies.robustness` followed by
:func:`~.study_folder.listed_records` (tests/hcsu/test_robustness_streaming.py); the
description task's BERTScore is computed a window at a time as in every streamed
description run (:mod:`.description_stream`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.description import DescriptionConfig, PlannedRequest
from heritage_eval.benchmarks.hcsu.description_stream import DescriptionScoring
from heritage_eval.benchmarks.hcsu.discrimination import DiscriminationConfig, PlannedItem
from heritage_eval.benchmarks.hcsu.lazy_plan import LazyPlan
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.pipeline import (
    Engine,
    class_references,
    lazy_description_plan,
    lazy_discrimination_plan,
)
from heritage_eval.benchmarks.hcsu.sample_records import id_suffix
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.benchmarks.hcsu.studies import common_classes
from heritage_eval.benchmarks.hcsu.study_stream import (
    StudyStream,
    description_stream,
    discrimination_stream,
)
from heritage_eval.benchmarks.hcsu.summary_sink import DescriptionSink, DiscriminationSink
from heritage_eval.benchmarks.outcomes import DEFAULT_POLICY
from heritage_eval.metrics.bertscore import BertScorer

#: the tags that tell a robustness record apart (in ``groups`` and, in order, in the id)
ID_TAGS = ("condition", "task")
#: the task names as ``--tasks``, the ``engines`` keys and the records' ``task`` tag
#: spell them
DISCRIMINATION_KEY = "discrimination"
DESCRIPTION_KEY = "description"


@dataclass
class ConditionPlan:
    """One condition of the study: its ``name`` (``"Wild (Raw)"`` …), its data folder
    ``data``, its ``dataset`` (restricted to the classes every condition shares) and the
    planned ``discrimination`` questions / ``description`` requests (``None``: that
    task is not run)."""

    name: str
    data: Path
    dataset: HcsuDataset
    discrimination: LazyPlan[PlannedItem] | None
    description: LazyPlan[PlannedRequest] | None


def plan_robustness(folders: Mapping[str, Path], disc: DiscriminationConfig | None,
                    desc: DescriptionConfig | None, limit: int | None = None,
                    password: str | None = None) -> list[ConditionPlan]:
    """Load every condition's data (``folders``: condition name -> data folder, in
    table order; ``password``: the zip password, never stored), keep the classes they
    all share, and plan each task whose config is given (``None``: not run) for every
    condition, ``limit`` targets per domain at most (``None``: all). No model call.

    Raises :class:`~.sampling.HcsuConfigError` when the conditions share no class or a
    task's setting cannot be met by a condition's data (the first such, in table order,
    discrimination before description); the loader's errors propagate.
    """
    names = list(folders)
    datasets = common_classes([load_hcsu(folders[n], password=password) for n in names])
    return [ConditionPlan(name, folders[name], ds,
                          None if disc is None else lazy_discrimination_plan(ds, disc, limit),
                          None if desc is None else lazy_description_plan(ds, desc, limit))
            for name, ds in zip(names, datasets, strict=True)]


def _tags(name: str, task: str) -> dict[str, str]:
    return {"condition": name, "task": task}


def robustness_ids(plans: list[ConditionPlan]) -> set[str]:
    """The ids of every record the study writes for ``plans``: one per planned target
    and task, ``<target id>#condition=<name>,task=<task>`` (as
    :mod:`.sample_records` tags them with :data:`ID_TAGS`)."""
    out: set[str] = set()
    for p in plans:
        for task, plan in ((DISCRIMINATION_KEY, p.discrimination),
                           (DESCRIPTION_KEY, p.description)):
            if plan is not None:
                suffix = id_suffix(_tags(p.name, task), ID_TAGS)
                out.update(t.id + suffix for t in plan.targets)
    return out


def stream_robustness(stream: StudyStream, plans: list[ConditionPlan],
                      disc: DiscriminationConfig | None, desc: DescriptionConfig | None,
                      engines: Mapping[str, Engine], scorer: BertScorer | None,
                      scorer_error: str | None, judge: Engine | None
                      ) -> list[dict[str, Any]]:
    """Run, score and stream every planned condition into ``stream``, in table order,
    each condition's discrimination before its description; returns the Table 4 rows
    (the ``results`` of ``summary.json``).

    ``engines``: ``"discrimination"`` / ``"description"`` -> engine (a task whose engine
    or plan is missing is not run); ``scorer``: BERTScore (``None``: ``scorer_error``
    says why); ``judge``: the judge engine (``None``: no judge). A row holds
    ``condition``, ``data`` (the folder), and per task run its per-domain summary
    (``discrimination`` / ``description``) and the model spec
    (``discrimination_model`` / ``description_model``). Each record is tagged with
    ``condition`` and ``task`` (:data:`ID_TAGS`); every condition's results come from
    the ``run`` path's sinks, under the studies' ``wrong`` model-failure rule.
    """
    rows: list[dict[str, Any]] = []
    for p in plans:
        ds = p.dataset
        row: dict[str, Any] = {"condition": p.name, "data": str(p.data)}
        if disc is not None and p.discrimination is not None and DISCRIMINATION_KEY in engines:
            eng = engines[DISCRIMINATION_KEY]
            tags = _tags(p.name, DISCRIMINATION_KEY)
            cond = stream.condition(tags, DiscriminationSink(
                eng.backend.spec, ds.problems, DEFAULT_POLICY, disc))
            stream.add(cond, discrimination_stream(disc, p.discrimination, eng, ds.root,
                                                   tags, ID_TAGS,
                                                   f"{p.name} discrimination"))
            row["discrimination"] = cond.entry()["per_domain"]
            row["discrimination_model"] = eng.backend.spec
        if desc is not None and p.description is not None and DESCRIPTION_KEY in engines:
            eng = engines[DESCRIPTION_KEY]
            tags = _tags(p.name, DESCRIPTION_KEY)
            cond = stream.condition(tags, DescriptionSink(
                eng.backend.spec, ds.problems, DEFAULT_POLICY, desc, scorer, scorer_error,
                class_references(ds), judge.backend.spec if judge else None))
            scoring = DescriptionScoring(ds, scorer, scorer_error, judge)
            stream.add(cond, description_stream(p.description, eng, scoring, ds.root, tags,
                                                ID_TAGS, f"{p.name} description"))
            row["description"] = cond.entry()["per_domain"]
            row["description_model"] = eng.backend.spec
        rows.append(row)
    return rows

