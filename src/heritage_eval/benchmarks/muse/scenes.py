"""Scene categories for Scene Classification (task 12).

Paper: the ground-truth scene labels were grouped into 13 categories, and each question's
three negatives are one label from each of three categories other than the true one's.
Here the grouping is a shipped data table (``data/scene_categories.csv``: 13 categories
with example labels; ``data/scene_category_descriptions.csv``: one sentence per category,
see ``data/README.md``). Each dataset label is assigned, in this order of precedence:

1. ``curator`` — the label is in the curator's ``label,category`` CSV
   (``scene_classification.assign`` knob);
2. ``table`` — the label is one of the table's example labels (a project table with the
   same columns can replace the shipped one: ``scene_classification.table`` knob);
3. ``embedding`` — the score of category *c* is
   ``½·cos(label, description of c) + ½·mean cos(label, example labels of c)``
   (:mod:`.textembed` embeddings; a category without a description uses its name). The
   best category is taken only when it leads the runner-up by at least ``min_margin``;
4. ``unassigned`` — otherwise. The label's *candidates* are every category scoring within
   ``min_margin`` of the best (at least two). No category is guessed: the label is listed
   in the header and in a warning for the curator, it is never used as a negative, and its
   own question takes no negative from any candidate category.

Comparing with descriptions and members rather than with the bare category name, plus
the margin, is what makes the result independent of float noise: on the real sample
the nearest category *name* won by 0.00003-0.0004 for two labels and flipped between
machines. Matching of labels (table, curator file) ignores case and repeated spaces.
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

#: Margin recorded in the header to this many decimals (decisions use the exact value).
MARGIN_DECIMALS = 3


def _read_data(name: str, path: str | Path | None) -> tuple[str, str]:
    """Text of ``path``, or of the shipped ``data/<name>`` when ``path`` is ``None``."""
    if path is None:
        return name, (resources.files("heritage_eval.benchmarks.muse") / "data"
                      / name).read_text(encoding="utf-8")
    return str(path), Path(path).read_text(encoding="utf-8")


def _rows(name: str, path: str | Path | None, columns: tuple[str, str]
          ) -> list[tuple[str, str]]:
    where, text = _read_data(name, path)
    reader = csv.DictReader(io.StringIO(text))
    if not set(columns) <= set(reader.fieldnames or ()):
        raise ValueError(f"scene table {where}: needs columns {','.join(columns)}")
    return [(r[columns[0]].strip(), r[columns[1]].strip()) for r in reader
            if (r[columns[0]] or "").strip()]


def scene_table(path: str | Path | None = None) -> list[tuple[str, str]]:
    """Rows ``(category, label)`` of a ``category,label`` CSV (default: the shipped
    ``data/scene_categories.csv``). Raises ``ValueError`` if the columns are missing."""
    return _rows("scene_categories.csv", path, ("category", "label"))


def category_descriptions(path: str | Path | None = None) -> dict[str, str]:
    """Category → description (default: ``data/scene_category_descriptions.csv``)."""
    return dict(_rows("scene_category_descriptions.csv", path, ("category", "description")))


def fold(label: str) -> str:
    """Matching key of a label: case-folded, whitespace collapsed."""
    return " ".join(label.casefold().split())


def curator_assignments(path: str | Path, categories: Iterable[str]) -> dict[str, str]:
    """Folded label → category from a ``label,category`` CSV. Raises ``ValueError`` for
    missing columns, an unknown category or one label given two categories."""
    known = set(categories)
    out: dict[str, str] = {}
    for n, (label, cat) in enumerate(_rows("", path, ("label", "category")), start=2):
        if cat not in known:
            raise ValueError(f"scene_classification.assign {path}, line {n}: unknown "
                             f"category {cat!r} for {label!r}; known: {sorted(known)}")
        if out.get(fold(label), cat) != cat:
            raise ValueError(f"scene_classification.assign {path}, line {n}: {label!r} "
                             f"given both {out[fold(label)]!r} and {cat!r}")
        out[fold(label)] = cat
    return out


@dataclass(frozen=True)
class Assignment:
    """How one dataset label got its category. ``candidates``: best-scoring categories,
    best first (embedding: best and runner-up; unassigned: all within the margin);
    ``margin``: best score minus runner-up score (embedding and unassigned only)."""

    category: str | None
    how: str
    candidates: tuple[str, ...] = ()
    margin: float | None = None

    def header_entry(self) -> dict[str, object]:
        entry: dict[str, object] = {"category": self.category, "how": self.how}
        if self.margin is not None:
            entry["margin"] = round(self.margin, MARGIN_DECIMALS)
            entry["candidates"] = list(self.candidates)
        return entry


@dataclass(frozen=True)
class SceneTaxonomy:
    """``category_of``: label → category for table labels and *assigned* dataset labels;
    ``assignments``: every dataset label (including unassigned ones); ``min_margin`` and
    ``unknown_curator``: curator-file labels found in no annotation."""

    category_of: dict[str, str]
    assignments: dict[str, Assignment]
    min_margin: float = 0.0
    unknown_curator: tuple[str, ...] = ()

    @property
    def how(self) -> dict[str, str]:
        """Dataset label → ``table`` / ``curator`` / ``embedding`` / ``unassigned``."""
        return {label: a.how for label, a in self.assignments.items()}

    @property
    def categories(self) -> list[str]:
        return sorted(set(self.category_of.values()))

    def labels_by_category(self) -> dict[str, list[str]]:
        """Category → sorted labels (unassigned labels are in no category)."""
        out: dict[str, list[str]] = {}
        for label, cat in sorted(self.category_of.items()):
            out.setdefault(cat, []).append(label)
        return out

    def excluded_for(self, label: str) -> set[str]:
        """Categories no negative of ``label``'s question may come from: its own, or all
        its candidates when it is unassigned."""
        a = self.assignments.get(label)
        if a is not None and a.category is None:
            return set(a.candidates)
        return {self.category_of[label]}

    def unassigned(self) -> dict[str, Assignment]:
        return {label: a for label, a in sorted(self.assignments.items())
                if a.category is None}

    def header_entries(self) -> dict[str, dict[str, object]]:
        """The header's ``source.scene_categories``: label → category, how, and for
        embedding / unassigned labels the margin and candidate categories."""
        return {label: a.header_entry() for label, a in sorted(self.assignments.items())}

    def warnings(self) -> list[str]:
        """One line per unassigned label and per unused curator-file label."""
        out = [f"scene_classification: scene label {label!r} left unassigned: candidate "
               f"categories {list(a.candidates)} are within {a.margin:.{MARGIN_DECIMALS}f} "
               f"of each other (min_margin {self.min_margin}); its question takes no "
               "negative from them and it is never a negative. Assign it with "
               "--set scene_classification.assign=FILE (CSV label,category)"
               for label, a in self.unassigned().items()]
        out += [f"scene_classification.assign: label {label!r} is in no annotation (ignored)"
                for label in self.unknown_curator]
        return out


def category_scores(labels: list[str], embed: Embedder, table: list[tuple[str, str]],
                    descriptions: dict[str, str]) -> tuple[list[str], np.ndarray]:
    """Sorted categories and the ``(len(labels), n_categories)`` scores of the module
    docstring (float64)."""
    categories = sorted({cat for cat, _ in table})
    described = [descriptions.get(c, c) for c in categories]
    examples = sorted({label for _, label in table})
    texts = [*described, *examples, *labels]
    vec = np.asarray(embed(texts), dtype=np.float64)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    d, e, lab = (vec[:len(described)], vec[len(described):len(described) + len(examples)],
                 vec[len(described) + len(examples):])
    ex_cos = lab @ e.T
    index = {x: i for i, x in enumerate(examples)}
    members = np.zeros((len(examples), len(categories)))
    for cat, label in table:
        members[index[label], categories.index(cat)] = 1.0
    members /= np.maximum(members.sum(axis=0, keepdims=True), 1.0)
    return categories, 0.5 * (lab @ d.T) + 0.5 * (ex_cos @ members)


def _decide(scores: np.ndarray, categories: list[str], min_margin: float) -> Assignment:
    order = sorted(range(len(categories)), key=lambda j: (-scores[j], categories[j]))
    if len(order) == 1:
        return Assignment(categories[0], "embedding", (categories[0],))
    best, second = order[0], order[1]
    margin = float(scores[best] - scores[second])
    if margin >= min_margin:
        return Assignment(categories[best], "embedding",
                          (categories[best], categories[second]), margin)
    near = tuple(categories[j] for j in order if scores[best] - scores[j] < min_margin)
    return Assignment(None, "unassigned", near, margin)


def build_scene_taxonomy(dataset_labels: Iterable[str], embed: Embedder,
                         table_path: str | Path | None = None, min_margin: float = 0.005,
                         assign_path: str | Path | None = None,
                         descriptions_path: str | Path | None = None) -> SceneTaxonomy:
    """Assign every dataset scene label (module docstring). Raises ``ValueError`` for an
    unreadable table or curator file."""
    table = scene_table(table_path)
    categories = sorted({cat for cat, _ in table})
    curator = curator_assignments(assign_path, categories) if assign_path else {}
    category_of = {label: cat for cat, label in table}
    in_table = {fold(label): cat for cat, label in table}
    assignments: dict[str, Assignment] = {}
    unknown: list[str] = []
    labels = sorted(set(dataset_labels))
    for label in labels:
        if fold(label) in curator:
            assignments[label] = Assignment(curator[fold(label)], "curator")
        elif fold(label) in in_table:
            assignments[label] = Assignment(in_table[fold(label)], "table")
        else:
            unknown.append(label)
    if unknown:
        cats, scores = category_scores(unknown, embed, table,
                                       category_descriptions(descriptions_path))
        for label, row in zip(unknown, scores, strict=True):
            assignments[label] = _decide(row, cats, min_margin)
    for label, a in assignments.items():
        if a.how == "curator":  # the curator overrides a table row of the same label
            for other in [x for x in category_of if fold(x) == fold(label)]:
                del category_of[other]
        if a.category is not None:
            category_of[label] = a.category
    seen = {fold(label) for label in labels}
    unused = tuple(sorted(k for k in curator if k not in seen))
    return SceneTaxonomy(category_of, assignments, min_margin, unused)
