"""``muse assemble``: a generated question pool → a frozen benchmark of N questions per task.

The MUSE paper (§3, §3.2) assembles 200 questions per task over its images, keeping
artistic styles, scene themes and question difficulty diverse. ``muse generate`` emits
every question the annotations allow; this step samples from that pool:

1. :func:`~.assemble_pool.scan_pool` reads the pool in one pass (candidates with their
   group, tasks, difficulty stratum and byte offset; SHA-256 of the file);
2. :func:`apply_strata` gives every candidate its image's style and theme
   (:mod:`.assemble_strata`: ``--strata`` CSV, then ``--annotations`` export, then the
   pool's scene-classification questions);
3. per group (each task; tasks 1–4 together as the affective dialogue), with a generator
   seeded from (seed, group) only, :mod:`.assemble_alloc` chooses ``min(N, available)``
   questions per task: ``balanced`` (default; hierarchical least-filled-first round robin
   over style → theme → difficulty → image, with a per-image cap) or ``random``
   (uniform; the sampler for a human study as in the paper's Fig. 11);
4. the chosen questions are read again and validated in full, then written as a frozen
   question file with its own assets folder (:mod:`.assemble_write`) and the balance
   report (:mod:`.assemble_report`).

Same pool, options and seed ⇒ byte-identical question file, assets and reports.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from heritage_eval import __version__
from heritage_eval.benchmarks.muse.assemble_alloc import (
    GroupChoice,
    allocate_balanced,
    allocate_random,
    group_rng,
)
from heritage_eval.benchmarks.muse.assemble_pool import Candidate, Pool, read_chosen, scan_pool
from heritage_eval.benchmarks.muse.assemble_report import group_report, task_rows, write_report
from heritage_eval.benchmarks.muse.assemble_strata import (
    AFFECTIVE,
    UNKNOWN,
    read_export_strata,
    read_strata_csv,
    unmatched_ids,
)
from heritage_eval.benchmarks.muse.assemble_write import write_frozen
from heritage_eval.benchmarks.muse.taxonomy import AFFECTIVE_DIALOGUE, TASK_IDS
from heritage_eval.core.images import file_digest

STRATEGIES: tuple[str, ...] = ("balanced", "random")
#: Default multiplier of the fair per-image share that caps one image's questions.
DEFAULT_IMAGE_SLACK = 1.5


class AssemblyShort(RuntimeError):
    """``strict`` and some task cannot reach N; nothing was written."""


@dataclass
class AssemblyResult:
    """Paths written, the report (as in the JSON file) and warnings."""

    out_path: Path
    assets_dir: Path
    report_json: Path
    report_md: Path
    report: dict[str, Any]
    n_questions: int = 0
    n_assets: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def short_tasks(self) -> dict[str, dict[str, Any]]:
        """Tasks that did not reach N: task → its report row."""
        return {t: r for t, r in self.report["tasks"].items() if r["short"]}


def apply_strata(pool: Pool, strata_csv: str | Path | None, annotations: str | Path | None,
                 warnings: list[str]) -> dict[str, dict[str, int]]:
    """Set every candidate's ``style`` and ``theme``; returns, per dimension, how many of
    the pool's images each source gave (``csv``, ``annotations``, ``pool``,
    ``unknown``). Raises :class:`~.assemble_strata.StrataError` for an unreadable
    source; a CSV image id absent from the pool, or an export sharing no image with it,
    is a warning."""
    images = sorted({c.image_id for c in pool.candidates})
    table = read_strata_csv(strata_csv) if strata_csv else {}
    export = read_export_strata(annotations, pool.header.source.get("scene_categories") or {}
                                ) if annotations else {}
    if table and (note := unmatched_ids(table, images, str(strata_csv))):
        warnings.append(note)
    if annotations and not set(export) & set(images):
        warnings.append(f"--annotations {annotations}: none of its images is in the pool "
                        "(another export?); it gave no style or theme")
    chosen: dict[str, dict[str, str]] = {}
    sources: dict[str, Counter[str]] = {"style": Counter(), "theme": Counter()}
    for image in images:
        found = {"csv": table.get(image, {}), "annotations": export.get(image, {}),
                 "pool": {"theme": pool.themes[image]} if image in pool.themes else {}}
        chosen[image] = {}
        for dim in ("style", "theme"):
            where = next((k for k, v in found.items() if dim in v), "unknown")
            chosen[image][dim] = found[where][dim] if where != "unknown" else UNKNOWN
            sources[dim][where] += 1
    for c in pool.candidates:
        c.style, c.theme = chosen[c.image_id]["style"], chosen[c.image_id]["theme"]
    return {dim: dict(sorted(v.items())) for dim, v in sources.items()}


def _groups(pool: Pool) -> dict[str, list[Candidate]]:
    """Candidates per group, groups in paper task order (unknown groups last, sorted)."""
    by: dict[str, list[Candidate]] = defaultdict(list)
    for c in pool.candidates:
        by[c.group].append(c)
    order = [AFFECTIVE] + [t for t in TASK_IDS if t not in AFFECTIVE_DIALOGUE]
    return {g: by[g] for g in order + sorted(set(by) - set(order)) if g in by}


def choose(pool: Pool, per_task: int, seed: int, strategy: str = "balanced",
           image_slack: float = DEFAULT_IMAGE_SLACK, progress: bool = False
           ) -> list[GroupChoice]:
    """The choice of every group (module doc, step 3); candidates must carry their
    strata already (:func:`apply_strata`)."""
    out = []
    groups = _groups(pool)
    for group, cands in tqdm(groups.items(), desc="muse assemble", unit="task",
                             file=sys.stderr, disable=not progress, delay=0.5):
        rng = group_rng(seed, group)
        out.append(allocate_balanced(group, cands, per_task, rng, image_slack)
                   if strategy == "balanced" else allocate_random(group, cands, per_task, rng))
    return out


def _check(per_task: int, strategy: str, image_slack: float) -> None:
    if per_task < 1:
        raise ValueError(f"--per-task must be at least 1 (got {per_task})")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    if not image_slack >= 1.0:
        raise ValueError(f"--image-slack must be at least 1.0 (got {image_slack})")


def assemble(questions: str | Path, out: str | Path, per_task: int, seed: int = 0,
             strategy: str = "balanced", strata_csv: str | Path | None = None,
             annotations: str | Path | None = None,
             image_slack: float = DEFAULT_IMAGE_SLACK, progress: bool = False,
             strict: bool = False) -> AssemblyResult:
    """Assemble ``out`` from the pool ``questions`` (module doc); returns what was written.

    Raises ``ValueError`` for bad arguments (``per_task`` < 1, unknown strategy, slack
    < 1), :class:`~.questions.QuestionFileError` naming ``file:line`` for a bad pool
    line or a missing pool asset, :class:`~.assemble_strata.StrataError` for an
    unreadable strata source, :class:`AssemblyShort` when ``strict`` and a task cannot
    reach N, and ``OSError`` for unreadable / unwritable files; nothing is written then.
    """
    _check(per_task, strategy, image_slack)
    warnings: list[str] = []
    pool = scan_pool(questions, progress)
    sources = apply_strata(pool, strata_csv, annotations, warnings)
    choices = choose(pool, per_task, seed, strategy, image_slack, progress)
    chosen = [c for ch in choices for c in ch.chosen]
    tasks = list(dict.fromkeys([*pool.header.tasks, *(t for c in pool.candidates
                                                       for t in c.tasks)]))
    by_group = _groups(pool)
    rows = task_rows(tasks, pool.candidates, chosen, per_task)
    short = {t: r for t, r in rows.items() if r["short"]}
    if strict and short:
        raise AssemblyShort(f"--strict: {len(short)} task(s) cannot reach N = {per_task}: "
                            + ", ".join(f"{t} ({r['available']} in the pool)"
                                        for t, r in short.items()))
    assembly: dict[str, Any] = {
        "assembler_version": __version__, "strategy": strategy, "seed": seed,
        "per_task": per_task, "image_slack": image_slack if strategy == "balanced" else None,
        "pool": Path(questions).name, "pool_sha256": pool.sha256,
        "pool_n_questions": len(pool.candidates),
        "strata_csv": Path(strata_csv).name if strata_csv else None,
        "strata_csv_sha256": file_digest(strata_csv) if strata_csv else None,
        "annotations": Path(annotations).name if annotations else None,
        "annotations_sha256": file_digest(annotations) if annotations else None,
        "strata_sources": sources,
        "questions_per_task": {t: r["chosen"] for t, r in rows.items()},
        "short_tasks": {t: {"available": r["available"], "chosen": r["chosen"]}
                        for t, r in short.items()},
        "rng": "numpy.random.default_rng(int(stable_hash(['muse-assemble', seed, group], "
               "64), 16)) per group",
    }
    out = Path(out)
    report = {
        "question_file": out.name, "pool": pool.path.name, "pool_sha256": pool.sha256,
        "strategy": strategy, "seed": seed, "per_task": per_task,
        "image_slack": assembly["image_slack"], "strata_sources": sources,
        "tasks": rows, "warnings": warnings,
        "groups": {ch.group: group_report(by_group[ch.group], ch, strategy)
                   for ch in choices},
    }
    selected = read_chosen(pool, chosen)
    assets_dir, n_assets = write_frozen(out, pool, selected, assembly)
    js, md = write_report(out, report)
    return AssemblyResult(out_path=out, assets_dir=assets_dir, report_json=js, report_md=md,
                          report=report, n_questions=len(selected), n_assets=n_assets,
                          warnings=warnings)
