"""Multi-run studies: K sweep, shot sweep, description ablation (Table 5), robustness
(Table 4). Each returns ``results`` entries (as in ``summary.json``) plus the per-sample
records tagged with the run they belong to."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.canonical import CanonParams
from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree
from heritage_eval.benchmarks.hcsu.description import DescriptionConfig
from heritage_eval.benchmarks.hcsu.discrimination import DescriptionMode, DiscriminationConfig
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.pipeline import (
    Engine,
    run_description,
    run_discrimination,
)
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.metrics.bertscore import BertScorer

Entry = dict[str, Any]
#: Calibration grids of the paper (§3.2).
PAPER_KS = tuple(range(2, 11))
PAPER_SHOTS = (1, 2, 3, 4, 8)
CONDITIONS = ("Wild (Raw)", "Wild-Resize", "Origin")


def _tag(records: list[Entry], **tags: Any) -> list[Entry]:
    return [{**tags, **r} for r in records]


def k_sweep(dataset: HcsuDataset, base: DiscriminationConfig, ks: Sequence[int],
            engine: Engine, limit: int | None = None
            ) -> tuple[list[Entry], list[Entry], list[Entry]]:
    """Discrimination at every K in ``ks``. Returns ``(results, skipped, records)``;
    a K the data cannot support is listed in ``skipped`` with the reason."""
    results: list[Entry] = []
    skipped: list[Entry] = []
    records: list[Entry] = []
    for k in ks:
        try:
            run = run_discrimination(dataset, dataclasses.replace(base, k=k), engine, limit,
                                     desc=f"K={k}")
        except HcsuConfigError as exc:
            skipped.append({"k": k, "reason": str(exc)})
            print(f"skipped K={k}: {exc}", file=sys.stderr)
            continue
        results.append({"model": engine.backend.spec, "per_domain": run.per_domain,
                        **run.extra})
        records += _tag(run.records, k=k)
    return results, skipped, records


def shot_sweep(dataset: HcsuDataset, base: DescriptionConfig, shots: Sequence[int],
               engine: Engine, scorer: BertScorer | None, scorer_error: str | None,
               judge: Engine | None, limit: int | None = None
               ) -> tuple[list[Entry], list[Entry], list[Entry]]:
    """Description at every shot count. Returns ``(results, skipped, records)``."""
    results: list[Entry] = []
    skipped: list[Entry] = []
    records: list[Entry] = []
    for n in shots:
        try:
            run = run_description(dataset, dataclasses.replace(base, shots=n), engine, scorer,
                                  scorer_error, judge, limit, desc=f"{n}-shot")
        except HcsuConfigError as exc:
            skipped.append({"shots": n, "reason": str(exc)})
            print(f"skipped {n} shots: {exc}", file=sys.stderr)
            continue
        results.append({"model": engine.backend.spec, "per_domain": run.per_domain,
                        **run.extra})
        records += _tag(run.records, shots=n)
    return results, skipped, records


def description_ablation(dataset: HcsuDataset, base: DiscriminationConfig,
                         modes: Sequence[DescriptionMode], engine: Engine,
                         limit: int | None = None) -> tuple[list[Entry], list[Entry]]:
    """Discrimination with each candidate-description mode (Table 5)."""
    results: list[Entry] = []
    records: list[Entry] = []
    for mode in modes:
        run = run_discrimination(dataset, dataclasses.replace(base, descriptions=mode),
                                 engine, limit, desc=f"{mode} descriptions")
        results.append({"model": engine.backend.spec, "per_domain": run.per_domain,
                        **run.extra})
        records += _tag(run.records, descriptions=mode)
    return results, records


def prepare_conditions(wild: Path, work: Path, canonical: Path | None = None,
                       workers: int | None = None) -> dict[str, Path]:
    """Folders of the three Table 4 conditions: the raw Wild images, their Wild-Resize
    copy (made under ``work/wild-resize``) and the canonical copy (``canonical``, or made
    under ``work/canonical``). Making a copy is idempotent."""
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
               ) -> tuple[list[Entry], list[Entry]]:
    """Both tasks on every condition, same classes and same questions (Table 4).

    ``engines``: ``"discrimination"`` / ``"description"`` -> engine (a task whose engine or
    config is missing is skipped). Returns ``(rows, records)``; each row has
    ``condition``, ``discrimination`` and ``description`` per-domain summaries.
    """
    names = list(folders)
    datasets = common_classes([load_hcsu(folders[n], password=password) for n in names])
    rows: list[Entry] = []
    records: list[Entry] = []
    for name, ds in zip(names, datasets, strict=True):
        row: Entry = {"condition": name, "data": str(folders[name])}
        if disc is not None and "discrimination" in engines:
            run = run_discrimination(ds, disc, engines["discrimination"], limit,
                                     desc=f"{name} discrimination")
            row["discrimination"] = run.per_domain
            row["discrimination_model"] = engines["discrimination"].backend.spec
            records += _tag(run.records, condition=name, task="discrimination")
        if desc is not None and "description" in engines:
            drun = run_description(ds, desc, engines["description"], scorer, scorer_error,
                                   judge, limit, desc=f"{name} description")
            row["description"] = drun.per_domain
            row["description_model"] = engines["description"].backend.spec
            records += _tag(drun.records, condition=name, task="description")
        rows.append(row)
    return rows, records


def plot_k_sweep(results: Sequence[Entry], path: Path) -> Path:
    """Accuracy per K with the chance level 1/K (PNG at ``path``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = [int(r["k"]) for r in results]
    scored = [(int(r["k"]), 100 * float(r["avg_accuracy"])) for r in results
              if r.get("avg_accuracy") is not None]
    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=120)
    ax.plot([k for k, _ in scored], [a for _, a in scored], "o-", label="Avg. Acc")
    ax.plot(ks, [100 / k for k in ks], "--", color="gray", label="chance (1/K)")
    ax.set_xlabel("K (candidates)")
    ax.set_ylabel("accuracy (%)")
    ax.set_xticks(ks)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
