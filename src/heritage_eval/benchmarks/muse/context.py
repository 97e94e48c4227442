"""What a generator sees for one image: the annotation, the whole corpus, shared
resources (culture clusters, scene categories), knobs, seeded generators and assets."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from heritage_eval.benchmarks.muse.annotation import Box, ImageAnnotation
from heritage_eval.benchmarks.muse.assets import AssetWriter, draw_boxes
from heritage_eval.benchmarks.muse.clusters import CultureClusters
from heritage_eval.benchmarks.muse.params import GenerationParams
from heritage_eval.benchmarks.muse.scenes import SceneTaxonomy
from heritage_eval.core.images import load_image
from heritage_eval.core.types import stable_hash

T = TypeVar("T")


def seeded_rng(*key: Any) -> random.Random:
    """``random.Random`` seeded from the SHA-256 of ``key`` (e.g. seed, image id, task, n)."""
    return random.Random(int(stable_hash(list(key)), 16))


@dataclass(frozen=True)
class Skip:
    """A task produced nothing for an image; ``reason`` is counted in the header."""

    reason: str


class Corpus:
    """All valid annotations (sorted by image id) with flat pools for cross-image
    distractors; ``image_paths`` maps image id → absolute image file."""

    def __init__(self, annotations: Sequence[ImageAnnotation],
                 image_paths: dict[str, Path]) -> None:
        self.annotations = sorted(annotations, key=lambda a: a.image_id)
        self.by_id = {a.image_id: a for a in self.annotations}
        self.image_paths = image_paths
        self.image_ids = [a.image_id for a in self.annotations]
        self.descriptions = [(a.image_id, x.description) for a in self.annotations
                             for x in a.activities if x.description]
        self.object_names = [(a.image_id, o.name) for a in self.annotations for o in a.objects]
        self.categories = [(a.image_id, c.category) for a in self.annotations
                           for c in a.characters]
        self.entities: list[tuple[str, str, Box]] = []
        for a in self.annotations:
            self.entities += [(a.image_id, a.entity_text(r.id), r.box) for r in a.entities()]
        self.interactions = [(a.image_id, i) for a in self.annotations
                             for i in a.remote_interactions]

    def sample_other(self, pool: Sequence[tuple[str, T]] | Sequence[Any], image_id: str,
                     k: int, rng: random.Random,
                     accept: Callable[[Any], bool] | None = None) -> list[Any]:
        """Up to ``k`` distinct entries of ``pool`` (tuples whose first item is an image
        id) from images other than ``image_id`` that pass ``accept``. Random probing first
        (fast on large pools), then an exact filtered sample."""
        def ok(entry: Any) -> bool:
            return bool(entry[0] != image_id and (accept is None or accept(entry)))

        picked: list[int] = []
        if pool:
            for _ in range(20 * k):
                j = rng.randrange(len(pool))
                if j not in picked and ok(pool[j]):
                    picked.append(j)
                    if len(picked) == k:
                        return [pool[i] for i in picked]
        rest = [i for i, e in enumerate(pool) if i not in picked and ok(e)]
        picked += rng.sample(rest, min(k - len(picked), len(rest)))
        return [pool[i] for i in picked]


@dataclass
class Resources:
    """Dataset-level structures built once per run."""

    culture: CultureClusters | None = None
    scenes: SceneTaxonomy | None = None


@dataclass
class ImageContext:
    """Inputs of every generator for one image. ``image_ref`` is the artwork's reference in
    the question file (``@images/<path in the images folder>``); ``image_path`` the
    absolute file."""

    ann: ImageAnnotation
    corpus: Corpus
    resources: Resources
    params: GenerationParams
    seed: int
    image_ref: str
    image_path: Path
    assets: AssetWriter
    _pixels: np.ndarray | None = field(default=None, repr=False)

    def rng(self, task: str, n: int = 0) -> random.Random:
        """Generator seeded from (seed, image id, task, question index)."""
        return seeded_rng(self.seed, self.ann.image_id, task, n)

    def pixels(self) -> np.ndarray:
        """The artwork as H×W×3 uint8 RGB (loaded once; raises ``ImageLoadError``)."""
        if self._pixels is None:
            self._pixels = np.asarray(load_image(self.image_path))
        return self._pixels

    def qid(self, group: str, n: int) -> str:
        """Question id ``{image_id}:{group}:{n}``."""
        return f"{self.ann.image_id}:{group}:{n}"

    def task_params(self, task: str, **extra: Any) -> dict[str, Any]:
        """The task's knobs as JSON plus question-specific ``extra`` values."""
        out: dict[str, Any] = self.params.for_task(task).model_dump(mode="json")
        out["draw_boxes"] = self.params.draw_boxes
        out.update(extra)
        return out

    def images_for(self, name: str, boxes: Sequence[tuple[str, Box]]) -> list[str]:
        """Images of a turn that refers to ``boxes``: the artwork, then (with
        ``draw_boxes``) a copy with the boxes drawn, saved as asset ``name``."""
        if not self.params.draw_boxes or not boxes:
            return [self.image_ref]
        drawn = draw_boxes(self.pixels(), boxes)
        return [self.image_ref, self.assets.save(self.ann.image_id, name, drawn)]

    def fmt(self, box: Box) -> str:
        from heritage_eval.benchmarks.muse.prompts import fmt_box

        return fmt_box(box, self.params.box_decimals)
