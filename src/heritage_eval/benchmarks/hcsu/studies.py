"""Multi-run studies: K sweep, shot sweep, description ablation (Table 5), robustness
(Table 4): their plans (``plan_*``, before any model call) and their listed runs. Each
``run`` function returns its task runs (:class:`StudyRun`, every result and row kept),
tagged with what tells them apart; :mod:`.study_folder` turns them into ``results``
entries and sample records. The commands (:mod:`.cli_studies`) stream every study
instead (:mod:`.study_stream`, :mod:`.robustness_stream`: flat memory, the same
output); the listed runs stay as the streaming tests' reference. The figures are in
:mod:`.figures`."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree
from heritage_eval.benchmarks.hcsu.description import DescriptionConfig, PlannedRequest
from heritage_eval.benchmarks.hcsu.discrimination import (
    DescriptionMode,
    DiscriminationConfig,
    KTooLargeError,
    PlannedItem,
)
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.pipeline import (
    Engine,
    TaskRun,
    plan_description,
    plan_discrimination,
    result_entry,
    run_description,
    run_discrimination,
)
from heritage_eval.benchmarks.hcsu.sample_records import DESCRIPTION, DISCRIMINATION
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.benchmarks.hcsu.task_defaults import PAPER_KS as PAPER_KS
from heritage_eval.benchmarks.hcsu.task_defaults import PAPER_SHOTS as PAPER_SHOTS
from heritage_eval.metrics.bertscore import BertScorer

Entry = dict[str, Any]
CONDITIONS = ("Wild (Raw)", "Wild-Resize", "Origin")


@dataclass
class StudyRun:
    """One task run of a study: its ``tags`` (e.g. ``{"k": 4}``, added to the records'
    groups), the scored :class:`~.pipeline.TaskRun`, the ``task`` (benchmark name), the
    data folder ``root`` its images lie under and the ``model`` spec."""

    tags: dict[str, Any]
    run: TaskRun
    task: str
    root: Path
    model: str

    def entry(self) -> Entry:
        """The ``results`` entry of ``summary.json`` (as a one-run command writes it)."""
        return result_entry(self.model, self.run)


def plan_k_sweep(dataset: HcsuDataset, base: DiscriminationConfig, ks: Sequence[int],
                 limit: int | None = None
                 ) -> tuple[dict[int, list[PlannedItem]], list[Entry], str | None]:
    """Questions for every K in ``ks`` the data supports, before any model call.

    Returns ``(K -> plan, skipped, message)``: ``skipped`` lists each unsupported K with
    its reason; ``message`` is one line summing up every skipped K (``None`` when none),
    naming ``--ks``. Other configuration errors propagate.
    """
    plans: dict[int, list[PlannedItem]] = {}
    skipped: list[Entry] = []
    too_large: list[KTooLargeError] = []
    for k in ks:
        try:
            plans[k] = plan_discrimination(dataset, dataclasses.replace(base, k=k), limit)
        except KTooLargeError as exc:
            too_large.append(exc)
            skipped.append({"k": k, "reason": exc.reason})
    if not too_large:
        return plans, skipped, None
    first = too_large[0]
    message = (f"skipped K={', '.join(str(e.k) for e in too_large)}: {first.reason}; "
               f"{first.advice('--ks')}")
    return plans, skipped, message


def k_sweep(dataset: HcsuDataset, base: DiscriminationConfig,
            plans: dict[int, list[PlannedItem]], engine: Engine) -> list[StudyRun]:
    """Discrimination at every planned K (see :func:`plan_k_sweep`), one run per K."""
    return [StudyRun({"k": k}, run_discrimination(dataset, dataclasses.replace(base, k=k),
                                                  engine, desc=f"K={k}", plan=plan),
                     DISCRIMINATION, dataset.root, engine.backend.spec)
            for k, plan in plans.items()]


def plan_shot_sweep(dataset: HcsuDataset, base: DescriptionConfig, shots: Sequence[int],
                    limit: int | None = None
                    ) -> tuple[dict[int, list[PlannedRequest]], list[Entry]]:
    """Requests for every shot count the anti-leakage rule allows; the others are
    returned in ``skipped`` with the reason (printed once each)."""
    plans: dict[int, list[PlannedRequest]] = {}
    skipped: list[Entry] = []
    for n in shots:
        try:
            plans[n] = plan_description(dataset, dataclasses.replace(base, shots=n), limit)
        except HcsuConfigError as exc:
            skipped.append({"shots": n, "reason": str(exc)})
            print(f"skipped {n} shots: {exc}", file=sys.stderr)
    return plans, skipped


def shot_sweep(dataset: HcsuDataset, base: DescriptionConfig,
               plans: dict[int, list[PlannedRequest]], engine: Engine,
               scorer: BertScorer | None, scorer_error: str | None, judge: Engine | None
               ) -> list[StudyRun]:
    """Description at every planned shot count, one run per count."""
    return [StudyRun({"shots": n},
                     run_description(dataset, dataclasses.replace(base, shots=n), engine,
                                     scorer, scorer_error, judge, desc=f"{n}-shot",
                                     plan=plan),
                     DESCRIPTION, dataset.root, engine.backend.spec)
            for n, plan in plans.items()]


def plan_ablation(dataset: HcsuDataset, base: DiscriminationConfig,
                  modes: Sequence[DescriptionMode], limit: int | None = None
                  ) -> dict[DescriptionMode, list[PlannedItem]]:
    """Questions for each description mode, before any model call (raises
    :class:`HcsuConfigError` when a mode cannot be met)."""
    return {mode: plan_discrimination(dataset, dataclasses.replace(base, descriptions=mode),
                                      limit) for mode in modes}


def description_ablation(dataset: HcsuDataset, base: DiscriminationConfig,
                         plans: dict[DescriptionMode, list[PlannedItem]], engine: Engine
                         ) -> list[StudyRun]:
    """Discrimination with each planned candidate-description mode (Table 5)."""
    return [StudyRun({"descriptions": mode},
                     run_discrimination(dataset, dataclasses.replace(base, descriptions=mode),
                                        engine, desc=f"{mode} descriptions", plan=plan),
                     DISCRIMINATION, dataset.root, engine.backend.spec)
            for mode, plan in plans.items()]


def prepare_conditions(wild: Path, work: Path, canonical: Path | None = None,
                       workers: int | None = None) -> dict[str, Path]:
    """Folders of the three Table 4 conditions: the raw Wild images, their Wild-Resize
    copy (made under ``work/wild-resize``) and the canonical copy (``canonical``, or made
    under ``work/canonical``; a given ``canonical`` folder is used as it is).

    A made copy follows ``wild`` as it is now: an existing image is reused only when it
    was made, with the same settings, from the same source file (same path, size,
    mtime, ctime and inode, or else the same SHA-256 of its bytes); any other image is
    made again, and the images of sources that are gone are removed
    (:mod:`.canonical_sources`). So a re-run on unchanged data writes nothing, and an
    edited or switched ``--data`` (also under ``--resume``) never compares new Wild
    images with copies of old ones. Raises ``CanonicalizeError`` as
    :func:`~.canonical_batch.canonicalize_tree` does."""
    from heritage_eval.benchmarks.hcsu.canonical import CanonParams  # OpenCV: 'hcsu' extra

    resized = work / "wild-resize"
    canonicalize_tree(wild, resized, "wild-resize", CanonParams(), workers)
    if canonical is None:
        canonical = work / "canonical"
        canonicalize_tree(wild, canonical, "canonical", CanonParams(), workers)
    return {"Wild (Raw)": wild, "Wild-Resize": resized, "Origin": canonical}


def common_classes(datasets: Sequence[HcsuDataset]) -> list[HcsuDataset]:
    """Restrict every dataset to the classes present in all of them."""
    keys = set.intersection(*(set(d.classes) for d in datasets))
    if not keys:
        raise HcsuConfigError("the robustness conditions share no class")
    return [d.restrict(keys) for d in datasets]


def robustness(folders: dict[str, Path], disc: DiscriminationConfig | None,
               desc: DescriptionConfig | None, engines: dict[str, Engine],
               scorer: BertScorer | None, scorer_error: str | None, judge: Engine | None,
               limit: int | None = None, password: str | None = None
               ) -> tuple[list[Entry], list[StudyRun]]:
    """Both tasks on every condition, same classes and same questions (Table 4), listed
    (the command streams it: :mod:`.robustness_stream`, the same records and rows).

    ``engines``: ``"discrimination"`` / ``"description"`` -> engine (a task whose engine or
    config is missing is skipped). Returns ``(rows, runs)``; each row has
    ``condition``, ``discrimination`` and ``description`` per-domain summaries; each run
    is tagged with its ``condition`` and ``task``.
    """
    names = list(folders)
    datasets = common_classes([load_hcsu(folders[n], password=password) for n in names])
    rows: list[Entry] = []
    runs: list[StudyRun] = []
    for name, ds in zip(names, datasets, strict=True):
        row: Entry = {"condition": name, "data": str(folders[name])}
        if disc is not None and "discrimination" in engines:
            eng = engines["discrimination"]
            run = run_discrimination(ds, disc, eng, limit, desc=f"{name} discrimination")
            row["discrimination"] = run.per_domain
            row["discrimination_model"] = eng.backend.spec
            runs.append(StudyRun({"condition": name, "task": "discrimination"}, run,
                                 DISCRIMINATION, ds.root, eng.backend.spec))
        if desc is not None and "description" in engines:
            eng = engines["description"]
            drun = run_description(ds, desc, eng, scorer, scorer_error, judge, limit,
                                   desc=f"{name} description")
            row["description"] = drun.per_domain
            row["description_model"] = eng.backend.spec
            runs.append(StudyRun({"condition": name, "task": "description"}, drun,
                                 DESCRIPTION, ds.root, eng.backend.spec))
        rows.append(row)
    return rows, runs

