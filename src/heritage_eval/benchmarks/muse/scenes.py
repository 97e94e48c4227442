"""Scene categories for Scene Classification (task 12).

Paper: the ground-truth scene labels were grouped into 13 categories, and each question's
three negatives are one label from each of three categories other than the true one's.
Here the grouping is a shipped data table (``data/scene_categories.csv``: 13 categories
with example labels, see ``data/README.md``). A dataset label found in the table
(case-insensitive) takes its row's category; any other label takes the category whose
*name* is nearest by embedding cosine (:mod:`.textembed`). (Checked on the real sample:
nearest category name placed 6 of 7 labels sensibly, nearest table label only 3 of 7, e.g.
"dim domestic interior" went to "shop interior".) Negatives are drawn from the table labels
plus the dataset labels mapped to the other categories. A project-specific table with the
same columns can replace the shipped one (``scene_classification.table`` knob).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from heritage_eval.benchmarks.muse.textembed import Embedder


def scene_table(path: str | Path | None = None) -> list[tuple[str, str]]:
    """Rows ``(category, label)`` of a ``category,label`` CSV (default: the shipped
    ``data/scene_categories.csv``). Raises ``ValueError`` if the columns are missing."""
    if path is None:
        text = (resources.files("heritage_eval.benchmarks.muse") / "data"
                / "scene_categories.csv").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    if not {"category", "label"} <= set(reader.fieldnames or ()):
        raise ValueError(f"scene table {path}: needs columns category,label")
    return [(r["category"].strip(), r["label"].strip()) for r in reader]


@dataclass(frozen=True)
class SceneTaxonomy:
    """``category_of``: label → category (table and dataset labels); ``how``: for each
    dataset label, ``"table"`` or ``"nearest_category"``."""

    category_of: dict[str, str]
    how: dict[str, str]

    @property
    def categories(self) -> list[str]:
        return sorted(set(self.category_of.values()))

    def labels_by_category(self) -> dict[str, list[str]]:
        """Category → sorted labels."""
        out: dict[str, list[str]] = {}
        for label, cat in sorted(self.category_of.items()):
            out.setdefault(cat, []).append(label)
        return out


def build_scene_taxonomy(dataset_labels: Iterable[str], embed: Embedder,
                         table_path: str | Path | None = None) -> SceneTaxonomy:
    """Assign every dataset scene label to a category of :func:`scene_table`."""
    table = scene_table(table_path)
    category_of = {label: cat for cat, label in table}
    folded = {label.casefold(): label for _, label in table}
    how: dict[str, str] = {}
    unknown: list[str] = []
    for label in sorted(set(dataset_labels)):
        if label.casefold() in folded:
            category_of[label] = category_of[folded[label.casefold()]]
            how[label] = "table"
        else:
            unknown.append(label)
    if unknown:
        categories = sorted({cat for cat, _ in table})
        ref = np.asarray(embed(categories), dtype=np.float64)
        vec = np.asarray(embed(unknown), dtype=np.float64)
        nearest = np.argmax(vec @ ref.T, axis=1)
        for label, j in zip(unknown, nearest, strict=True):
            category_of[label] = categories[int(j)]
            how[label] = "nearest_category"
    return SceneTaxonomy(category_of, how)
